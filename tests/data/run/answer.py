import sys
print(6 * 7, sys.argv)
