# tidy.py: a plugin in a sub-interpreter of its own (the interpreter level).  It
# monkeypatches json, which the host and the other plugins never see.
import json

import app

json.dumps = lambda *args, **kwargs: "tidy's json"
count = 0


def on_event(name):
    global count
    count += 1
    app.log("tidy saw %s (%d so far): %s" % (name, count, json.dumps(name)))
    return count
