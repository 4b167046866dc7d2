def phrase(kind, n):
    return "%s #%d" % (kind, n)
