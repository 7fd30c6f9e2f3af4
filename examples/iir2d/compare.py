#!/usr/bin/env python3
"""Compares an output of the 2D IIR example with the reference: compare.py y.npy y_ref.npy
[--rtol 1e-5]. Prints the largest absolute error relative to the largest reference magnitude and
exits 1 when it is above rtol (or the shapes differ, or a value is not finite)."""
import argparse
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("output")
    parser.add_argument("reference")
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()
    got = np.load(args.output).astype(np.float64)
    want = np.load(args.reference).astype(np.float64)
    if got.shape != want.shape:
        print(f"compare: shape {got.shape} of {args.output} differs from {want.shape} of {args.reference}")
        return 1
    if not np.all(np.isfinite(got)):
        print(f"compare: {args.output} has non-finite values")
        return 1
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    error = float(np.max(np.abs(got - want))) if want.size else 0.0
    relative = error / scale if scale > 0 else error
    verdict = "ok" if relative <= args.rtol else "FAIL"
    print(f"compare: max abs error {error:.3e}, max |reference| {scale:.3e}, "
          f"relative {relative:.3e} (rtol {args.rtol:.1e}): {verdict}")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
