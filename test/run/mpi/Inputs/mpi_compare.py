#!/usr/bin/env python3
"""Runs a program's `polyc build --mpi` executable under mpirun with each rank count and compares every output
with its plain CPU build's, byte for byte (each element is computed by one rank, by the same code, in the
same order). Inputs are random, of the shapes the executable's --help gives for the params; an i32 input
takes values in [0, BOUND) from --int-bound NAME=BOUND (a param expression).

  mpi_compare.py CPU_EXE MPI_EXE --param N=40 ... --ranks 1,2,3,4 [--int-bound pre=N] [--rtol R] --work DIR

Prints one line per rank count ("ranks R: N outputs identical") and exits 1 on any difference or failure.
With --rtol, for programs whose reductions the ranks split by their terms (their partial sums added in
another order), an output that is not identical may differ from the plain build's by at most R times
its largest magnitude, element by element ("ranks R: N outputs within rtol R", or "identical" when all are);
with --exact-ranks K as well, only beyond K ranks (a GPU pipeline's strips run in messages, a launch each,
where ranks share GPUs: the fixed wavefront's sums, not the plain build's).
"""
import numpy as np
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts", "lib"))
from random_inputs import write_random_inputs  # noqa: E402


def close(expected_path, got_path, rtol):
    """Whether two outputs have the same shape and, element by element, are equal (infinities of one sign,
    NaN and NaN) or differ by at most rtol times the expected's largest finite magnitude."""
    expected, got = np.load(expected_path), np.load(got_path)
    if expected.shape != got.shape or expected.dtype != got.dtype:
        return False
    finite = np.abs(expected[np.isfinite(expected)])
    scale = float(np.max(finite)) if finite.size else 0.0
    e, g = expected.astype(np.float64), got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        near = np.abs(e - g) <= rtol * scale
    return bool(np.all(near | (e == g) | (np.isnan(e) & np.isnan(g))))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cpu")
    parser.add_argument("mpi")
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--ranks", default="1,2,3,4")
    parser.add_argument("--int-bound", action="append", default=[])
    parser.add_argument("--work", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rtol", type=float, help="outputs equal within this tolerance relative to their scale")
    parser.add_argument("--exact-ranks", type=int, help="with --rtol: up to this many ranks, byte for byte")
    args = parser.parse_args()
    params = {k: int(v) for k, v in (p.split("=") for p in args.param)}
    bounds = dict(b.split("=") for b in args.int_bound)
    command, outputs = write_random_inputs(args.cpu, params, bounds, args.work, args.seed)
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
        expected_of = lambda n: os.path.join(args.work, n + ".cpu.npy")  # noqa: E731
        got_of = lambda n: os.path.join(args.work, n + "." + ranks + ".npy")  # noqa: E731
        different = [n for n in outputs if open(expected_of(n), "rb").read() != open(got_of(n), "rb").read()]
        tolerant = args.rtol is not None and (args.exact_ranks is None or int(ranks) > args.exact_ranks)
        if different and tolerant and all(close(expected_of(n), got_of(n), args.rtol) for n in different):
            print(f"ranks {ranks}: {len(outputs)} outputs within rtol {args.rtol:g}")
        elif different:
            print(f"ranks {ranks}: DIFFERENT: {', '.join(different)}")
            failed = True
        else:
            print(f"ranks {ranks}: {len(outputs)} outputs identical")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
