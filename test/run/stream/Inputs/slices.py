#!/usr/bin/env python3
"""Helpers of stream.test.

slices.py make DIR T N [SEED]      writes DIR/x.npy (f32 [T, N]) and DIR/w.npy (f32 [N]), random
slices.py same A.npy B.npy          prints "same" when the arrays are equal element for element (shapes too)
slices.py fifo-in PATH FILE        writes FILE into the named pipe PATH a few bytes at a time (run in the
                                   background: the reader gets the slices as they come)
"""
import sys
import time

import numpy as np


def main(argv):
    if argv[0] == "make":
        folder, t, n = argv[1], int(argv[2]), int(argv[3])
        rng = np.random.default_rng(int(argv[4]) if len(argv) > 4 else 1)
        np.save(f"{folder}/x.npy", rng.standard_normal((t, n)).astype(np.float32))
        np.save(f"{folder}/w.npy", rng.standard_normal(n).astype(np.float32))
        return 0
    if argv[0] == "same":
        a, b = np.load(argv[1]), np.load(argv[2])
        if a.shape != b.shape or a.dtype != b.dtype or not np.array_equal(a, b):
            print(f"differ: {a.dtype}{a.shape} and {b.dtype}{b.shape}")
            return 1
        print("same")
        return 0
    if argv[0] == "fifo-in":
        data = open(argv[2], "rb").read()
        with open(argv[1], "wb", buffering=0) as pipe:
            for start in range(0, len(data), 1000):
                pipe.write(data[start:start + 1000])
                time.sleep(0.001)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
