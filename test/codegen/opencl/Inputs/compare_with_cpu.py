#!/usr/bin/env python3
"""Runs the OpenCL and the CPU build of the optical-flow, rate-network and MLP examples on the same random
inputs and prints, per output, the largest difference relative to the largest CPU magnitude. A
differential check: the two targets share the expression printer but not the kernels, the launches, the
reductions or the host code. The IIR example has its own reference test (test/run/iir2d-opencl).

compare_with_cpu.py BUILDDIR WORKDIR     (BUILDDIR holds NAME and NAME-cpu for lkflow, ratenet, mlp)
"""
import os
import subprocess
import sys

import numpy as np

build, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(3)


def save(name, array):
    np.save(os.path.join(work, name + ".npy"), array)
    return f"{name}={work}/{name}.npy"


def run(program, inputs, outputs, params=()):
    for tag, exe in (("cpu", program + "-cpu"), ("ocl", program)):
        command = [os.path.join(build, exe)]
        for p in params:
            command += ["--param", p]
        for i in inputs:
            command += ["--in", i]
        for o in outputs:
            command += ["--out", f"{o}={work}/{o}_{tag}.npy"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if result.returncode:
            print(f"{program}: {tag} FAIL (exit {result.returncode}): {result.stderr[-600:]}")
            return
    for o in outputs:
        cpu = np.load(f"{work}/{o}_cpu.npy").astype(np.float64)
        ocl = np.load(f"{work}/{o}_ocl.npy").astype(np.float64)
        scale = max(float(np.abs(cpu).max()) if cpu.size else 0.0, 1e-30)
        diff = float(np.abs(cpu - ocl).max()) / scale if cpu.size else 0.0
        ok = cpu.shape == ocl.shape and np.all(np.isfinite(ocl)) and diff <= 1e-5
        print(f"{program} {o}: relative difference {diff:.1e}: {'ok' if ok else 'FAIL'}")


T, H, W = 4, 20, 24
run("lkflow", [save("I", rng.random((T, H, W), dtype=np.float32)), save("gx", rng.random((H, W, 15), dtype=np.float32)),
               save("gy", rng.random((H, W, 15), dtype=np.float32)), save("gt", rng.random((H, W, 20), dtype=np.float32))],
    ["u", "v"])
N, C = 50, 7
run("ratenet", [save("r0", rng.random(N, dtype=np.float32)), save("pre", rng.integers(0, N, (N, C)).astype(np.int32)),
                save("w", (rng.random((N, C), dtype=np.float32) - 0.5) / C), save("baseline", rng.random(N, dtype=np.float32))],
    ["rT"], ["T=10"])
P, I, J, K = 16, 5, 8, 3
run("mlp", [save("X", rng.random((P, I), dtype=np.float32)), save("D", rng.random((P, K), dtype=np.float32)),
            save("eta", np.array(0.1, dtype=np.float32)), save("W1", rng.random((J, I), dtype=np.float32) - 0.5),
            save("W2", rng.random((K, J), dtype=np.float32) - 0.5)],
    ["W1", "W2", "loss"], ["E=5"])
