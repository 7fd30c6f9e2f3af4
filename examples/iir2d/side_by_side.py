#!/usr/bin/env python3
"""Puts the 2D IIR example's input and output next to each other in one PNG, each normalised to
0..255 on its own (the filter's DC gain is up to 1 / (1 - sum|b|), so their ranges differ):
side_by_side.py x.npy y.npy OUT.png."""
import argparse
import sys

import numpy as np
from PIL import Image


def to_gray8(array, name):
    if array.ndim != 2:
        sys.exit(f"side_by_side: {name} has shape {array.shape}, expected a 2D image")
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        sys.exit(f"side_by_side: {name} has non-finite values")
    low, high = array.min(), array.max()
    scale = 255.0 / (high - low) if high > low else 0.0
    return np.round((array - low) * scale).astype(np.uint8)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("png")
    parser.add_argument("--gap", type=int, default=8, help="pixels of white between the two")
    args = parser.parse_args()
    left = to_gray8(np.load(args.input), args.input)
    right = to_gray8(np.load(args.output), args.output)
    height = max(left.shape[0], right.shape[0])
    canvas = np.full((height, left.shape[1] + args.gap + right.shape[1]), 255, dtype=np.uint8)
    canvas[: left.shape[0], : left.shape[1]] = left
    canvas[: right.shape[0], left.shape[1] + args.gap :] = right
    Image.fromarray(canvas, mode="L").save(args.png)
    print(f"side_by_side: wrote {args.png} ({canvas.shape[1]} x {canvas.shape[0]})")


if __name__ == "__main__":
    main()
