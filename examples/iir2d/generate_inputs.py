#!/usr/bin/env python3
"""Writes random inputs of the 2D IIR example (iir2d.poly): x.npy (H x W, uniform in [0, 1)), a.npy
and b.npy (M x M), all float32, into DIR.

a (the FIR window) is uniform in [0, 1) normalised to sum 1. b (the feedback window) is uniform in
[-1, 1) with b[0, 0] = 0 (the equation skips it), scaled so that sum |b| = FEEDBACK (default 0.9).
FEEDBACK < 1 keeps the quarter-plane recursion stable: by induction over the points in any schedule
order, |y| <= max|x1| + FEEDBACK * max|y| of earlier points, so |y| <= max|x1| / (1 - FEEDBACK)
everywhere, whatever the image size (x1 is the FIR part, |x1| <= max|x| here).

generate_inputs.py --height H --width W --window M --seed S --out DIR [--feedback 0.9] [--no-x]
"""
import argparse
import os
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--height", type=int, required=True)
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--window", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", required=True, help="folder for x.npy, a.npy, b.npy")
    parser.add_argument("--feedback", type=float, default=0.9, help="sum of |b|, below 1")
    parser.add_argument("--no-x", action="store_true", help="only a.npy and b.npy (x from an image)")
    args = parser.parse_args()
    if args.height < 0 or args.width < 0 or args.window < 1:
        sys.exit("generate_inputs: need height, width >= 0 and window >= 1")
    if not 0 <= args.feedback < 1:
        sys.exit("generate_inputs: --feedback must be in [0, 1) for a stable recursion")

    rng = np.random.default_rng(args.seed)
    m = args.window
    a = rng.uniform(0.0, 1.0, size=(m, m))
    a /= a.sum()
    b = rng.uniform(-1.0, 1.0, size=(m, m))
    b[0, 0] = 0.0
    total = np.abs(b).sum()
    b = b * (args.feedback / total) if total > 0 else b
    os.makedirs(args.out, exist_ok=True)
    if not args.no_x:
        x = rng.uniform(0.0, 1.0, size=(args.height, args.width))
        np.save(os.path.join(args.out, "x.npy"), x.astype(np.float32))
    np.save(os.path.join(args.out, "a.npy"), a.astype(np.float32))
    np.save(os.path.join(args.out, "b.npy"), b.astype(np.float32))


if __name__ == "__main__":
    main()
