# counter.py: a well-behaved plugin, loaded into the host's own interpreter (the
# shared level).
import app

count = 0


def on_event(name):
    global count
    count += 1
    app.log("counter saw %s (%d so far)" % (name, count))
    return count
