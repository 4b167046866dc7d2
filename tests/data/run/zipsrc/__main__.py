import sys
print("__main__.py of a directory", __name__, sys.argv, sys.path[0] == sys.argv[0] or sys.path[0])
