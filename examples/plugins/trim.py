"""trim: strips trailing whitespace and squeezes runs of blank lines into one
(blank lines at the start are dropped)."""
import textproc

_previous_blank = True


def on_line(line):
    global _previous_blank
    text = line.text.rstrip()
    if text != line.text:
        textproc.count("trim.lines stripped")
        line.text = text
    if text:
        _previous_blank = False
    elif _previous_blank:
        textproc.count("trim.blank lines dropped")
        line.drop()
    else:
        _previous_blank = True
