# Writes more than a pipe holds into `| head -1`: python raises BrokenPipeError.
import os
import sys
try:
    for i in range(200000):
        print("line", i)
    sys.stdout.flush()
except BrokenPipeError:
    sys.stderr.write("BrokenPipeError\n")
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(3)
