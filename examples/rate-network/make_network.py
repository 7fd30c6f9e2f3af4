#!/usr/bin/env python3
"""Inputs of the rate-network examples: a random network of N neurons, with either a fixed fan-in C
(ratenet.poly: pre[N, C], w[N, C]) or each connection present with probability P (ratenet-csr.poly, CSR:
row[N + 1], col[E], w[E]). Presynaptic indices in ascending order within each neuron (as ANNarchy's LIL and
CSR keep them) or in random order (seed 001 measures both). Weights uniform in [-1, 1] / sqrt(fan-in),
rates and baseline uniform in [0, 1].

  make_network.py DIR --neurons N (--fan-in C | --probability P) [--order ascending|random] [--seed S]
"""
import argparse
import multiprocessing
import os

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--neurons", type=int, required=True)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--fan-in", type=int)
    group.add_argument("--probability", type=float)
    parser.add_argument("--order", choices=["ascending", "random"], default="ascending")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    n = args.neurons
    os.makedirs(args.out, exist_ok=True)
    save = lambda name, array: np.save(os.path.join(args.out, name + ".npy"), array)  # noqa: E731
    save("r0", rng.random(n, dtype=np.float32))
    save("baseline", rng.random(n, dtype=np.float32))
    if args.fan_in is not None:
        write_fixed_fan_in(args.out, n, args.fan_in, args.order, args.seed)
        return
    # Each connection present with probability P: a binomial fan-in, then that many distinct neurons.
    fan_in = rng.binomial(n, args.probability, n) if n else np.zeros(0, dtype=np.int64)
    cols = []
    for k in fan_in:
        chosen = np.unique(rng.integers(0, n, int(k * 1.2) + 8))
        while len(chosen) < k:
            chosen = np.unique(np.concatenate([chosen, rng.integers(0, n, k)]))
        chosen = rng.permutation(chosen)[:k]
        cols.append(rng.permutation(chosen) if args.order == "random" else np.sort(chosen))
    rows = np.concatenate([[0], np.cumsum(fan_in)]).astype(np.int32)
    cols = np.concatenate(cols).astype(np.int32) if cols else np.zeros(0, dtype=np.int32)
    save("row", rows)
    save("col", cols)
    scale = np.repeat(1 / np.sqrt(np.maximum(fan_in, 1)), fan_in)
    save("w", (rng.uniform(-1, 1, len(cols)) * scale).astype(np.float32))


ROWS_A_CHUNK = 2048


def fill_chunk(job):
    """Rows [first, first + ROWS_A_CHUNK) of pre and w, from a generator of the chunk's own (its index
    spawned from the seed): the network does not depend on how many processes write it."""
    out, n, c, order, seed, index = job
    first = index * ROWS_A_CHUNK
    rows = min(ROWS_A_CHUNK, n - first)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(index,)))
    pre = np.load(os.path.join(out, "pre.npy"), mmap_mode="r+")
    w = np.load(os.path.join(out, "w.npy"), mmap_mode="r+")
    block = rng.integers(0, max(n, 1), (rows, c), dtype=np.int32)
    if order == "ascending":
        block.sort(axis=1)
    pre[first:first + rows] = block
    w[first:first + rows] = rng.uniform(-1, 1, (rows, c)).astype(np.float32) / np.float32(np.sqrt(max(c, 1)))
    pre.flush()
    w.flush()


def write_fixed_fan_in(out, n, c, order, seed):
    """Presynaptic neurons drawn with replacement (seed 001's fixed fan-in), chunks of rows written in
    parallel into the .npy files (80,000 x 8,192 is 5 GB)."""
    for name, dtype in (("pre", np.int32), ("w", np.float32)):
        np.lib.format.open_memmap(os.path.join(out, name + ".npy"), mode="w+", dtype=dtype, shape=(n, c)).flush()
    jobs = [(out, n, c, order, seed, i) for i in range((n + ROWS_A_CHUNK - 1) // ROWS_A_CHUNK)] if c else []
    processes = min(len(jobs), os.cpu_count() or 1, 32)
    if processes > 1:
        with multiprocessing.Pool(processes) as pool:
            pool.map(fill_chunk, jobs)
    else:
        for job in jobs:
            fill_chunk(job)


if __name__ == "__main__":
    main()
