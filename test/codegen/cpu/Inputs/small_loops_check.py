"""Runs the executable of small-loops.poly at size N on random inputs and compares every output with
numpy (float64), independently of polyc:  small_loops_check.py EXE N WORKDIR"""
import os
import subprocess
import sys

import numpy as np

exe, n, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
os.makedirs(work, exist_ok=True)
a = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
np.save(os.path.join(work, "a.npy"), a)
outs = ["b", "outer", "total"]
subprocess.run([exe, "--param", "N=%d" % n, "--in", "a=" + os.path.join(work, "a.npy")] +
               sum((["--out", "%s=%s" % (k, os.path.join(work, k + ".npy"))] for k in outs), []), check=True)
x = a.astype(np.float64)
b = x.copy()
b[1:-1] = x[:-2] + x[1:-1] + x[2:]
expected = {"b": b, "outer": np.outer(x, x), "total": np.array(np.dot(x, x[::-1]))}
failed = False
for k in outs:
    got = np.load(os.path.join(work, k + ".npy")).astype(np.float64)
    err = np.max(np.abs(got - expected[k])) / max(1.0, np.max(np.abs(expected[k])))
    ok = got.shape == expected[k].shape and err < 1e-4
    failed |= not ok
    print("small-loops N=%d %s: relative error %.2e: %s" % (n, k, err, "ok" if ok else "FAIL"))
sys.exit(1 if failed else 0)
