#!/usr/bin/env python3
"""MPI ranks against OpenMP threads on the same cores (issue 33): a program's `polyc build --mpi` executable
under `mpirun -np R` (one OpenMP thread a rank) and its plain CPU build with R OpenMP threads, for each R.

  scripts/bench-mpi.py PLAIN_EXE MPI_EXE --param N=2000 --param T=100 [--counts 1,2,4,8] [--repeat 5]
                       [--int-bound pre=N] --work DIR

Inputs are random (scripts/lib/random_inputs.py). Each run times the compute region (--repeat K --json:
the median of K runs; under MPI rank 0's, which includes its waits for the other ranks' rows). Prints a
table: the time of each, its speed-up over one process of one thread, the parallel efficiency (speed-up /
R), and whether the MPI run's outputs are byte for byte those of the one-thread plain run.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from random_inputs import write_random_inputs  # noqa: E402


def timed(command, env, repeat):
    run = subprocess.run(command + ["--repeat", str(repeat), "--json"], capture_output=True, text=True,
                         env=env, timeout=900)
    if run.returncode:
        sys.exit(f"bench-mpi: {' '.join(command[:4])} ... failed ({run.returncode}): {run.stderr.strip()[-400:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])["median_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("plain")
    parser.add_argument("mpi")
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--counts", default="1,2,4,8")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--int-bound", action="append", default=[])
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    params = {k: int(v) for k, v in (p.split("=") for p in args.param)}
    bounds = dict(b.split("=") for b in args.int_bound)
    command, outputs = write_random_inputs(args.plain, params, bounds, args.work)

    def outs(tag):
        return [a for n in outputs for a in ("--out", f"{n}={os.path.join(args.work, f'{n}.{tag}.npy')}")]

    def same(tag):
        return all(open(os.path.join(args.work, f"{n}.plain.npy"), "rb").read() ==
                   open(os.path.join(args.work, f"{n}.{tag}.npy"), "rb").read() for n in outputs)

    one = dict(os.environ, OMP_NUM_THREADS="1")
    subprocess.run([args.plain] + command + outs("plain"), check=True, env=one, capture_output=True)
    base = None
    print(f"{os.path.basename(args.plain)} {' '.join(args.param)}, median of {args.repeat} runs")
    print("| processors | OpenMP threads (s) | speed-up | efficiency | MPI ranks (s) | speed-up | efficiency | "
          "MPI outputs |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for count in [int(c) for c in args.counts.split(",")]:
        threads = timed([args.plain] + command, dict(os.environ, OMP_NUM_THREADS=str(count)), args.repeat)
        mpirun = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(count), args.mpi]
        ranks = timed(mpirun + command, one, args.repeat)
        subprocess.run(mpirun + command + outs(f"mpi{count}"), check=True, env=one, capture_output=True)
        base = base or threads
        print(f"| {count} | {threads:.4f} | {base / threads:.2f} | {base / threads / count:.0%} | {ranks:.4f} | "
              f"{base / ranks:.2f} | {base / ranks / count:.0%} | "
              f"{'identical' if same(f'mpi{count}') else 'DIFFERENT'} |")


if __name__ == "__main__":
    main()
