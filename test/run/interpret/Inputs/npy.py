#!/usr/bin/env python3
"""Helper of the `polyc run` lit tests: writes small .npy inputs from literals, prints outputs for
FileCheck, and checks exit statuses.

npy.py save PATH DTYPE VALUES      VALUES a Python literal (a number or nested lists); DTYPE f32, f64, i32
npy.py fill PATH DTYPE N VALUE     N copies of VALUE
npy.py show PATH...                prints `NAME DTYPE SHAPE: VALUES` per file (floats with repr; of more than
                                   8 values the first and last 3)
npy.py status N -- COMMAND...      runs COMMAND; exit 1 with a message unless its exit status is N
"""
import ast
import os
import subprocess
import sys

import numpy as np

DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32}


def save(path, dtype, values):
    np.save(path, np.array(ast.literal_eval(values), dtype=DTYPES[dtype]))


def show(paths):
    for path in paths:
        array = np.load(path)
        name = os.path.basename(path)[:-len(".npy")]
        values = str(array.tolist())
        if array.size > 8:
            flat = array.reshape(-1).tolist()
            values = "[" + ", ".join(map(repr, flat[:3])) + ", ..., " + ", ".join(map(repr, flat[-3:])) + "]"
        print(f"{name} {array.dtype} {array.shape}: {values}")


def status(expected, command):
    sys.stdout.flush()
    result = subprocess.run(command)
    if result.returncode != expected:
        print(f"expected exit status {expected}, got {result.returncode}", flush=True)
        return 1
    return 0


def main(argv):
    if argv[0] == "save":
        save(argv[1], argv[2], argv[3])
        return 0
    if argv[0] == "fill":
        np.save(argv[1], np.full(int(argv[3]), ast.literal_eval(argv[4]), dtype=DTYPES[argv[2]]))
        return 0
    if argv[0] == "show":
        show(argv[1:])
        return 0
    if argv[0] == "status":
        return status(int(argv[1]), argv[3:] if argv[2] == "--" else argv[2:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
