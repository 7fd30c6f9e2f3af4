#!/usr/bin/env python3
"""Milliseconds an epoch of polyc's mlp.poly executable beside PyTorch eager and torch.compile
(torch_peer.py) on the same data, from one run (issue: MLP training faster than PyTorch on the same GPU).
Each network's data comes from make_data.py (or DATA_ROOT/NAME when that folder exists, for datasets the
machine cannot make, such as iris without scikit-learn). polyc: `EXE --param E=EPOCHS --repeat R --json`,
its median compute time over EPOCHS; the peers: torch_peer.py's median. GFLOP/s counts the matrix
products: 4 P I J + 6 P J K an epoch (forward, hidden deltas, both gradients).

  bench.py EXE [--networks xor,iris,adult-size,wide] [--epochs 100] [--repeat 3] [--torch PYTHON]
           [--data-root DIR] [--work-dir DIR]

wide is 32,561 cases x 784 inputs -> 1,024 hidden -> 10 outputs (random data).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
NETWORKS = {
    "xor": ["--dataset", "xor"],
    "iris": ["--dataset", "iris"],
    "adult-size": ["--dataset", "adult-size"],
    "wide": ["--dataset", "random", "--cases", "32561", "--features", "783", "--outputs", "10", "--hidden", "1024"],
}


def polyc_ms(exe, folder, epochs, repeat):
    inputs = [arg for name in ("X", "D", "eta", "W1", "W2") for arg in ("--in", f"{name}={folder}/{name}.npy")]
    result = subprocess.run([exe, "--param", f"E={epochs}", "--repeat", str(repeat), "--json"] + inputs,
                            capture_output=True, text=True, timeout=1800)
    if result.returncode:
        raise SystemExit(f"{exe} failed ({result.returncode}): {result.stderr[-400:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])["median_s"] / epochs * 1e3


def torch_ms(python, folder, epochs, repeat, compiled):
    command = [python, os.path.join(HERE, "torch_peer.py"), folder, str(epochs), "--repeat", str(repeat)]
    result = subprocess.run(command + (["--compile"] if compiled else []), capture_output=True, text=True,
                            timeout=1800)
    if result.returncode:
        return None, result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "failed"
    line = [l for l in result.stdout.splitlines() if " ms an epoch" in l][-1]
    return float(line.split(": ")[1].split()[0]), None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exe")
    parser.add_argument("--networks", default="xor,iris,adult-size,wide")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--torch", default=sys.executable, help="a Python with PyTorch")
    parser.add_argument("--data-root")
    parser.add_argument("--work-dir")
    args = parser.parse_args()
    print("| network | P x I -> J -> K | polyc (ms an epoch) | GFLOP/s | torch eager | torch.compile | "
          "polyc's speedup over eager |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in args.networks.split(","):
        with tempfile.TemporaryDirectory(dir=args.work_dir) as work:
            folder = os.path.join(args.data_root, name) if args.data_root else ""
            if not os.path.isdir(folder):
                folder = os.path.join(work, name)
                made = subprocess.run([sys.executable, os.path.join(HERE, "make_data.py"), folder] + NETWORKS[name],
                                      capture_output=True, text=True)
                if made.returncode:
                    print(f"| {name} | not run: {made.stderr.strip().splitlines()[-1]} | | | | | |", flush=True)
                    continue
            p, i = np.load(f"{folder}/X.npy", mmap_mode="r").shape
            j, k = np.load(f"{folder}/W1.npy").shape[0], np.load(f"{folder}/W2.npy").shape[0]
            ms = polyc_ms(args.exe, folder, args.epochs, args.repeat)
            eager, eager_error = torch_ms(args.torch, folder, args.epochs, args.repeat, False)
            compiled, compiled_error = torch_ms(args.torch, folder, args.epochs, args.repeat, True)
        gflops = (4 * p * i * j + 6 * p * j * k) / (ms * 1e-3) / 1e9
        show = lambda v, error: f"{v:.4f}" if v is not None else f"failed: {error}"  # noqa: E731
        speedup = f"{eager / ms:.2f}x" if eager is not None else ""
        print(f"| {name} | {p} x {i} -> {j} -> {k} | {ms:.4f} | {gflops:.0f} | {show(eager, eager_error)} | "
              f"{show(compiled, compiled_error)} | {speedup} |", flush=True)


if __name__ == "__main__":
    main()
