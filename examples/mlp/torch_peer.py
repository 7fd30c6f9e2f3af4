#!/usr/bin/env python3
"""The peer: mlp.poly's training in PyTorch, from the files make_data.py writes, with the same equations
(written out, not autograd: the gradients of the summed squared error are exactly mlp.poly's deltas),
float32, TF32 off (FP32 matrix products, as polyc's). Runs EPOCHS epochs a simulation, prints the median
milliseconds an epoch over --repeat simulations after a warm-up one (which pays torch.compile's
compilation), and with --check the final loss's difference from reference.py's float64 training.

  torch_peer.py DIR EPOCHS [--compile] [--device cuda|cpu] [--repeat R] [--check]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference  # noqa: E402


def epoch(x, d, eta, w1, w2):
    h = torch.sigmoid(x @ w1.T)
    y = torch.sigmoid(h @ w2.T)
    d2 = -(d - y) * y * (1 - y)
    d1 = (d2 @ w2) * h * (1 - h)  # reads W2 before its update, as mlp.poly does
    loss = ((d - y) ** 2).sum() / 2
    return w1 - eta * d1.T @ x, w2 - eta * d2.T @ h, loss


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("epochs", type=int)
    parser.add_argument("--compile", action="store_true", help="torch.compile the epoch")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    load = lambda name: torch.from_numpy(np.load(os.path.join(args.folder, name + ".npy"))).to(args.device)  # noqa: E731
    x, d, eta = load("X"), load("D"), float(np.load(os.path.join(args.folder, "eta.npy")))
    step = torch.compile(epoch) if args.compile else epoch
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)

    def simulate():
        w1, w2 = load("W1"), load("W2")
        losses = torch.empty(args.epochs, device=args.device)
        sync()
        start = time.perf_counter()
        for e in range(args.epochs):
            w1, w2, losses[e] = step(x, d, eta, w1, w2)
        sync()
        return time.perf_counter() - start, losses

    simulate()  # warm-up: kernels loaded, torch.compile's compilation
    times = []
    for _ in range(args.repeat):
        seconds, losses = simulate()
        times.append(seconds)
    kind = "torch.compile" if args.compile else "torch eager"
    per_epoch = statistics.median(times) / max(args.epochs, 1)
    print(f"{kind}: {per_epoch * 1e3:.4f} ms an epoch ({args.device}, {args.epochs} epochs)")
    if args.check:
        expected = reference.train(x.double().cpu().numpy(), d.double().cpu().numpy(), eta,
                                   load("W1").double().cpu().numpy(), load("W2").double().cpu().numpy(),
                                   args.epochs)[2]
        got = losses.double().cpu().numpy()
        difference = np.abs(got - expected).max() / max(np.abs(expected).max(), 1e-30)
        print(f"{kind} loss: relative difference {difference:.3g}")


if __name__ == "__main__":
    main()
