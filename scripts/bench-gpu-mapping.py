#!/usr/bin/env python3
"""The GPU mapping's figures (docs/performance.md, "The GPU mapping of whole schedule trees"): the cost of
a host-loop iteration (a replayed graph node, a direct launch, a grid barrier), host loop against
persistent kernel on a stencil and on the rate network, and the examples that ran on one thread before.
Prints markdown tables. For the GPU machine, with executables built here by
scripts/build-gpu-mapping-bench.sh DIR:

  bench-gpu-mapping.py DIR [--repeat K]

Each figure is the median of K runs of the compute region (EXE --repeat K --json), inputs generated
here with a fixed seed. POLYC_CUDA_PERSISTENT and POLYC_CUDA_GRAPH force the forms.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "polybench", "Inputs"))
import polybench  # noqa: E402  (the PolyBench kernels' inputs)


def median(exe, args, env=None, repeat=5):
    result = subprocess.run([exe] + args + ["--repeat", str(repeat), "--json"], capture_output=True, text=True,
                            env={**os.environ, **(env or {})}, timeout=600)
    if result.returncode:
        raise SystemExit(f"{exe} failed ({result.returncode}): {result.stderr[-400:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])["median_s"]


def save(work, name, array, file=None):
    path = os.path.join(work, (file or name) + ".npy")
    np.save(path, array)
    return f"{name}={path}"


def forms(exe, args, repeat):
    host = median(exe, args, {"POLYC_CUDA_PERSISTENT": "0"}, repeat)
    persistent = median(exe, args, {"POLYC_CUDA_PERSISTENT": "1"}, repeat)
    return host, persistent


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    exe = lambda name: os.path.join(args.dir, name)  # noqa: E731
    work = tempfile.mkdtemp()
    rng = np.random.default_rng(7)

    print("| one iteration of a host loop (2 x 2 points, 4096 iterations) | us |")
    print("| --- | --- |")
    u0 = ["--in", save(work, "u0", np.ones((2, 2), np.float32)), "--out", f"uT={work}/uT.npy",
          "--param", "H=2", "--param", "W=2"]
    for label, env in (("replayed graph node", {"POLYC_CUDA_PERSISTENT": "0", "POLYC_CUDA_GRAPH": "1"}),
                       ("direct launch", {"POLYC_CUDA_PERSISTENT": "0", "POLYC_CUDA_GRAPH": "0"}),
                       ("grid barrier (persistent kernel)", {"POLYC_CUDA_PERSISTENT": "1"})):
        long = median(exe("floor"), u0 + ["--param", "T=4096"], env, args.repeat)
        short = median(exe("floor"), u0 + ["--param", "T=1"], env, args.repeat)
        print(f"| {label} | {(long - short) / 4095 * 1e6:.2f} |")

    print()
    print("| program, sizes | host loop ms | persistent ms | host / persistent |")
    print("| --- | --- | --- | --- |")

    def row(label, host, persistent):
        print(f"| {label} | {host * 1e3:.3f} | {persistent * 1e3:.3f} | {host / persistent:.2f} |")

    for n in (64, 250, 500, 1000, 1300):
        sizes = {"N": n, "T": 500}
        command, _, _ = polybench.write_inputs("jacobi-2d", sizes, exe("jacobi-2d"), os.path.join(work, f"j{n}"), 4221)
        row(f"jacobi-2d (PolyBench) N={n}, T=500", *forms(exe("jacobi-2d"), command[1:], args.repeat))
    fold = ["--param", "T=500", "--in", save(work, "u0", rng.random((1300, 1300), dtype=np.float32), "u0big"),
            "--out", f"uT={work}/uTbig.npy"]
    row("jacobi2d, one statement, folded (test/schedule) 1300^2, T=500", *forms(exe("jacobi2d-fold"), fold, args.repeat))
    for n, c in ((1000, 1000), (40000, 1000), (40000, 8192)):
        net = ["--param", "T=100", "--in", save(work, "r0", rng.random(n, dtype=np.float32)),
               "--in", save(work, "pre", rng.integers(0, n, (n, c)).astype(np.int32)),
               "--in", save(work, "w", ((rng.random((n, c), dtype=np.float32) - 0.5) / c).astype(np.float32)),
               "--in", save(work, "baseline", rng.random(n, dtype=np.float32)), "--out", f"rT={work}/rT.npy"]
        row(f"ratenet N={n}, C={c}, T=100", *forms(exe("ratenet"), net, args.repeat))

    print()
    print("| example | sizes | ms |")
    print("| --- | --- | --- |")
    frames = ["--out", f"u={work}/u.npy", "--out", f"v={work}/v.npy"]
    for name, shape in (("I", (32, 240, 320)), ("gx", (240, 320, 15)), ("gy", (240, 320, 15)), ("gt", (240, 320, 20))):
        frames += ["--in", save(work, name, rng.random(shape, dtype=np.float32))]
    print(f"| optical flow (lkflow) | 320 x 240, 32 frames | {median(exe('lkflow'), frames, None, 1) * 1e3:.1f} |")


if __name__ == "__main__":
    main()
