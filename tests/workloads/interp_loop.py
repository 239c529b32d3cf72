# interp_loop.py - a pure-Python hot loop for test_jit_langs.sh: CPython
# 3.11 has no perf map (-X perf is 3.12's), so perf sees the interpreter
# (_PyEval_EvalFrameDefault) and not the Python function.  Argument: how
# long to run, in milliseconds.
import sys
import time


def spin(n):
    t = 0
    for i in range(n):
        t += i * i % 7
    return t


end = time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 1000) / 1000
while time.monotonic() < end:
    spin(100000)
