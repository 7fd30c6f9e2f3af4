#!/usr/bin/env python3
"""Runs built windows.poly executables on random inputs of several shapes and compares y with a plain
sequential float64 evaluation written here (zero outside x and y, g clamped): prints the relative error
(largest absolute error over the largest magnitude) and 'ok' or 'FAIL' per case.

check_windows.py WORKDIR NAME=EXE[:VAR=VALUE,...] ...
"""
import os
import subprocess
import sys

import numpy as np


def reference(x, g, c, d):
    H, W = x.shape
    y = np.zeros((H, W))

    def at(a, i, j):
        return a[i, j] if 0 <= i < H and 0 <= j < W else 0.0

    for i in range(H):
        for j in range(W):
            v = c[0] * at(x, i + 1, j + 2) + c[1] * at(x, i - 1, j - 1)
            v += 0.25 * g[min(max(i - 2, 0), H - 1), min(max(j + 1, 0), W - 1)]
            v += sum(d[r] * at(x, i + r, j - r) for r in range(len(d)))
            v += c[2] * (at(y, i - 1, j) + at(y, i, j - 1) + at(y, i - 2, j - 1)) * 0.3
            y[i, j] = v
    return y


work = sys.argv[1]
os.makedirs(work, exist_ok=True)
cases = []
for spec in sys.argv[2:]:
    name, rest = spec.split("=", 1)
    exe, _, env = rest.partition(":")
    cases.append((name, exe, dict(kv.split("=", 1) for kv in env.split(",")) if env else {}))
failed = 0
for H, W, R in [(1, 1, 1), (5, 3, 4), (3, 40, 2), (37, 45, 3), (60, 70, 9), (20, 30, 0)]:
    rng = np.random.default_rng(H * 10000 + W * 100 + R)
    x = rng.standard_normal((H, W)).astype(np.float32)
    g = rng.standard_normal((H, W)).astype(np.float32)
    c = (rng.standard_normal(3) * 0.5).astype(np.float32)
    d = (rng.standard_normal(R) * 0.3).astype(np.float32)
    for array, value in (("x", x), ("g", g), ("c", c), ("d", d)):
        np.save(f"{work}/{array}.npy", value)
    want = reference(*(a.astype(np.float64) for a in (x, g, c, d)))
    for name, exe, env in cases:
        run = subprocess.run([exe] + [f"--in={a}={work}/{a}.npy" for a in "xgcd"] + [f"--out=y={work}/y.npy"],
                             capture_output=True, text=True, env={**os.environ, **env})
        label = f"{name} {H}x{W} R={R}"
        if run.returncode:
            print(f"{label}: FAIL (exit {run.returncode}) {run.stderr[-500:]}")
            failed += 1
            continue
        got = np.load(f"{work}/y.npy").astype(np.float64)
        error = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
        ok = got.shape == want.shape and error <= 1e-5
        failed += not ok
        print(f"{label}: relative error {error:.2e}: {'ok' if ok else 'FAIL'}")
print(f"{failed} failed")
