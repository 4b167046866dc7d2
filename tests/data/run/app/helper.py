NAME = "the helper beside main.py"
