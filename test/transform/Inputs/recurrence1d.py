"""Inputs and a plain float64 reference for test/transform/hoist-1d.poly:
y[i] = sum(r in 0..M) a[r] * x[i - r] + 0.25 * x[i] + 0.5 * y[i - 1], reads before 0 being 0.

recurrence1d.py inputs DIR N M    writes DIR/x.npy (N values) and DIR/a.npy (M values), float32
recurrence1d.py check DIR Y.npy   prints "ok" when Y matches the reference within 1e-5 relative
"""
import sys

import numpy as np


def reference(x, a):
    x = x.astype(np.float64)
    a = a.astype(np.float64)
    y = np.zeros(len(x))
    for i in range(len(x)):
        value = 0.0
        for r in range(len(a)):
            if i - r >= 0:
                value += a[r] * x[i - r]
        value += 0.25 * x[i]
        if i >= 1:
            value += 0.5 * y[i - 1]
        y[i] = value
    return y


def main():
    mode, folder = sys.argv[1], sys.argv[2]
    if mode == "inputs":
        rng = np.random.default_rng(5)
        np.save(folder + "/x.npy", rng.random(int(sys.argv[3]), dtype=np.float32))
        np.save(folder + "/a.npy", (rng.random(int(sys.argv[4]), dtype=np.float32) / int(sys.argv[4])).astype(np.float32))
        return 0
    y = np.load(sys.argv[3])
    expected = reference(np.load(folder + "/x.npy"), np.load(folder + "/a.npy"))
    error = np.max(np.abs(y - expected)) / max(np.max(np.abs(expected)), 1e-30)
    print("ok" if y.shape == expected.shape and error <= 1e-5 else f"FAIL: relative error {error}")
    return 0


sys.exit(main())
