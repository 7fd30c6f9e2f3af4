#!/usr/bin/env python3
"""mlp.poly's training and classify.poly's forward pass in float64 with NumPy, written apart from polyc,
from the files make_data.py writes; compared with what polyc's executables wrote.

  reference.py DIR EPOCHS [--trained W1.npy W2.npy] [--loss LOSS.npy] [--classified Y.npy]
               [--tolerance X]

Prints the reference's loss after EPOCHS epochs and its accuracy on the training cases; with --trained,
the trained weights' largest difference from the reference's (relative to the largest weight) and their
accuracy; with --loss, the loss curve's; with --classified, the difference of an executable's outputs
from the forward pass of the --trained weights (or the reference's) and their accuracy. Each comparison
prints "ok" when within the tolerance (float32 sums: 1e-4 by default); the exit status is 1 otherwise.
"""
import argparse
import os
import sys

import numpy as np


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def forward(x, w1, w2):
    h = sigmoid(x @ w1.T)
    return h, sigmoid(h @ w2.T)


def train(x, d, eta, w1, w2, epochs):
    """The equations of mlp.poly, in its textual order: the hidden deltas read W2 before its update."""
    loss = np.zeros(epochs)
    for e in range(epochs):
        h, y = forward(x, w1, w2)
        d2 = -(d - y) * y * (1 - y)
        d1 = (d2 @ w2) * h * (1 - h)
        loss[e] = np.sum((d - y) ** 2) / 2
        w2 = w2 - eta * d2.T @ h
        w1 = w1 - eta * d1.T @ x
    return w1, w2, loss


def accuracy(y, labels):
    predicted = (y[:, 0] > 0.5).astype(int) if y.shape[1] == 1 else np.argmax(y, axis=1)
    return float(np.mean(predicted == labels)) if len(labels) else 1.0


def compare(name, got, expected, tolerance):
    if got.shape != expected.shape:
        print(f"{name}: shape {got.shape}, expected {expected.shape}: FAIL")
        return False
    scale = max(float(np.max(np.abs(expected))) if expected.size else 0.0, 1e-30)
    error = float(np.max(np.abs(got - expected))) / scale if expected.size else 0.0
    verdict = "ok" if error <= tolerance else "FAIL"
    print(f"{name}: relative difference {error:.2e}: {verdict}")
    return verdict == "ok"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("epochs", type=int)
    parser.add_argument("--trained", nargs=2, metavar=("W1", "W2"))
    parser.add_argument("--loss")
    parser.add_argument("--classified")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    load = lambda name: np.load(os.path.join(args.folder, name + ".npy")).astype(np.float64)  # noqa: E731
    x, d, eta = load("X"), load("D"), float(load("eta"))
    labels = np.load(os.path.join(args.folder, "labels.npy"))
    w1, w2, loss = train(x, d, eta, load("W1"), load("W2"), args.epochs)
    reference_y = forward(x, w1, w2)[1]
    final = np.sum((d - reference_y) ** 2) / 2
    print(f"reference: loss {final:.6g} after {args.epochs} epochs, accuracy {100 * accuracy(reference_y, labels):.1f}%")
    ok = True
    weights = (w1, w2)
    if args.trained:
        got = [np.load(path).astype(np.float64) for path in args.trained]
        ok &= compare("W1", got[0], w1, args.tolerance)
        ok &= compare("W2", got[1], w2, args.tolerance)
        if got[0].shape == w1.shape and got[1].shape == w2.shape:
            weights = tuple(got)
            print(f"trained weights: accuracy {100 * accuracy(forward(x, *weights)[1], labels):.1f}%")
    if args.loss:
        ok &= compare("loss", np.load(args.loss).astype(np.float64), loss, args.tolerance)
    if args.classified:
        y = np.load(args.classified).astype(np.float64)
        ok &= compare("y", y, forward(x, *weights)[1], args.tolerance)
        if y.shape == reference_y.shape:
            print(f"classified: accuracy {100 * accuracy(y, labels):.1f}%")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
