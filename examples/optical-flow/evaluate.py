#!/usr/bin/env python3
"""The error of a computed flow against the true motion of make_sequence.py, and a picture of it.

  evaluate.py SEQ_DIR U.npy V.npy [--picture OUT.png] [--frame t]

Reports, over the well-conditioned pixels of the frames whose window of L = 20 frames lies inside the
movie: the average endpoint error |(u, v) - (u*, v*)| in pixels and the average angular error of
Barron et al. (the angle between (u, v, 1) and (u*, v*, 1)), in degrees. Well-conditioned: at least
N / 2 + 1 pixels from the edge (so no window reaches past it) and a structure tensor (a 15 x 15 box
sum of Ix^2, Ix Iy, Iy^2 of the frame, computed here) whose smaller eigenvalue is at least a tenth of
its median over the frame (edges and flat regions, where Lucas-Kanade is known to fail, are left out).

--picture writes the flow of one frame (default: the last) as a colour wheel (hue: direction, saturation:
speed relative to the fastest pixel), with arrows on a grid of 12 pixels, scaled by 4.
Prints `frames F, pixels P (of Q), endpoint error E px, angular error A deg`. With --max-endpoint-error
E, also `endpoint error within E px: ok` (exit 0) or `...: FAIL` (exit 1).
"""
import argparse
import colorsys
import os
import sys

import numpy as np
from PIL import Image, ImageDraw

L, M, N = 20, 15, 15


def box(a, r):
    """Sum over the (2r + 1)^2 box around each pixel, edges clamped."""
    p = np.pad(a, r, mode="edge")
    c = p.cumsum(0).cumsum(1)
    c = np.pad(c, ((1, 0), (1, 0)))
    k = 2 * r + 1
    return c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]


def well_conditioned(frame):
    iy, ix = np.gradient(frame.astype(np.float64))
    r = M // 2
    sxx, syy, sxy = box(ix * ix, r), box(iy * iy, r), box(ix * iy, r)
    half_trace = (sxx + syy) / 2
    smaller = half_trace - np.sqrt(np.maximum(half_trace ** 2 - (sxx * syy - sxy ** 2), 0))
    ok = smaller >= 0.1 * np.median(smaller)
    margin = N // 2 + 1
    ok[:margin] = ok[-margin:] = False
    ok[:, :margin] = ok[:, -margin:] = False
    return ok


def picture(u, v, path):
    h, w = u.shape
    speed = np.hypot(u, v)
    fastest = max(float(speed.max()), 1e-12)
    angle = (np.arctan2(-v, u) / (2 * np.pi)) % 1.0  # screen y points down
    rgb = np.zeros((h, w, 3), dtype=np.uint8)
    for y in range(h):
        for x in range(w):
            r, g, b = colorsys.hsv_to_rgb(angle[y, x], min(speed[y, x] / fastest, 1.0), 1.0)
            rgb[y, x] = (int(r * 255), int(g * 255), int(b * 255))
    scale = 4
    image = Image.fromarray(rgb).resize((w * scale, h * scale), Image.NEAREST)
    draw = ImageDraw.Draw(image)
    step = 12
    arrow = step * scale * 0.8 / fastest
    for y in range(step // 2, h, step):
        for x in range(step // 2, w, step):
            x0, y0 = (x + 0.5) * scale, (y + 0.5) * scale
            x1, y1 = x0 + u[y, x] * arrow, y0 + v[y, x] * arrow
            draw.line([(x0, y0), (x1, y1)], fill=(0, 0, 0), width=2)
            draw.ellipse([x1 - 2, y1 - 2, x1 + 2, y1 + 2], fill=(0, 0, 0))
    image.save(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("seq")
    parser.add_argument("u")
    parser.add_argument("v")
    parser.add_argument("--picture")
    parser.add_argument("--frame", type=int, default=-1)
    parser.add_argument("--max-endpoint-error", type=float)
    args = parser.parse_args()
    frames = np.load(os.path.join(args.seq, "I.npy"))
    truth = np.load(os.path.join(args.seq, "truth.npy"))
    u, v = np.load(args.u).astype(np.float64), np.load(args.v).astype(np.float64)
    if u.shape != frames.shape or v.shape != frames.shape:
        sys.exit(f"evaluate: u {u.shape} and v {v.shape} do not match the movie {frames.shape}")
    t_count = frames.shape[0]
    if t_count <= L:
        sys.exit(f"evaluate: {t_count} frames leave no frame with a full window of {L}")
    endpoint, angular, used = [], [], 0
    for t in range(L, t_count):
        ok = well_conditioned(frames[t])
        du, dv = u[t][ok] - truth[0][ok], v[t][ok] - truth[1][ok]
        endpoint.append(np.hypot(du, dv))
        dot = u[t][ok] * truth[0][ok] + v[t][ok] * truth[1][ok] + 1
        norms = np.sqrt((u[t][ok] ** 2 + v[t][ok] ** 2 + 1) * (truth[0][ok] ** 2 + truth[1][ok] ** 2 + 1))
        angular.append(np.degrees(np.arccos(np.clip(dot / norms, -1, 1))))
        used = ok.sum()
    epe = float(np.concatenate(endpoint).mean())
    ae = float(np.concatenate(angular).mean())
    print(f"frames {t_count - L}, pixels {used} (of {ok.size}), endpoint error {epe:.4f} px, "
          f"angular error {ae:.3f} deg")
    if args.picture:
        picture(u[args.frame], v[args.frame], args.picture)
    if args.max_endpoint_error is not None:
        ok = epe <= args.max_endpoint_error
        print(f"endpoint error within {args.max_endpoint_error} px: {'ok' if ok else 'FAIL'}")
        sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
