#!/usr/bin/env python3
"""An independent numpy evaluation of canny.poly (the same definitions, written from the algorithm, not
from polyc's output, in float64), and a check of polyc's result against it:

  reference.py canny IMG.npy LOW HIGH OUT.npy        writes the reference edges (float32: 2, 1, 0)
  reference.py check IMG.npy LOW HIGH GOT.npy        compares GOT with the reference: a pixel may differ
                                                     only where a comparison that decides it (a
                                                     neighbour's magnitude, a threshold, a direction's
                                                     boundary) is a tie to within float32 rounding
                                                     (1e-5 of the magnitudes); prints the counts and ok,
                                                     or FAIL (exit 1)
"""
import argparse
import sys

import numpy as np


def shifted(a, dy, dx):
    """a[y + dy, x + dx] with the edges replicated (boundary clamp)."""
    h, w = a.shape
    ys = np.clip(np.arange(h) + dy, 0, h - 1)
    xs = np.clip(np.arange(w) + dx, 0, w - 1)
    return a[np.ix_(ys, xs)]


def canny(img, low, high):
    return canny_with_margins(img, low, high)[0]


def canny_with_margins(img, low, high):
    """The edges and, per pixel, the smallest gap of the comparisons that decided it (relative)."""
    img = img.astype(np.float64)
    taps = {-2: 1 / 16, -1: 4 / 16, 0: 6 / 16, 1: 4 / 16, 2: 1 / 16}
    across = sum(t * shifted(img, 0, k) for k, t in taps.items())
    blur = sum(t * shifted(across, k, 0) for k, t in taps.items())
    gx = (shifted(blur, -1, 1) + 2 * shifted(blur, 0, 1) + shifted(blur, 1, 1)) - \
         (shifted(blur, -1, -1) + 2 * shifted(blur, 0, -1) + shifted(blur, 1, -1))
    gy = (shifted(blur, 1, -1) + 2 * shifted(blur, 1, 0) + shifted(blur, 1, 1)) - \
         (shifted(blur, -1, -1) + 2 * shifted(blur, -1, 0) + shifted(blur, -1, 1))
    mag = np.abs(gx) + np.abs(gy)
    t22 = 0.41421356
    horizontal = np.abs(gy) <= t22 * np.abs(gx)
    vertical = ~horizontal & (np.abs(gx) <= t22 * np.abs(gy))
    down_right = ~horizontal & ~vertical & (gx * gy > 0)
    down_left = ~horizontal & ~vertical & ~down_right
    kept = np.zeros(img.shape, bool)
    for where, (dy, dx) in ((horizontal, (0, 1)), (vertical, (1, 0)), (down_right, (1, 1)), (down_left, (1, -1))):
        peak = (mag > shifted(mag, -dy, -dx)) & (mag >= shifted(mag, dy, dx))
        kept |= where & peak
    edges = np.where(kept & (mag > high), 2.0, np.where(kept & (mag > low), 1.0, 0.0))
    scale = np.maximum(1.0, np.abs(mag))
    gaps = [np.abs(mag - high), np.abs(mag - low), np.abs(np.abs(gy) - t22 * np.abs(gx)),
            np.abs(np.abs(gx) - t22 * np.abs(gy)), np.abs(gx * gy)]
    for dy, dx in ((0, 1), (1, 0), (1, 1), (1, -1)):
        gaps += [np.abs(mag - shifted(mag, -dy, -dx)), np.abs(mag - shifted(mag, dy, dx))]
    # Below the low threshold a pixel is 0 whatever else holds: only that threshold decides it.
    margin = np.where(mag < low, np.abs(mag - low), np.minimum.reduce(gaps)) / scale
    return edges.astype(np.float32), margin


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    c = commands.add_parser("canny")
    c.add_argument("img")
    c.add_argument("low", type=float)
    c.add_argument("high", type=float)
    c.add_argument("out")
    k = commands.add_parser("check")
    k.add_argument("img")
    k.add_argument("low", type=float)
    k.add_argument("high", type=float)
    k.add_argument("got")
    args = parser.parse_args()
    if args.command == "canny":
        np.save(args.out, canny(np.load(args.img), args.low, args.high))
        return 0
    want, margin = canny_with_margins(np.load(args.img), args.low, args.high)
    got = np.load(args.got)
    if got.shape != want.shape:
        print(f"check: shape {got.shape}, expected {want.shape}: FAIL")
        return 1
    differ = got != want
    unexplained = int(np.count_nonzero(differ & (margin > 1e-5)))
    verdict = "ok" if unexplained == 0 else "FAIL"
    print(f"check: {int(np.count_nonzero(differ))} of {want.size} pixels differ, {unexplained} of them not at "
          f"a tie ({int(np.count_nonzero(want == 2))} strong, {int(np.count_nonzero(want == 1))} weak in the "
          f"reference): {verdict}")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
