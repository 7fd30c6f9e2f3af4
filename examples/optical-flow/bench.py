#!/usr/bin/env python3
"""Frames per second of optical-flow executables (docs/performance.md, "Optical flow"): for each size,
random frames and per-pixel separable kernels (seed fixed), each executable run with --repeat K --json;
FPS = frames / median compute time (the sequence is uploaded before the timed region). Prints a markdown
table, one column per executable, and the FLOP rate of the first one:

  bench.py [--sizes 320x240,...] [--frames T] [--repeat K] [--peak GFLOPS] LABEL=EXE[@OUT] ...

An executable built with --stream (polyc build --stream) reads the frames from the .npy file and writes the
flow as it goes, so its time counts both: with @null its u and v go to /dev/null (the frames are read from
the page cache, uploaded, and the flow downloaded, overlapped with the steps); with @files to .npy files in
the work folder (--work-dir; renamed into place at the end). Without @OUT the flow is not written at all.

The FLOPs per frame count what the factored program computes per pixel: each of the 5 sums costs
M*N + M + L multiply-adds (the spatial part once per frame, then the window of L frames), plus the
5 products of derivatives; 2 FLOPs a multiply-add. --naive-flops counts the unfactored form instead
(5 sums of L*M*N terms with 4 multiplications and an add each) for comparison with seed 000.
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np

L, M, N = 20, 15, 15


def inputs(work, t, h, w):
    rng = np.random.default_rng(2011)
    files = {"I": rng.random((t, h, w), dtype=np.float32)}
    for name, k in (("gx", N), ("gy", M), ("gt", L)):
        files[name] = (rng.random((h, w, k), dtype=np.float32) / k).astype(np.float32)
    args = []
    for name, array in files.items():
        path = os.path.join(work, name + ".npy")
        np.save(path, array)
        args += ["--in", f"{name}={path}"]
    return args


def output_args(work, out, label):
    if out == "null":
        return ["--out", "u=/dev/null", "--out", "v=/dev/null"]
    if out == "files":
        return ["--out", f"u={work}/{label}-u.npy", "--out", f"v={work}/{label}-v.npy"]
    if out:
        raise SystemExit(f"unknown output mode @{out} (expected @null or @files)")
    return []


def median_seconds(exe, args, repeat):
    result = subprocess.run([exe] + args + ["--repeat", str(repeat), "--json"], capture_output=True, text=True,
                            timeout=900)
    if result.returncode:
        raise SystemExit(f"{exe} failed ({result.returncode}): {result.stderr[-400:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])["median_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exes", nargs="+", metavar="LABEL=EXE")
    parser.add_argument("--sizes", default="320x240,512x384,640x480,1920x1080")
    parser.add_argument("--frames", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--peak", type=float, default=0.0, help="FP32 peak in GFLOP/s, for the fraction")
    parser.add_argument("--work-dir", help="where the inputs (and @files outputs) go (default: the temporary folder)")
    args = parser.parse_args()
    exes = []
    for spec in args.exes:
        label, exe = spec.split("=", 1)
        exe, _, out = exe.partition("@")
        exes.append((label, exe, out))
    print(f"| size | frames | " + " | ".join(f"{label} (FPS)" for label, _, _ in exes) + " | GFLOP/frame | GFLOP/s |" +
          (" of peak |" if args.peak else ""))
    print("| --- | --- | " + " | ".join("---" for _ in exes) + " | --- | --- |" + (" --- |" if args.peak else ""))
    for size in args.sizes.split(","):
        w, h = (int(v) for v in size.split("x"))
        with tempfile.TemporaryDirectory(dir=args.work_dir) as work:
            common = inputs(work, args.frames, h, w)
            fps = [args.frames / median_seconds(exe, common + output_args(work, out, label), args.repeat)
                   for label, exe, out in exes]
        flops = h * w * (5 * 2 * (M * N + M + L) + 5)
        rate = flops * fps[0] / 1e9
        row = f"| {w}x{h} | {args.frames} | " + " | ".join(f"{f:.1f}" for f in fps)
        row += f" | {flops / 1e9:.3f} | {rate:.0f} |"
        if args.peak:
            row += f" {100 * rate / args.peak:.1f}% |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
