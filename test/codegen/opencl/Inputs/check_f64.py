#!/usr/bin/env python3
"""Runs the OpenCL (flexible wavefront) and CPU builds of a float64 2D IIR filter on the same random inputs
and prints, per case, the largest difference relative to the largest CPU magnitude.

check_f64.py OPENCL_EXE CPU_EXE WORKDIR
"""
import os
import subprocess
import sys

import numpy as np

opencl, cpu, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(5)
for height, width, m in ((1, 1, 1), (17, 9, 3), (97, 131, 9)):
    inputs = {"x": rng.uniform(-1, 1, (height, width)), "a": rng.uniform(-1, 1, (m, m)) / m,
              "b": rng.uniform(-1, 1, (m, m)) / (2 * m * m)}
    args = []
    for name, value in inputs.items():
        np.save(f"{work}/{name}.npy", value)
        args += ["--in", f"{name}={work}/{name}.npy"]
    for tag, exe in (("ocl", opencl), ("cpu", cpu)):
        subprocess.run([exe, *args, "--out", f"y={work}/y_{tag}.npy"], check=True, capture_output=True, timeout=300)
    got, want = np.load(f"{work}/y_ocl.npy"), np.load(f"{work}/y_cpu.npy")
    error = np.abs(got - want).max() / max(np.abs(want).max(), 1e-300)
    print(f"{height}x{width} M={m}: {got.dtype} relative error {error:.1e}: {'ok' if error <= 1e-12 else 'FAIL'}")
