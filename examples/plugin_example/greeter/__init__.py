"""A package plugin that defines the same names as hello.py: no collision."""
from .util import shout

seen = []


def on_event(kind, payload=None):
    seen.append(kind)
    return shout(kind) if payload is None else shout("%s %s" % (kind, payload))
