this first line is not Python: -x skips it
print("after the first line")
