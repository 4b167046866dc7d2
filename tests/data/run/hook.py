import sys


def hook(kind, value, tb):
    print("the script's hook:", kind.__name__, value, tb.tb_frame.f_code.co_filename)


sys.excepthook = hook
raise ValueError("handled by the hook")
