#!/usr/bin/env python3
"""Independent numpy evaluations of canny.poly and pyrlk.poly (the same definitions, written from the
algorithms, not from polyc's output, in float64), and checks of polyc's results against them:

  reference.py canny IMG.npy LOW HIGH OUT.npy [--hysteresis]
                                                     writes the reference edges (float32: 2, 1, 0),
                                                     before or after the hysteresis
  reference.py check IMG.npy LOW HIGH GOT.npy [--hysteresis]
                                                     compares GOT with the reference: a pixel may differ
                                                     only where a comparison that decides it (a
                                                     neighbour's magnitude, a threshold, a direction's
                                                     boundary) is a tie to within float32 rounding
                                                     (1e-5 of the magnitudes), or, after the hysteresis,
                                                     in a part of edge pixels that holds such a tie;
                                                     prints the counts and ok, or FAIL (exit 1)
  reference.py pyrlk A.npy B.npy U.npy V.npy [--truth TRUTH.npy]
                                                     compares polyc's flow with the reference's: at
                                                     least 99% of the pixels within 1e-3 px (the others
                                                     are where a 2 x 2 system is nearly singular, so
                                                     that float32 rounding moves the step), and prints
                                                     both endpoint errors against the true flow (TRUTH
                                                     [2, H, W], make_sequence.py) inside a margin of 16
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


NEIGHBOURS = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dy or dx]


def hysteresis(classes):
    """Weak pixels (1) joined to a strong one (2) through weak ones, 8-connected, become 2: a flood fill
    from every strong pixel (not canny.poly's rounds: the same fixed point, reached another way)."""
    out = classes.copy()
    h, w = out.shape
    stack = list(zip(*np.nonzero(out == 2)))
    while stack:
        y, x = stack.pop()
        for dy, dx in NEIGHBOURS:
            yy, xx = y + dy, x + dx
            if 0 <= yy < h and 0 <= xx < w and out[yy, xx] == 1:
                out[yy, xx] = 2
                stack.append((yy, xx))
    return out


def components(mask):
    """A label per pixel of `mask` (8-connected parts, numbered from 1), 0 elsewhere."""
    labels = np.zeros(mask.shape, np.int64)
    h, w = mask.shape
    count = 0
    for start in zip(*np.nonzero(mask)):
        if labels[start]:
            continue
        count += 1
        labels[start] = count
        stack = [start]
        while stack:
            y, x = stack.pop()
            for dy, dx in NEIGHBOURS:
                yy, xx = y + dy, x + dx
                if 0 <= yy < h and 0 <= xx < w and mask[yy, xx] and not labels[yy, xx]:
                    labels[yy, xx] = count
                    stack.append((yy, xx))
    return labels


def bilinear(a, ys, xs):
    """a at fractional positions, each corner clamped to the image (boundary clamp)."""
    h, w = a.shape
    y0, x0 = np.floor(ys), np.floor(xs)
    fy, fx = ys - y0, xs - x0
    y0, x0 = y0.astype(np.int64), x0.astype(np.int64)

    def at(yy, xx):
        return a[np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
    return ((1 - fy) * (1 - fx) * at(y0, x0) + fy * (1 - fx) * at(y0 + 1, x0) +
            (1 - fy) * fx * at(y0, x0 + 1) + fy * fx * at(y0 + 1, x0 + 1))


def window_sum(a, radius=3):
    return sum(shifted(a, dy, dx) for dy in range(-radius, radius + 1) for dx in range(-radius, radius + 1))


def half(a):
    """2 x 2 means: ((h + 1) // 2) x ((w + 1) // 2), the last row or column repeated when odd."""
    return 0.25 * sum(shifted(a, dy, dx)[::2, ::2] for dy in (0, 1) for dx in (0, 1))


def pyrlk(a, b, refinements=4, levels=3):
    firsts, seconds = [a.astype(np.float64)], [b.astype(np.float64)]
    for _ in range(levels - 1):
        firsts.append(half(firsts[-1]))
        seconds.append(half(seconds[-1]))
    u = v = None
    for level in reversed(range(levels)):
        first, second = firsts[level], seconds[level]
        h, w = first.shape
        if u is None:
            u, v = np.zeros((h, w)), np.zeros((h, w))
        else:  # twice the flow of the level above, at (y // 2, x // 2)
            u, v = 2 * u[np.arange(h)[:, None] // 2, np.arange(w)[None, :] // 2], \
                   2 * v[np.arange(h)[:, None] // 2, np.arange(w)[None, :] // 2]
        gx = 0.5 * (shifted(first, 0, 1) - shifted(first, 0, -1))
        gy = 0.5 * (shifted(first, 1, 0) - shifted(first, -1, 0))
        sxx, sxy, syy = window_sum(gx * gx), window_sum(gx * gy), window_sum(gy * gy)
        det = sxx * syy - sxy * sxy
        ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
        for _ in range(refinements):
            p, q = np.zeros((h, w)), np.zeros((h, w))
            for dy in range(-3, 4):  # the window moves by its centre's flow
                for dx in range(-3, 4):
                    e = bilinear(second, ys + dy + v, xs + dx + u) - shifted(first, dy, dx)
                    p += shifted(gx, dy, dx) * e
                    q += shifted(gy, dy, dx) * e
            solvable = np.abs(det) > 1e-6
            safe = np.where(solvable, det, 1.0)
            u = u + np.where(solvable, (sxy * q - syy * p) / safe, 0.0)
            v = v + np.where(solvable, (sxy * p - sxx * q) / safe, 0.0)
    return u, v


def check_pyrlk(args):
    a, b = np.load(args.a), np.load(args.b)
    want_u, want_v = pyrlk(a, b)
    got_u, got_v = np.load(args.u).astype(np.float64), np.load(args.v).astype(np.float64)
    if got_u.shape != want_u.shape or got_v.shape != want_v.shape:
        print(f"pyrlk: shapes {got_u.shape} {got_v.shape}, expected {want_u.shape}: FAIL")
        return 1
    distance = np.hypot(got_u - want_u, got_v - want_v)
    close = float(np.mean(distance <= 1e-3)) if distance.size else 1.0
    verdict = "ok" if close >= 0.99 else "FAIL"
    print(f"pyrlk: {100 * close:.2f}% of the pixels within 1e-3 px of the reference: {verdict}")
    if args.truth:
        truth = np.load(args.truth)
        inner = (slice(16, -16), slice(16, -16))
        for label, (uu, vv) in (("polyc", (got_u, got_v)), ("reference", (want_u, want_v))):
            epe = np.hypot(uu - truth[0], vv - truth[1])[inner]
            print(f"pyrlk: {label} endpoint error: median {np.median(epe):.3f} px, 90th percentile "
                  f"{np.percentile(epe, 90):.3f} px")
    return 0 if verdict == "ok" else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    c = commands.add_parser("canny")
    c.add_argument("img")
    c.add_argument("low", type=float)
    c.add_argument("high", type=float)
    c.add_argument("out")
    c.add_argument("--hysteresis", action="store_true", help="the edges after the hysteresis")
    k = commands.add_parser("check")
    k.add_argument("img")
    k.add_argument("low", type=float)
    k.add_argument("high", type=float)
    k.add_argument("got")
    k.add_argument("--hysteresis", action="store_true",
                   help="GOT is after the hysteresis (canny.poly with R rounds enough to finish it)")
    f = commands.add_parser("pyrlk")
    for name in ("a", "b", "u", "v"):
        f.add_argument(name)
    f.add_argument("--truth")
    args = parser.parse_args()
    if args.command == "pyrlk":
        return check_pyrlk(args)
    if args.command == "canny":
        classes = canny(np.load(args.img), args.low, args.high)
        np.save(args.out, hysteresis(classes) if args.hysteresis else classes)
        return 0
    want, margin = canny_with_margins(np.load(args.img), args.low, args.high)
    got = np.load(args.got)
    if got.shape != want.shape:
        print(f"check: shape {got.shape}, expected {want.shape}: FAIL")
        return 1
    tie = margin <= 1e-5
    if args.hysteresis:
        # A tie decides its pixel's class, and through it whether the part of edge pixels it belongs to
        # joins a strong one: every pixel of such a part may differ.
        want = hysteresis(want)
        parts = components((got != 0) | (want != 0))
        tie = np.isin(parts, np.unique(parts[tie & (parts > 0)])) | tie
    differ = got != want
    unexplained = int(np.count_nonzero(differ & ~tie))
    verdict = "ok" if unexplained == 0 else "FAIL"
    print(f"check: {int(np.count_nonzero(differ))} of {want.size} pixels differ, {unexplained} of them not at "
          f"a tie ({int(np.count_nonzero(want == 2))} strong, {int(np.count_nonzero(want == 1))} weak in the "
          f"reference): {verdict}")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
