#!/usr/bin/env python3
"""GPU ranks against one GPU (issue 33): a program's `polyc build --target=cuda --mpi` executable under
`mpirun -np R` (one rank a GPU: local rank modulo the GPUs) and its plain CUDA build on one GPU.

  scripts/bench-mpi-gpu.py PLAIN_EXE MPI_EXE --param H=1080 --param W=1920 --param T=16 [--ranks 1,2]
                           [--weak H] [--repeat 3] [--int-bound pre=N] [--inputs-command CMD] --work DIR

Strong scaling: the same sizes on 1, 2, ... ranks. With --weak NAME, also weak scaling: NAME times R on
R ranks. Inputs are random (scripts/lib/random_inputs.py), except those that --inputs-command writes
over them: a command run in a shell for each size, `{dir}` replaced by the folder of the inputs
(NAME.npy) and `{N}` by param N's value, e.g. the rate network's own networks, their presynaptic indices
sorted within a neuron:
  --inputs-command 'python3 examples/rate-network/make_network.py {dir} --neurons {N} --fan-in {C}'
Each run times the compute region (--repeat K --json: the median of K runs; under MPI rank 0's, which
includes its waits for the other ranks' rows).
Prints one table a scaling: the time on one GPU (plain build), the time on R ranks, the speed-up over one
GPU and the parallel efficiency (strong: speed-up / R; weak: the one-GPU time at the base size over the
R-rank time at R times the size), and whether the MPI run's outputs equal the plain run's byte for byte.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from random_inputs import write_random_inputs  # noqa: E402


def timed(command, repeat, outs):
    run = subprocess.run(command + outs + ["--repeat", str(repeat), "--json"], capture_output=True, text=True,
                         timeout=900)
    if run.returncode:
        sys.exit(f"bench-mpi-gpu: {' '.join(command[:6])} ... failed ({run.returncode}): {run.stderr.strip()[-600:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])["median_s"]


class Runs:
    """Runs the plain build once a size (inputs written once a size) and the MPI build on R ranks."""

    def __init__(self, args, bounds):
        self.args, self.bounds, self.sizes = args, bounds, {}

    def measure(self, params, ranks):
        """(plain seconds, MPI seconds, identical) at `params` on `ranks` ranks."""
        key = tuple(sorted(params.items()))
        if key not in self.sizes:
            work = os.path.join(self.args.work, "size-%d" % len(self.sizes))
            os.makedirs(work, exist_ok=True)
            command, outputs = write_random_inputs(self.args.plain, params, self.bounds, work)
            if self.args.inputs_command:
                subprocess.run(self.args.inputs_command.format(dir=work, **params), shell=True, check=True)
            plain = timed([self.args.plain] + command, self.args.repeat, self.outs(work, outputs, "plain"))
            self.sizes[key] = (work, command, outputs, plain)
        work, command, outputs, plain = self.sizes[key]
        mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "-np", str(ranks)]
        mpi = timed(mpirun + [self.args.mpi] + command, self.args.repeat, self.outs(work, outputs, "mpi"))
        same = all(open(os.path.join(work, f"{n}.plain.npy"), "rb").read() ==
                   open(os.path.join(work, f"{n}.mpi.npy"), "rb").read() for n in outputs)
        return plain, mpi, same

    @staticmethod
    def outs(work, outputs, tag):
        return [a for n in outputs for a in ("--out", f"{n}={os.path.join(work, f'{n}.{tag}.npy')}")]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("plain")
    parser.add_argument("mpi")
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--ranks", default="1,2")
    parser.add_argument("--weak", help="the param multiplied by the rank count for weak scaling")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--int-bound", action="append", default=[])
    parser.add_argument("--inputs-command", help="writes some inputs of each size over the random ones")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    params = {k: int(v) for k, v in (p.split("=") for p in args.param)}
    bounds = dict(b.split("=") for b in args.int_bound)
    counts = [int(c) for c in args.ranks.split(",")]
    sizes = " ".join(f"{k}={v}" for k, v in params.items())
    name = os.path.basename(args.mpi)
    runs = Runs(args, bounds)

    print(f"{name}, strong scaling at {sizes}, median of {args.repeat} runs")
    print("| GPUs | one GPU, plain build (s) | MPI ranks (s) | speed-up | efficiency | outputs |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in counts:
        plain, mpi, same = runs.measure(params, r)
        print(f"| {r} | {plain:.5f} | {mpi:.5f} | {plain / mpi:.2f}x | {plain / mpi / r:.0%} | "
              f"{'identical' if same else 'DIFFERENT'} |", flush=True)
    if not args.weak:
        return
    print()
    print(f"{name}, weak scaling: {args.weak} x GPUs from {sizes}, median of {args.repeat} runs")
    print(f"| GPUs | {args.weak} | one GPU, plain build (s) | MPI ranks (s) | efficiency | outputs |")
    print("| --- | --- | --- | --- | --- | --- |")
    base = None
    for r in counts:
        scaled = dict(params, **{args.weak: params[args.weak] * r})
        plain, mpi, same = runs.measure(scaled, r)
        base = base or plain
        print(f"| {r} | {scaled[args.weak]} | {plain:.5f} | {mpi:.5f} | {base / mpi:.0%} | "
              f"{'identical' if same else 'DIFFERENT'} |", flush=True)


if __name__ == "__main__":
    main()
