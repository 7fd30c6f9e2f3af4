#!/usr/bin/env python3
"""Independent numpy evaluations of canny.poly, hough.poly and pyrlk.poly (the same definitions, written from the
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
  reference.py hough EDGES.npy COSINES.npy SINES.npy R LEAST VOTES.npy PEAKS.npy
                                                     compares hough.poly's votes and peaks with the
                                                     reference's: equal (see hough()); prints ok or FAIL
  reference.py draw-lines IMG.npy PEAKS.npy OUT.png [--count 10]
                                                     the photograph with the strongest peaks' lines
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


def hough_tables(angles):
    """hough.poly's cosines and sines of theta_t = pi t / T, in float32 (its inputs)."""
    theta = np.pi * np.arange(angles) / angles
    return np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)


def hough_bins(height, width):
    """R: enough bins of one pixel for every rho, -R / 2 .. R / 2 (more than the diagonal)."""
    return 2 * int(np.ceil(np.hypot((width - 1) / 2, (height - 1) / 2))) + 1


def hough(edges, cosines, sines, bins, least):
    """The votes and the peaks of hough.poly. Every target computes the same bins: (x - xc) is a multiple
    of 1/2 below 2^12 and the cosines are float32, so each product is exact in float64 (at most 37
    significant bits), and a fused multiply-add rounds the same sum as a multiply and an add."""
    height, width = edges.shape
    ys, xs = np.nonzero(edges == 2)
    c, s = cosines.astype(np.float64), sines.astype(np.float64)
    # The program's arithmetic, in float64, in its order: ((x - xc) * c + (y - yc) * s) + R / 2.
    rho = (xs - (width - 1) / 2.0)[:, None] * c[None, :] + (ys - (height - 1) / 2.0)[:, None] * s[None, :] \
        + bins / 2.0
    at = np.floor(rho)
    angle = np.broadcast_to(np.arange(len(c))[None, :], at.shape)
    inside = (at >= 0) & (at < bins)
    votes = np.zeros((bins, len(c)), np.int64)
    np.add.at(votes, (at[inside].astype(np.int64), angle[inside]), 1)
    return votes, peaks_of(votes, least)


def peaks_of(votes, least):
    """Votes at least `least` above the neighbours before them and not below those after, 0 elsewhere."""
    bins, angles = votes.shape
    padded = np.zeros((bins + 2, angles + 2), np.int64)  # boundary zero around the votes
    padded[1:-1, 1:-1] = votes

    def near(dr, dt):
        return padded[1 + dr:1 + dr + bins, 1 + dt:1 + dt + angles]
    peak = (votes >= least) & (votes > near(0, -1)) & (votes >= near(0, 1))
    for dt in (-1, 0, 1):
        peak &= (votes > near(-1, dt)) & (votes >= near(1, dt))
    return np.where(peak, votes, 0)


def check_hough(args):
    edges = np.load(args.edges)
    cosines, sines = np.load(args.cosines), np.load(args.sines)
    want_votes, want_peaks = hough(edges, cosines, sines, args.bins, args.least)
    got_votes, got_peaks = np.load(args.votes).astype(np.int64), np.load(args.peaks).astype(np.int64)
    if got_votes.shape != want_votes.shape or got_peaks.shape != want_peaks.shape:
        print(f"hough: shapes {got_votes.shape} {got_peaks.shape}, expected {want_votes.shape}: FAIL")
        return 1
    wrong_votes = int(np.count_nonzero(got_votes != want_votes))
    wrong_peaks = int(np.count_nonzero(got_peaks != want_peaks))
    verdict = "ok" if wrong_votes == 0 and wrong_peaks == 0 else "FAIL"
    print(f"hough: {int(want_votes.sum())} votes, {int(np.count_nonzero(want_peaks))} peaks; {wrong_votes} "
          f"bins and {wrong_peaks} peaks differ: {verdict}")
    return 0 if verdict == "ok" else 1


def strongest_lines(peaks, count):
    """The `count` peaks with the most votes, as (votes, rho bin, angle), most first."""
    r, t = np.nonzero(peaks)
    order = np.argsort(-peaks[r, t], kind="stable")[:count]
    return [(int(peaks[r[k], t[k]]), int(r[k]), int(t[k])) for k in order]


def draw_lines(args):
    """The photograph (grey, H x W in [0, 1]) with the strongest lines in red, as a PNG."""
    from PIL import Image
    grey = np.load(args.img)
    height, width = grey.shape
    peaks = np.load(args.peaks)
    bins, angles = peaks.shape
    rgb = np.repeat((np.clip(grey, 0, 1) * 255).astype(np.uint8)[:, :, None], 3, axis=2)
    for _, r, t in strongest_lines(peaks, args.count):
        theta, rho = np.pi * t / angles, r + 0.5 - bins / 2.0  # the bin's centre
        c, s = np.cos(theta), np.sin(theta)
        # Points x0 + k (-s, c) of the line, one pixel apart along it, clipped to the image.
        x0, y0 = (width - 1) / 2.0 + rho * c, (height - 1) / 2.0 + rho * s
        k = np.arange(-2 * (width + height), 2 * (width + height))
        xs, ys = np.rint(x0 - k * s).astype(int), np.rint(y0 + k * c).astype(int)
        keep = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
        rgb[ys[keep], xs[keep]] = (255, 0, 0)
    Image.fromarray(rgb).save(args.png)
    return 0


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
    h = commands.add_parser("hough")
    for name in ("edges", "cosines", "sines"):
        h.add_argument(name)
    h.add_argument("bins", type=int)
    h.add_argument("least", type=int)
    for name in ("votes", "peaks"):
        h.add_argument(name)
    d = commands.add_parser("draw-lines")
    d.add_argument("img")
    d.add_argument("peaks")
    d.add_argument("png")
    d.add_argument("--count", type=int, default=10)
    args = parser.parse_args()
    if args.command == "hough":
        return check_hough(args)
    if args.command == "draw-lines":
        return draw_lines(args)
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
