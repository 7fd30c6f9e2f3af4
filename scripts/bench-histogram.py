#!/usr/bin/env python3
"""Times test/image/histogram.poly's CUDA or OpenCL build (a scatter of N values into B bins) in both of its
forms: atomics on the histogram in global memory (POLYC_CUDA_PRIVATE=0, or --switch POLYC_OPENCL_PRIVATE
for OpenCL) and a copy of it a block in shared (local) memory, added to it at the end (=1), and in the
form the cost model chooses (unset).
Each run is the executable's --repeat K --json: the median compute time, uploads excluded. The floor is
reading the N float32 values once at the copy bandwidth given (GB/s, read + write of a large copy).
Prints a markdown table:

  bench-histogram.py EXE [--switch POLYC_CUDA_PRIVATE] [--points 16777216] [--bins 64,256,4096] [--repeat 50]
                     [--bandwidth 4009]
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np

FORMS = (("global atomics", "0"), ("privatised", "1"), ("cost model", None))


def median_seconds(exe, args, switch, private, repeat):
    env = dict(os.environ)
    env.pop(switch, None)
    if private is not None:
        env[switch] = private
    run = subprocess.run([exe] + args + ["--repeat", str(repeat), "--json"], capture_output=True, text=True,
                         check=True, env=env)
    return json.loads(run.stdout.strip().splitlines()[-1])["median_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exe")
    parser.add_argument("--switch", default="POLYC_CUDA_PRIVATE", help="the variable that forces a form")
    parser.add_argument("--points", type=int, default=1 << 24)
    parser.add_argument("--bins", default="64,256,4096")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--bandwidth", type=float, default=4009.0, help="copy bandwidth, GB/s")
    args = parser.parse_args()
    floor_us = 4 * args.points / (args.bandwidth * 1e9) * 1e6
    print(f"N = {args.points} values; floor {floor_us:.1f} us (4N bytes at {args.bandwidth:.0f} GB/s)")
    print()
    print("| bins | " + " | ".join(f"{label} (us)" for label, _ in FORMS) + " | best / floor |")
    print("| ---: |" + " ---: |" * (len(FORMS) + 1))
    with tempfile.TemporaryDirectory() as work:
        values = np.random.default_rng(1).uniform(0.0, 1.0, args.points).astype(np.float32)
        np.save(os.path.join(work, "v.npy"), values)
        for bins in map(int, args.bins.split(",")):
            common = ["--param", f"N={args.points}", "--param", f"B={bins}", "--in", f"v={work}/v.npy",
                      "--out", f"hist={work}/hist.npy"]
            times = [median_seconds(args.exe, common, args.switch, private, args.repeat) * 1e6 for _, private in FORMS]
            print(f"| {bins} | " + " | ".join(f"{t:.1f}" for t in times) + f" | {min(times) / floor_us:.1f}x |")


if __name__ == "__main__":
    main()
