"""repl_session.py: drives an interactive Python through a pseudo-terminal, as a user
at a terminal would, and checks what it shows.

    python3 repl_session.py SESSION NEW_REPL -- COMMAND [ARG...]

SESSION is "plain" (COMMAND alone gives a REPL: banner, prompt, an expression's repr,
history, completion, a multi-line block, Ctrl-C at the prompt, Ctrl-D) or "inspect"
(COMMAND ran `x = 21` first: -i or PYTHONINSPECT; then x * 2 at the prompt, Ctrl-D).
NEW_REPL is 1 when the version's console is the new one (3.13+, _pyrepl), else 0.

Every step waits for the text it expects (60 s at most, on a loaded box): nothing
sleeps, nothing is sampled once.  Escape sequences (the new REPL redraws its line)
and carriage returns are removed before matching.  HOME is a fresh folder, so the
history starts empty and the user's is left alone.  Exit status 0 when every step
saw what it expected; 1 with the transcript otherwise.
"""
import os
import pty
import re
import select
import shutil
import struct
import sys
import tempfile
import time

WAIT = 60.0
ESCAPES = re.compile(rb"\x1b\[[0-9;?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


class Failed(Exception):
    pass


class Terminal:
    def __init__(self, argv, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pty is its controlling terminal
            try:
                import fcntl
                import termios
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.raw = b""   # everything read
        self.seen = 0    # how much of the cleaned text earlier steps consumed
        self.status = None

    def text(self):
        return ESCAPES.sub(b"", self.raw).replace(b"\r", b"").decode("utf-8", "replace")

    def read_some(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([self.fd], [], [], left)
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the other side is closed
            chunk = b""
        if not chunk:
            return False
        self.raw += chunk
        return True

    def expect(self, pattern, what):
        """Waits until pattern matches the text after what earlier steps consumed."""
        regex = re.compile(pattern, re.S)
        deadline = time.monotonic() + WAIT
        while True:
            m = regex.search(self.text(), self.seen)
            if m:
                self.seen = m.end()
                return m
            if not self.read_some(deadline):
                raise Failed("%s: never saw %r" % (what, pattern))

    def send(self, data):
        os.write(self.fd, data.encode())

    def interrupt(self, what):
        """Ctrl-C until KeyboardInterrupt shows, as a user presses it again.

        readline (the console before 3.13) prints the prompt before it enters select();
        a SIGINT in between only sets Python's flag and select() then waits for a key:
        CPython's own race, seen on a loaded box.  A second Ctrl-C interrupts select()."""
        regex = re.compile(r"KeyboardInterrupt")
        deadline = time.monotonic() + WAIT
        pause = 0.5
        while True:
            self.send("\x03")
            again = min(time.monotonic() + pause, deadline)
            while time.monotonic() < again:
                m = regex.search(self.text(), self.seen)
                if m:
                    self.seen = m.end()
                    return m
                if not self.read_some(again) and time.monotonic() < again:
                    raise Failed("%s: the terminal closed" % what)
            if time.monotonic() >= deadline:
                raise Failed("%s: never saw %r" % (what, regex.pattern))
            pause = min(pause * 2, 8.0)

    def wait_exit(self, what):
        deadline = time.monotonic() + WAIT
        while self.read_some(deadline):
            pass
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
                return os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") \
                    else (os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status))
            select.select([], [], [], 0.05)  # the child is closing: poll its status
        raise Failed("%s: the process did not end" % what)


PROMPT = r">>> "


def plain(t, new_repl):
    t.expect(r"Python 3\.\d+.*\n", "the banner")
    t.expect(PROMPT, "the first prompt")
    t.send("import sys; '_pyrepl' in sys.modules\r")
    t.expect(r"\n%s\n" % ("True" if new_repl else "False"), "which console runs")
    t.expect(PROMPT, "the prompt after it")
    t.send("6 * 7\r")
    t.expect(r"\n42\n", "an expression's repr")
    t.expect(PROMPT, "the prompt after it")
    # the up arrow as xterm sends it: in keypad mode (the new console turns it on) and not
    t.send("\x1bOA\r" if new_repl else "\x1b[A\r")
    t.expect(r"\n42\n", "the history's last line run again")
    t.expect(PROMPT, "the prompt after it")
    t.send("sys.maxsi\t")  # completion: sys.maxsize (one match, not callable)
    t.expect(r"sys\.maxsize", "the completion of sys.maxsi")
    t.send(" > 2 ** 30\r")
    t.expect(r"\nTrue\n", "the completed expression's repr")
    t.expect(PROMPT, "the prompt after it")
    t.send("for i in range(3):\r")
    t.expect(r"\.\.\. ", "the continuation prompt")
    # the new console indents the block's lines itself
    t.send("print(i * i)\r" if new_repl else "    print(i * i)\r")
    t.expect(r"\.\.\. ", "the continuation prompt again")
    t.send("\r")
    t.expect(r"\n0\n1\n4\n", "the block's output")
    t.expect(PROMPT, "the prompt after the block")
    t.interrupt("KeyboardInterrupt at the prompt")
    t.expect(PROMPT, "the prompt after Ctrl-C")
    t.send("'still here'\r")
    t.expect(r"\n'still here'\n", "the console after Ctrl-C")
    t.expect(PROMPT, "the prompt")
    t.send("\x04")  # Ctrl-D
    return t.wait_exit("Ctrl-D")


def inspect(t, new_repl):
    t.expect(PROMPT, "the prompt after the code ran")
    t.send("x * 2\r")
    t.expect(r"\n42\n", "the code's variable")
    t.expect(PROMPT, "the prompt after it")
    t.send("\x04")
    return t.wait_exit("Ctrl-D")


def main():
    session, new_repl, sep, argv = sys.argv[1], sys.argv[2] == "1", sys.argv[3], sys.argv[4:]
    if sep != "--" or session not in ("plain", "inspect") or not argv:
        print(__doc__)
        return 2
    home = tempfile.mkdtemp(prefix="pyhost-repl-")
    env = dict(os.environ)
    for name in ("PYTHONSTARTUP", "PYTHON_HISTORY", "PYTHON_BASIC_REPL"):
        env.pop(name, None)
    env.update(HOME=home, TERM="xterm", NO_COLOR="1", PYTHON_COLORS="0")
    t = Terminal(argv, env)
    try:
        status = (plain if session == "plain" else inspect)(t, new_repl)
        if status != 0:
            raise Failed("exit status %s after Ctrl-D, not 0" % status)
    except Failed as e:
        print("%s\n--- command: %s\n--- what the terminal showed (escapes removed) ---\n%s"
              % (e, argv, t.text()))
        return 1
    finally:
        if t.status is None:
            try:
                os.kill(t.pid, 9)
                os.waitpid(t.pid, 0)
            except OSError:
                pass
        os.close(t.fd)
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
