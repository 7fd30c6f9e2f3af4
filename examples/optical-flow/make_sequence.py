#!/usr/bin/env python3
"""A movie with known motion for lkflow.poly, made from a real photograph, and the kernels that go with it.

  make_sequence.py OUT_DIR [--image PNG] [--size WxH] [--frames T] [--motion KIND:VALUES] [--png]

The photograph (default: the CC0 camera picture of examples/iir2d/data) is converted to grey, smoothed,
and moved from frame to frame about the centre of the frame by one of

  translate:DX,DY   pixels per frame (x right, y down)
  rotate:DEG        degrees per frame, counter-clockwise as seen on the screen
  zoom:FACTOR       scale per frame (1.01 grows 1% a frame)

each frame sampled bilinearly from the photograph at the inverse of the motion, so the true flow is
exact. Written to OUT_DIR: I.npy (float32 [T, H, W], grey levels in [0, 255]: lkflow.poly's
singularity test |det| > 1e-9 is absolute, so the scale matters), truth.npy (float32 [2, H, W]: the
displacement (u, v) from frame t - 1 to frame t at each pixel of frame t, the same for every t), and
the per-pixel kernels gx.npy, gy.npy [H, W, 15] and gt.npy [H, W, 20]: Gaussian windows whose width
grows with the distance from the centre (seed 000's eccentricity-dependent receptive fields) and a
causal exponential window over the last 20 frames, each normalised to sum 1. With --png, the frames
are also written as OUT_DIR/frames/0000.png, ... (8-bit grey).
"""
import argparse
import os
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_IMAGE = os.path.join(HERE, "..", "iir2d", "data", "camera.png")
L, M, N = 20, 15, 15


def photograph(path):
    try:
        image = Image.open(path)
        image.load()
    except OSError as error:
        sys.exit(f"make_sequence: cannot read {path}: {error}")
    grey = np.asarray(image.convert("L"), dtype=np.float64)
    # A light blur: bilinear sampling of sharp edges makes derivatives the model cannot follow.
    kernel = np.array([1, 4, 6, 4, 1], dtype=np.float64) / 16
    for axis in (0, 1):
        grey = np.apply_along_axis(lambda row: np.convolve(row, kernel, mode="same"), axis, grey)
    return grey


def bilinear(image, ys, xs):
    """image sampled at real coordinates (clamped to the edges)."""
    h, w = image.shape
    ys = np.clip(ys, 0, h - 1)
    xs = np.clip(xs, 0, w - 1)
    y0 = np.minimum(np.floor(ys).astype(int), h - 2)
    x0 = np.minimum(np.floor(xs).astype(int), w - 2)
    fy, fx = ys - y0, xs - x0
    top = image[y0, x0] * (1 - fx) + image[y0, x0 + 1] * fx
    bottom = image[y0 + 1, x0] * (1 - fx) + image[y0 + 1, x0 + 1] * fx
    return top * (1 - fy) + bottom * fy


def motion(kind, values):
    """The map from frame t - 1 to frame t about the origin, as (A, b): p_t = A p_(t-1) + b, p = (x, y)."""
    if kind == "translate":
        dx, dy = values
        return np.eye(2), np.array([dx, dy])
    if kind == "rotate":
        (deg,) = values
        a = np.radians(deg)
        # Counter-clockwise on the screen, where y points down.
        return np.array([[np.cos(a), np.sin(a)], [-np.sin(a), np.cos(a)]]), np.zeros(2)
    if kind == "zoom":
        (s,) = values
        return np.eye(2) * s, np.zeros(2)
    sys.exit(f"make_sequence: unknown motion '{kind}' (translate, rotate or zoom)")


def kernels(h, w):
    """Per-pixel separable windows: spatial Gaussians widening with eccentricity, a causal temporal one."""
    yy, xx = np.mgrid[0:h, 0:w]
    r = np.hypot((yy - (h - 1) / 2) / max(h, 1), (xx - (w - 1) / 2) / max(w, 1)) * 2  # 0 centre, ~1.4 corner
    sigma = 2.0 + 2.0 * r
    offsets = np.arange(N) - N // 2
    g = np.exp(-0.5 * (offsets[None, None, :] / sigma[:, :, None]) ** 2)
    g /= g.sum(axis=2, keepdims=True)
    tau = 4.0 + 2.0 * r
    gt = np.exp(-np.arange(L)[None, None, :] / tau[:, :, None])
    gt /= gt.sum(axis=2, keepdims=True)
    return g.astype(np.float32), g.astype(np.float32), gt.astype(np.float32)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--image", default=DEFAULT_IMAGE)
    parser.add_argument("--size", default="160x120")
    parser.add_argument("--frames", type=int, default=32)
    parser.add_argument("--motion", default="translate:0.5,0.25")
    parser.add_argument("--png", action="store_true")
    args = parser.parse_args()
    w, h = (int(v) for v in args.size.split("x"))
    kind, _, text = args.motion.partition(":")
    A, b = motion(kind, [float(v) for v in text.split(",")] if text else [])
    source = photograph(args.image)
    sh, sw = source.shape
    if w > sw or h > sh:
        sys.exit(f"make_sequence: {w}x{h} is larger than the photograph ({sw}x{sh})")

    # Frame coordinates centred on the frame; the frame's centre sits on the photograph's centre.
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    p = np.stack([xs - (w - 1) / 2, ys - (h - 1) / 2])  # (2, H, W), x first
    Ainv = np.linalg.inv(A)
    frames = np.empty((args.frames, h, w), dtype=np.float32)
    q = p.copy()  # where frame t's pixels were in frame 0: q = M^-t p
    for t in range(args.frames):
        frames[t] = bilinear(source, q[1] + (sh - 1) / 2, q[0] + (sw - 1) / 2)
        q = np.einsum("ij,jhw->ihw", Ainv, q - b[:, None, None])
    # The displacement from t - 1 to t at frame t's pixel p: p - M^-1 p.
    before = np.einsum("ij,jhw->ihw", Ainv, p - b[:, None, None])
    truth = (p - before).astype(np.float32)

    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "I.npy"), frames)
    np.save(os.path.join(args.out, "truth.npy"), truth)
    gx, gy, gt = kernels(h, w)
    for name, array in (("gx", gx), ("gy", gy), ("gt", gt)):
        np.save(os.path.join(args.out, name + ".npy"), array)
    if args.png:
        os.makedirs(os.path.join(args.out, "frames"), exist_ok=True)
        for t in range(args.frames):
            Image.fromarray(np.clip(np.round(frames[t]), 0, 255).astype(np.uint8)).save(
                os.path.join(args.out, "frames", f"{t:04d}.png"))
    print(f"make_sequence: {args.frames} frames of {w}x{h}, {args.motion}, in {args.out}")


if __name__ == "__main__":
    main()
