"""Does not load: a syntax error on line 4."""


def on_line(line)
    pass
