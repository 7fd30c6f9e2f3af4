#!/usr/bin/env python3
"""The peer: the same rate network in ANNarchy (seed 001's authors' simulator), from the inputs
make_network.py writes. Rate-coded neurons `tau * dr/dt = max(sum(exc) + baseline, 0) - r`, explicit Euler
with dt = 1 (the update of ratenet.poly), one excitatory projection holding the connections and weights
(CSR's row/col/w, or a fixed fan-in's pre/w, duplicates summed), stored as ANNarchy's CSR. Runs STEPS - 1
steps (r[0] = r0 is step 0), prints the time per step (median over --repeat runs of the simulation, after
compiling) and, with --check, the largest difference of the final rates from reference.py's float64
simulation.

  annarchy_peer.py DIR STEPS [--threads K] [--repeat R] [--check]

ANNarchy is not a dependency of polyc: install it where you run this, in a virtual environment that is
active when this runs (ANNarchy 5 compiles the network with CMake and finds nanobind through the active
Python): `python3 -m venv ann && ann/bin/pip install annarchy nanobind scipy`, then
`VIRTUAL_ENV=$PWD/ann PATH=$PWD/ann/bin:$PATH python annarchy_peer.py ...`.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np
import scipy.sparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402


def connectivity(folder, n):
    load = lambda name: np.load(os.path.join(folder, name + ".npy"))  # noqa: E731
    w = load("w").astype(np.float64)
    if os.path.exists(os.path.join(folder, "row.npy")):
        row, col = load("row"), load("col")
        post = np.repeat(np.arange(n), np.diff(row))
        pre = col
    else:
        pre_matrix = load("pre")
        post = np.repeat(np.arange(n), pre_matrix.shape[1])
        pre = pre_matrix.reshape(-1)
        w = w.reshape(-1)
    # ANNarchy 5's from_sparse takes the matrix as [pre, post] (checked on three neurons: W[1, 0] feeds
    # neuron 0 from neuron 1); duplicates are summed.
    return scipy.sparse.csr_matrix((w, (pre, post)), shape=(n, n)).tolil()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("steps", type=int)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    import ANNarchy as ann  # noqa: N813 (imported here: its banner and compilation only when run)
    from ANNarchy.core.CTypes import float32

    load = lambda name: np.load(os.path.join(args.folder, name + ".npy"))  # noqa: E731
    r0, baseline = load("r0").astype(np.float64), load("baseline").astype(np.float64)
    n = len(r0)
    net = ann.Network()
    net.config(dt=1.0, num_threads=args.threads, dtype=float32)
    neuron = ann.Neuron(parameters="tau = 10.0\nbaseline = 0.0",
                        equations="tau * dr/dt = max(sum(exc) + baseline, 0.0) - r : explicit")
    population = net.create(n, neuron)
    projection = net.connect(population, population, "exc")
    projection.from_sparse(connectivity(args.folder, n), storage_format="csr")
    work = tempfile.mkdtemp(prefix="annarchy-")
    try:
        net.compile(directory=work, silent=True)
        population.baseline = baseline
        times = []
        for _ in range(args.repeat):
            population.r = r0
            start = time.perf_counter()
            net.simulate(args.steps - 1)
            times.append(time.perf_counter() - start)
        rates = np.array(population.r, dtype=np.float64)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    per_step = statistics.median(times) / max(args.steps - 1, 1)
    print(f"annarchy: {n} neurons, {args.threads} threads: {per_step * 1e3:.4f} ms a step")
    if args.check:
        expected = reference.simulate(args.folder, args.steps)
        difference = np.abs(rates - expected).max() / max(np.abs(expected).max(), 1e-30)
        print(f"annarchy rT: relative difference {difference:.3g}")


if __name__ == "__main__":
    main()
