#!/usr/bin/env python3
"""Training sets and initial weights for mlp.poly and classify.poly (seed 003's networks), as .npy files:

  X.npy [P, I]   input cases, standardised features, the last column 1 (the hidden units' bias)
  D.npy [P, K]   desired outputs: 0 or 1 (one output), one-hot (several)
  labels.npy [P] the class of each case (int32)
  eta.npy        the learning rate (a scalar; the gradients are sums over the P cases)
  W1.npy [J, I], W2.npy [K, J]   initial weights, uniform in +-1 / sqrt(fan-in)

  make_data.py DIR --dataset xor|iris|adult-size|random [--cases P] [--features F] [--hidden J]
               [--outputs K] [--eta X] [--seed S]

xor: the 4 cases of exclusive or. iris: Fisher's 150 flowers, 4 features, 3 classes (scikit-learn's copy:
`pip install scikit-learn`). adult-size: the size of seed 003's adult set, 32,561 cases of 13 features
(14 inputs with the bias), one output, synthetic: the classes of a random teacher network, split at its
median (the real set is not bundled). random: uniform cases and targets of any size (tests).
"""
import argparse
import os

import numpy as np


def xor(rng, args):
    features = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.float64)
    return features, np.array([0, 1, 1, 0])


def iris(rng, args):
    try:
        from sklearn.datasets import load_iris
    except ImportError:
        raise SystemExit("make_data.py: iris needs scikit-learn (pip install scikit-learn)")
    data = load_iris()
    return data.data.astype(np.float64), data.target


def adult_size(rng, args):
    cases, features = args.cases or 32561, args.features or 13
    x = rng.normal(size=(cases, features))
    teacher = np.tanh(x @ rng.normal(size=(features, 8))) @ rng.normal(size=8)
    return x, (teacher > np.median(teacher)).astype(np.int64)


def random_cases(rng, args):
    cases, features = args.cases or 64, args.features or 8
    return rng.uniform(-1, 1, (cases, features)), rng.integers(0, args.outputs or 2, cases)


DATASETS = {"xor": xor, "iris": iris, "adult-size": adult_size, "random": random_cases}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("--dataset", choices=sorted(DATASETS), required=True)
    parser.add_argument("--cases", type=int, help="adult-size and random: the number of cases")
    parser.add_argument("--features", type=int, help="adult-size and random: features a case")
    parser.add_argument("--hidden", type=int, default=0, help="hidden units (default: from the dataset)")
    parser.add_argument("--outputs", type=int, help="random: classes (one output for 2)")
    parser.add_argument("--eta", type=float, help="learning rate (default: from the dataset)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    features, labels = DATASETS[args.dataset](rng, args)
    if args.dataset != "xor":
        spread = features.std(axis=0)
        features = (features - features.mean(axis=0)) / np.where(spread > 0, spread, 1)
    cases = len(labels)
    x = np.hstack([features, np.ones((cases, 1))])
    classes = int(labels.max()) + 1 if cases else 2
    if args.dataset == "random" and args.outputs:
        classes = max(args.outputs, 2)
    outputs = 1 if classes <= 2 else classes
    d = labels.reshape(-1, 1).astype(np.float64) if outputs == 1 else np.eye(outputs)[labels]
    hidden = args.hidden or {"xor": 4, "iris": 8, "adult-size": 64, "random": 16}[args.dataset]
    # Full-batch gradients are sums over the cases: the rate shrinks with their number.
    eta = args.eta if args.eta is not None else (2.0 if args.dataset == "xor" else 2.0 / max(cases, 1))
    w1 = rng.uniform(-1, 1, (hidden, x.shape[1])) / np.sqrt(x.shape[1])
    w2 = rng.uniform(-1, 1, (outputs, hidden)) / np.sqrt(hidden)
    os.makedirs(args.folder, exist_ok=True)
    for name, value, dtype in (("X", x, np.float32), ("D", d, np.float32), ("labels", labels, np.int32),
                               ("eta", np.array(eta), np.float32), ("W1", w1, np.float32), ("W2", w2, np.float32)):
        np.save(os.path.join(args.folder, name + ".npy"), np.asarray(value, dtype=dtype))
    print(f"{args.dataset}: {cases} cases, {x.shape[1]} inputs (bias included), {hidden} hidden, "
          f"{outputs} output{'s' if outputs > 1 else ''}, eta {eta:g}")


if __name__ == "__main__":
    main()
