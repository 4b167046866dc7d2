"""censor: hides banned words behind a mask (-o censor.mask=X, default '*').

A package plugin: its word list lives in the sibling module words.py, imported
relatively, so another plugin's words.py can never be picked up instead.
"""
import re

import textproc

from .words import BANNED

_WORD = re.compile(r"[A-Za-z']+")
_mask = "*"


def on_load():
    global _mask
    _mask = textproc.option("censor.mask", "*")


def _hide(match):
    word = match.group(0)
    if word.lower() not in BANNED:
        return word
    textproc.count("censor.words hidden")
    return _mask * len(word)


def on_line(line):
    line.text = _WORD.sub(_hide, line.text)
