#!/usr/bin/env python3
"""Runs a program's `polyc build --mpi` executable under mpirun with each rank count and compares every output
with its plain CPU build's, byte for byte (each element is computed by one rank, by the same code, in the
same order). Inputs are random, of the shapes the executable's --help gives for the params; an i32 input
takes values in [0, BOUND) from --int-bound NAME=BOUND (a param expression).

  mpi_compare.py CPU_EXE MPI_EXE --param N=40 ... --ranks 1,2,3,4 [--int-bound pre=N] --work DIR

Prints one line per rank count ("ranks R: N outputs identical") and exits 1 on any difference or failure.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32}


def arrays_of(exe):
    """(flag, name, role, dtype, shape text) for each array in the executable's --help."""
    text = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in text.splitlines():
        m = re.match(r"\s+--(in|out|in/--out) (\w+)=FILE\s+(\w+)\s+(\w+)\s+(\[.*\]|scalar)?", line)
        if m:
            found.append(m.groups())
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cpu")
    parser.add_argument("mpi")
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--ranks", default="1,2,3,4")
    parser.add_argument("--int-bound", action="append", default=[])
    parser.add_argument("--work", required=True)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    params = {k: int(v) for k, v in (p.split("=") for p in args.param)}
    bounds = dict(b.split("=") for b in args.int_bound)
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    inputs, outputs = [], []
    for flag, name, role, dtype, shape in arrays_of(args.cpu):
        if flag != "in":
            outputs.append(name)
        if flag == "out":
            continue
        dims = [] if not shape or shape == "scalar" else [eval(d, {}, params) for d in shape[1:-1].split(",")]
        if dtype == "int32":
            data = rng.integers(0, max(1, eval(bounds.get(name, "1"), {}, params)), size=dims).astype(np.int32)
        else:
            data = rng.standard_normal(dims).astype(DTYPES[dtype]) if dims else DTYPES[dtype](rng.uniform(0.1, 1))
        np.save(os.path.join(args.work, name + ".npy"), data)
        inputs += ["--in", f"{name}={os.path.join(args.work, name + '.npy')}"]
    command = inputs + [a for p in args.param for a in ("--param", p)]
    expected = [a for name in outputs for a in ("--out", f"{name}={os.path.join(args.work, name + '.cpu.npy')}")]
    # One OpenMP thread a process: a sum that threads share adds in an order of their number.
    env = dict(os.environ, OMP_NUM_THREADS="1")
    subprocess.run([args.cpu] + command + expected, check=True, env=env)
    failed = False
    for ranks in args.ranks.split(","):
        got = [a for name in outputs for a in ("--out", f"{name}={os.path.join(args.work, name + '.' + ranks + '.npy')}")]
        run = subprocess.run(["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", ranks, args.mpi] + command + got,
                             env=env, capture_output=True, text=True, timeout=300)
        if run.returncode:
            print(f"ranks {ranks}: FAILED with exit status {run.returncode}: {run.stderr.strip()[-300:]}")
            failed = True
            continue
        different = [n for n in outputs if open(os.path.join(args.work, n + ".cpu.npy"), "rb").read() !=
                     open(os.path.join(args.work, n + "." + ranks + ".npy"), "rb").read()]
        if different:
            print(f"ranks {ranks}: DIFFERENT: {', '.join(different)}")
            failed = True
        else:
            print(f"ranks {ranks}: {len(outputs)} outputs identical")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
