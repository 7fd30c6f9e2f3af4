#!/usr/bin/env python3
"""The peer: the same rate network in ANNarchy (seed 001's authors' simulator), from the inputs
make_network.py writes. Rate-coded neurons `tau * dr/dt = max(sum(exc) + baseline, 0) - r`, explicit Euler
with dt = 1 (the update of ratenet.poly), one excitatory projection holding the connections and weights
(CSR's row/col/w, or a fixed fan-in's pre/w, duplicates summed), built as ANNarchy's LIL and stored as its
CSR (or --storage FORMAT), simulated with OpenMP threads or, with --paradigm cuda, on the GPU. Runs
STEPS - 1 steps (r[0] = r0 is step 0), prints the time per step (median over --repeat runs of the
simulation, after compiling) and, with --check, the largest difference of the final rates from
reference.py's float64 simulation.

  annarchy_peer.py DIR STEPS [--threads K] [--paradigm openmp|cuda] [--storage csr|ellr|...] [--repeat R]
                   [--check]

ANNarchy is not a dependency of polyc: install it where you run this, in a virtual environment that is
active when this runs (ANNarchy 5 compiles the network with CMake and finds nanobind through the active
Python): `python3 -m venv ann && ann/bin/pip install annarchy nanobind`, then
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402


def connections(folder, n):
    """Each neuron's presynaptic neurons and weights, as (row pointer, pre, w) sorted by post then pre, the
    duplicates (a fixed fan-in may draw a neuron twice) summed into one connection."""
    load = lambda name: np.load(os.path.join(folder, name + ".npy"))  # noqa: E731
    if os.path.exists(os.path.join(folder, "row.npy")):
        row, pre, w = load("row"), load("col"), load("w")
        post = np.repeat(np.arange(n), np.diff(row))
    else:
        pre_matrix = load("pre")
        post = np.repeat(np.arange(n), pre_matrix.shape[1])
        pre, w = pre_matrix.reshape(-1), load("w").reshape(-1)
    key = post.astype(np.int64) * n + pre
    order = np.argsort(key, kind="stable")
    key, w = key[order], w.astype(np.float64)[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if len(key) else np.zeros(0, np.int64)
    summed = np.add.reduceat(w, first) if len(key) else w
    key = key[first]
    pointer = np.searchsorted(key // n, np.arange(n + 1))
    return pointer, (key % n).astype(np.int64), summed


def lil_pattern(pre, post, dt, folder):
    """ANNarchy's connector (Projection.from_function): the network's connections as its LIL."""
    from ANNarchy import LILConnectivity

    pointer, ranks, weights = connections(folder, post.size)
    synapses = LILConnectivity(dt=dt)
    for j in range(post.size):
        lo, hi = pointer[j], pointer[j + 1]
        if hi > lo:
            synapses.add(j, ranks[lo:hi].tolist(), weights[lo:hi].tolist(), [0])
    return synapses


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("steps", type=int)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--paradigm", choices=["openmp", "cuda"], default="openmp")
    parser.add_argument("--storage", default="csr", help="the projection's storage format in ANNarchy")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    import ANNarchy as ann  # noqa: N813 (imported here: its banner and compilation only when run)
    from ANNarchy.core.CTypes import float32

    load = lambda name: np.load(os.path.join(args.folder, name + ".npy"))  # noqa: E731
    r0, baseline = load("r0").astype(np.float64), load("baseline").astype(np.float64)
    n = len(r0)
    net = ann.Network()
    if args.paradigm == "cuda":
        net.config(dt=1.0, paradigm="cuda", dtype=float32)
    else:
        net.config(dt=1.0, num_threads=args.threads, dtype=float32)
    neuron = ann.Neuron(parameters="tau = 10.0\nbaseline = 0.0",
                        equations="tau * dr/dt = max(sum(exc) + baseline, 0.0) - r : explicit")
    population = net.create(n, neuron)
    projection = net.connect(population, population, "exc")
    projection.from_function(lil_pattern, storage_format=args.storage, folder=args.folder)
    work = tempfile.mkdtemp(prefix="annarchy-")
    try:
        net.compile(directory=work, silent=True)
        population.baseline = baseline
        times = []
        for _ in range(args.repeat):
            population.r = r0
            start = time.perf_counter()
            net.simulate(args.steps - 1)  # on CUDA, simulate() ends with cudaDeviceSynchronize
            times.append(time.perf_counter() - start)
        rates = np.array(population.r, dtype=np.float64)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    per_step = statistics.median(times) / max(args.steps - 1, 1)
    where = "CUDA" if args.paradigm == "cuda" else f"{args.threads} threads"
    print(f"annarchy: {n} neurons, {where}, {args.storage}: {per_step * 1e3:.4f} ms a step")
    if args.check:
        expected = reference.simulate(args.folder, args.steps)
        difference = np.abs(rates - expected).max() / max(np.abs(expected).max(), 1e-30)
        print(f"annarchy rT: relative difference {difference:.3g}")


if __name__ == "__main__":
    main()
