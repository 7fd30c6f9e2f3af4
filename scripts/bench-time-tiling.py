#!/usr/bin/env python3
"""The CPU target's two forms of an iterated stencil, step by step and time-tiled (docs/scheduling.md 5d),
on the same executable (POLYC_TIME_TILE=0 and 1), at PolyBench's MEDIUM and LARGE sizes and beyond the
last-level cache. Prints a markdown table: seconds (median of --repeat runs) and step / tiled.

  scripts/bench-time-tiling.py [--polyc build/compiler/driver/polyc] [--repeat 3] [--work DIR]
                               [--time-tile S,W] [--march CPU] [--kernels seidel-2d,...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLYBENCH = os.path.join(ROOT, "test", "polybench")
CASES = [
    ("jacobi-1d", "N=400,T=100"),
    ("jacobi-1d", "N=2000,T=500"),
    ("jacobi-1d", "N=4000000,T=100"),
    ("jacobi-1d", "N=16000000,T=100"),
    ("jacobi-2d", "N=250,T=100"),
    ("jacobi-2d", "N=1300,T=500"),
    ("jacobi-2d", "N=2800,T=100"),
    ("jacobi-2d", "N=4000,T=100"),
    ("fdtd-2d", "NX=200,NY=240,T=100"),
    ("fdtd-2d", "NX=1000,NY=1200,T=500"),
    ("fdtd-2d", "NX=2800,NY=2800,T=100"),
    ("heat-3d", "N=40,T=100"),
    ("heat-3d", "N=120,T=500"),
    ("heat-3d", "N=250,T=100"),
    ("seidel-2d", "N=400,T=100"),
    ("seidel-2d", "N=2000,T=500"),
]


def python_with_numpy():
    for candidate in (sys.executable, "/usr/bin/python3"):
        if subprocess.run([candidate, "-c", "import numpy"], capture_output=True).returncode == 0:
            return candidate
    sys.exit("bench-time-tiling: no python3 with numpy")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--polyc", default=os.path.join(ROOT, "build", "compiler", "driver", "polyc"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default=tempfile.mkdtemp(prefix="bench-time-tiling-"))
    ap.add_argument("--time-tile", help="sizes for polyc's --time-tile")
    ap.add_argument("--march", help="polyc build --march (native, x86-64-v3, ...); default the baseline")
    ap.add_argument("--kernels", help="comma-separated kernels (default: all)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cases = [c for c in CASES if not args.kernels or c[0] in args.kernels.split(",")]
    python = python_with_numpy()
    exes = {}
    for kernel in sorted({k for k, _ in cases}):
        exe = os.path.join(args.work, kernel)
        cmd = [args.polyc, "build", os.path.join(POLYBENCH, kernel + ".poly"), "--target=cpu", "-o", exe]
        if args.time_tile:
            cmd.append("--time-tile=" + args.time_tile)
        if args.march:
            cmd.append("--march=" + args.march)
        subprocess.run(cmd, check=True)
        exes[kernel] = exe
    print("| kernel | sizes | step by step s | time-tiled s | step / tiled |")
    print("| --- | --- | ---: | ---: | ---: |")
    for kernel, sizes in cases:
        seconds = []
        for form in ("0", "1"):
            out = subprocess.run([python, os.path.join(POLYBENCH, "Inputs", "polybench.py"), "time", kernel,
                                  "--exe", exes[kernel], "--sizes", sizes, "--work", os.path.join(args.work, "w"),
                                  "--repeat", str(args.repeat)],
                                 check=True, capture_output=True, text=True,
                                 env=dict(os.environ, POLYC_TIME_TILE=form)).stdout
            seconds.append(json.loads(out.strip().splitlines()[-1])["median_s"])
        print(f"| {kernel} | {sizes} | {seconds[0]:.4g} | {seconds[1]:.4g} | {seconds[0] / seconds[1]:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
