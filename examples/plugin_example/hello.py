"""A single-file plugin: its sibling _greeting.py is reached by a relative import."""
from . import _greeting

seen = []


def on_load():
    return "hello loaded"


def on_event(kind, payload=None):
    seen.append(kind)
    return _greeting.phrase(kind, len(seen))
