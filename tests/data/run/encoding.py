# The default text encoding, as a script sees it.  "flags" adds sys.flags.utf8_mode.
import codecs
import locale
import os
import subprocess
import sys


def name(encoding):
    return codecs.lookup(encoding).name


if "flags" in sys.argv:
    print("utf8_mode", getattr(sys.flags, "utf8_mode", None))
print("preferred", name(locale.getpreferredencoding(False)))
with open(os.devnull) as f:
    print("open", name(f.encoding))
print("filesystem", name(sys.getfilesystemencoding()))
here = os.path.dirname(os.path.abspath(__file__))
try:
    with open(os.path.join(here, "euro.txt")) as f:
        print("read", ascii(f.read()))
except UnicodeDecodeError as e:
    print("read fails", e.reason)
if "subprocess" in sys.argv:
    try:
        out = subprocess.run(["cat", os.path.join(here, "euro.txt")], stdout=subprocess.PIPE,
                             universal_newlines=True).stdout
        print("subprocess", ascii(out))
    except UnicodeDecodeError as e:
        print("subprocess fails", e.reason)
