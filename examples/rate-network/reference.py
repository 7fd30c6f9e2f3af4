#!/usr/bin/env python3
"""The rate networks in float64, written apart from polyc: T steps of
r[t, j] = r[t-1, j] + (max(sum over j's connections of w * r[t-1, pre] + baseline[j], 0) - r[t-1, j]) / tau
from the inputs make_network.py writes (pre/w of a fixed fan-in, or row/col/w of CSR), compared with an
executable's rT: prints the largest difference relative to the largest rate and "ok" when it is at most
the tolerance (float32 sums: 1e-5 by default).

  reference.py DIR STEPS RT.npy [--tolerance X]
"""
import argparse
import os
import sys

import numpy as np

TAU = 10.0


def simulate(folder, steps):
    load = lambda name: np.load(os.path.join(folder, name + ".npy"))  # noqa: E731
    r = load("r0").astype(np.float64)
    baseline = load("baseline").astype(np.float64)
    w = load("w").astype(np.float64)
    if os.path.exists(os.path.join(folder, "row.npy")):
        row, col = load("row"), load("col")
        owner = np.repeat(np.arange(len(r)), np.diff(row))  # the neuron each connection feeds
        presynaptic = lambda rates: np.bincount(owner, weights=w * rates[col], minlength=len(r))  # noqa: E731
    else:
        pre = load("pre")
        presynaptic = lambda rates: (w * rates[pre]).sum(axis=1) if pre.size else np.zeros(len(r))  # noqa: E731
    for _ in range(1, steps):
        r = r + (np.maximum(presynaptic(r) + baseline, 0.0) - r) / TAU
    return r


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("steps", type=int)
    parser.add_argument("result")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    expected = simulate(args.folder, args.steps)
    got = np.load(args.result).astype(np.float64)
    if got.shape != expected.shape:
        print(f"shape {got.shape}, expected {expected.shape}")
        return 1
    difference = np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-30) if got.size else 0.0
    print(f"rT: relative difference {difference:.3g}: {'ok' if difference <= args.tolerance else 'FAIL'}")
    return 0 if difference <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
