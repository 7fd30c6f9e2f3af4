#!/usr/bin/env python3
"""Converts an image (PNG or anything Pillow reads) to a grayscale float32 .npy in [0, 1], the
input x of the 2D IIR example: image_to_npy.py IMAGE OUT.npy."""
import argparse
import sys

import numpy as np
from PIL import Image


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("image")
    parser.add_argument("out")
    args = parser.parse_args()
    try:
        image = Image.open(args.image)
        image.load()
    except OSError as error:
        sys.exit(f"image_to_npy: cannot read {args.image}: {error}")
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        pixels = np.asarray(image, dtype=np.float64) / 65535.0
    else:
        pixels = np.asarray(image.convert("L"), dtype=np.float64) / 255.0
    np.save(args.out, pixels.astype(np.float32))
    print(f"image_to_npy: {args.image} -> {args.out}: float32 {pixels.shape[0]} x {pixels.shape[1]}")


if __name__ == "__main__":
    main()
