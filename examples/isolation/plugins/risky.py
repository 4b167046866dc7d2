# risky.py: a plugin with a C extension that can crash: loaded at the process level,
# in a worker process of its own, so a crash ends that process and not the host.
import ctypes
import os

import app

seen = []


def on_event(name):
    seen.append(name)
    print("risky runs in its own process:", os.getpid() != app.host_pid())
    app.log("risky saw %s (%d so far)" % (name, len(seen)))
    return len(seen)


def crash():
    ctypes.string_at(0)  # reads address 0: SIGSEGV (an access violation on Windows)
