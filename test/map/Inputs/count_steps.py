"""Runs EXE (test/map/sequential-outer-member.poly: y = x0 + T - 1) on x0 = 0 with N = 5, for T = 3 and
T = 40, and prints y for each."""
import os
import subprocess
import sys

import numpy as np

exe, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
np.save(os.path.join(work, "x0.npy"), np.zeros(5, dtype=np.float32))
for steps in (3, 40):
    out = os.path.join(work, f"y{steps}.npy")
    subprocess.run([exe, "--param", f"T={steps}", "--in", f"x0={work}/x0.npy", "--out", f"y={out}"], check=True)
    print(f"T={steps}: {[float(v) for v in np.load(out)]}")
