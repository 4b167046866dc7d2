# Run as `app/main.py` from tests/data/run: what python gives a script.
import os
import sys

import helper  # beside this file: sys.path[0] is the script's folder

print(helper.NAME)
print("__file__", __file__)
print("__loader__", type(__loader__).__name__, __loader__.name)
print("__spec__", __spec__, "__cached__", __cached__)
print("sys.path[0]", sys.path[0] == os.path.dirname(os.path.realpath(__file__)))
print("argv", sys.argv)
os.chdir("/")
print("after chdir", os.path.exists(__file__))
