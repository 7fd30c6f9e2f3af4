"""MLP training (examples/mlp/mlp.poly) on random inputs, checked against a float64 numpy evaluation
of its equations written here independently of polyc.

mlp_check.py gen DIR P I J K       writes X, D, eta, W1, W2
mlp_check.py check DIR E           compares DIR/{W1,W2,loss}_out.npy with E epochs of the evaluation
"""
import sys

import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def main():
    folder = sys.argv[2]
    if sys.argv[1] == "gen":
        p, i, j, k = (int(v) for v in sys.argv[3:7])
        rng = np.random.default_rng(p + 7 * i + 13 * j + 17 * k)
        np.save(f"{folder}/X.npy", rng.uniform(-1, 1, (p, i)).astype(np.float32))
        np.save(f"{folder}/D.npy", rng.uniform(0, 1, (p, k)).astype(np.float32))
        np.save(f"{folder}/eta.npy", np.array(0.05, dtype=np.float32))
        np.save(f"{folder}/W1.npy", rng.uniform(-0.5, 0.5, (j, i)).astype(np.float32))
        np.save(f"{folder}/W2.npy", rng.uniform(-0.5, 0.5, (k, j)).astype(np.float32))
        return 0
    epochs = int(sys.argv[3])
    X = np.load(f"{folder}/X.npy").astype(np.float64)
    D = np.load(f"{folder}/D.npy").astype(np.float64)
    eta = float(np.load(f"{folder}/eta.npy"))
    W1 = np.load(f"{folder}/W1.npy").astype(np.float64)
    W2 = np.load(f"{folder}/W2.npy").astype(np.float64)
    loss = np.zeros(epochs)
    for e in range(epochs):
        h = sigmoid(X @ W1.T)
        y = sigmoid(h @ W2.T)
        d2 = -(D - y) * y * (1 - y)
        d1 = (d2 @ W2) * h * (1 - h)  # reads W2 before its update (textual order)
        loss[e] = np.sum((D - y) ** 2) / 2
        W2 = W2 - eta * d2.T @ h
        W1 = W1 - eta * d1.T @ X
    status = 0
    for name, expected in (("W1", W1), ("W2", W2), ("loss", loss)):
        got = np.load(f"{folder}/{name}_out.npy").astype(np.float64)
        if got.shape != expected.shape:
            print(f"mlp {name}: shape {got.shape}, expected {expected.shape}: FAIL")
            status = 1
            continue
        scale = max(np.max(np.abs(expected)), 1e-30)
        error = np.max(np.abs(got - expected)) / scale
        verdict = "ok" if error <= 1e-4 else "FAIL"
        print(f"mlp {name}: relative error {error:.2e}: {verdict}")
        status |= verdict != "ok"
    return status


if __name__ == "__main__":
    sys.exit(main())
