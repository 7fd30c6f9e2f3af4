#!/usr/bin/env python3
"""Runs a built matvec.poly executable on random inputs of several sizes (both sides of the run-time
choice K >= 32 between one work-group per output and one work-item per output, and empty arrays) and
compares r, top and z with numpy in float64: prints the relative errors and 'ok' or 'FAIL' per size.

check_matvec.py EXE WORKDIR
"""
import os
import subprocess
import sys

import numpy as np

exe, d = sys.argv[1], sys.argv[2]
os.makedirs(d, exist_ok=True)
for N, K in [(1, 1), (7, 5), (33, 40), (100, 257), (0, 3), (3, 0)]:
    rng = np.random.default_rng(N * 100 + K)
    A = rng.standard_normal((N, K)).astype(np.float32); v = rng.standard_normal(K).astype(np.float32)
    np.save(f"{d}/A.npy", A); np.save(f"{d}/v.npy", v)
    r = subprocess.run([exe, "--in", f"A={d}/A.npy", "--in", f"v={d}/v.npy", "--out", f"r={d}/r.npy", "--out", f"top={d}/top.npy", "--out", f"z={d}/z.npy"], capture_output=True, text=True)
    if r.returncode:
        print(f"N={N} K={K}: FAIL (exit {r.returncode}) {r.stderr[-500:]}")
        continue
    A64, v64 = A.astype(np.float64), v.astype(np.float64)
    want_r = A64 @ v64
    want_top = (A64 - v64[None, :]).max(axis=1) if K else np.full(N, -np.finfo(np.float32).max)
    want_z = A64 * v64[None, :] + 1
    errs, ok = [], True
    for name, want in (("r", want_r), ("top", want_top), ("z", want_z)):
        got = np.load(f"{d}/{name}.npy").astype(np.float64)
        scale = max(np.abs(want).max() if want.size else 0, 1e-30)
        error = float(np.abs(got - want).max() / scale) if want.size else 0.0
        ok = ok and got.shape == want.shape and error <= 1e-5
        errs.append(f"{name} {error:.1e}")
    print(f"N={N} K={K}: " + ", ".join(errs) + (": ok" if ok else ": FAIL"))
