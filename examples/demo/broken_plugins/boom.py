"""Raises on the third line: textproc disables it and goes on."""
import textproc


def on_line(line):
    if line.number == 3:
        return 1 / 0
    textproc.count("boom.lines seen")
