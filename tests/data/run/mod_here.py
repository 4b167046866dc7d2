import os
import sys
print("module", __name__, os.path.basename(__file__), os.path.basename(sys.argv[0]), sys.argv[1:],
      sys.path[0] == os.getcwd())
