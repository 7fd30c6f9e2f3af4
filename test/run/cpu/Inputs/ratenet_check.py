"""The rate network (examples/rate-network/ratenet.poly) on random inputs, checked against a plain
float64 evaluation of its equations written here independently of polyc.

ratenet_check.py gen DIR N C T     writes r0, pre, w, baseline (pre has indices outside [0, N) too)
ratenet_check.py check DIR T       compares DIR/rT.npy with the evaluation; prints the error
"""
import sys

import numpy as np

TAU = 10.0


def generate(folder, n, c, seed):
    rng = np.random.default_rng(seed)
    np.save(f"{folder}/r0.npy", rng.uniform(0, 1, n).astype(np.float32))
    # A few indices out of range: the boundary rule (zero) makes those reads 0.
    np.save(f"{folder}/pre.npy", rng.integers(-2, n + 2, size=(n, c)).astype(np.int32))
    np.save(f"{folder}/w.npy", rng.uniform(-0.5, 1.0, (n, c)).astype(np.float32))
    np.save(f"{folder}/baseline.npy", rng.uniform(0, 0.2, n).astype(np.float32))


def evaluate(folder, steps):
    r0 = np.load(f"{folder}/r0.npy").astype(np.float64)
    pre = np.load(f"{folder}/pre.npy")
    w = np.load(f"{folder}/w.npy").astype(np.float64)
    baseline = np.load(f"{folder}/baseline.npy").astype(np.float64)
    n, c = pre.shape
    if steps == 0:
        return np.zeros(n)  # rT[j] = r[T - 1, j] reads before the first row: zero
    rate = r0.copy()
    for _ in range(1, steps):
        total = np.zeros(n)
        for j in range(n):
            for k in range(c):
                src = pre[j, k]
                if 0 <= src < n:
                    total[j] += w[j, k] * rate[src]
        rate = rate + (np.maximum(total + baseline, 0.0) - rate) / TAU
    return rate


def main():
    if sys.argv[1] == "gen":
        folder, n, c = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        generate(folder, n, c, seed=n * 31 + c)
        return 0
    folder, steps = sys.argv[2], int(sys.argv[3])
    expected = evaluate(folder, steps)
    got = np.load(f"{folder}/rT.npy").astype(np.float64)
    if got.shape != expected.shape:
        print(f"ratenet T={steps}: shape {got.shape}, expected {expected.shape}: FAIL")
        return 1
    scale = max(np.max(np.abs(expected)), 1e-30) if expected.size else 1.0
    error = np.max(np.abs(got - expected)) / scale if expected.size else 0.0
    verdict = "ok" if error <= 1e-5 else "FAIL"
    print(f"ratenet T={steps}: relative error {error:.2e}: {verdict}")
    return 0 if verdict == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
