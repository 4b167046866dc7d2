"""Child processes started from sys.executable (tests/cli_python_tests.cmake): which
program runs each, one line each.  "pyhost" when the process's command line holds the
pyhost program (run directly, or after a loader such as ld.so)."""
import multiprocessing
import os
import subprocess
import sys


def program():
    with open("/proc/self/cmdline", "rb") as f:
        words = f.read().split(b"\0")
    if any(os.path.basename(w) == b"pyhost" for w in words):
        return "pyhost"
    return os.path.basename(os.readlink("/proc/self/exe"))


def child_line(*options, **kw):
    out = subprocess.check_output([sys.executable] + list(options) + [__file__, "child"],
                                  universal_newlines=True, **kw)
    return out.strip()


def spawn():
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        print("spawn", pool.apply(program))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "parent"
    if mode == "child":
        print(program(), sys.flags.isolated, os.environ.get("a-b"))
        return
    if mode == "again":
        print("re-executed", program(), sys.argv[1:])
        spawn()
        return
    print("parent", program())
    print("subprocess", child_line())
    # a variable whose name is no shell identifier: no shell between may drop it (a
    # sanitizer build's options stay: they are the test's, not the environment's)
    env = {k: v for k, v in os.environ.items() if k.split("_")[0] in ("ASAN", "LSAN", "UBSAN")}
    env["a-b"] = "kept"
    print("subprocess, no environment", child_line("-I", "-X", "dev", env=env))
    sys.stdout.flush()
    if hasattr(sys, "orig_argv"):
        os.execv(sys.executable, sys.orig_argv + ["again"])
    print("no sys.orig_argv before 3.10")
    spawn()


if __name__ == "__main__":
    main()
