"""Numbers the lines: keeps working while the plugins around it fail."""
import textproc


def on_line(line):
    textproc.count("counter.lines")
    line.text = "%2d: %s" % (line.number, line.text)
