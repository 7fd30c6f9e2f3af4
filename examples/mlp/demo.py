#!/usr/bin/env python3
"""The MLP example end to end: make a dataset (make_data.py), train on it with polyc's build of mlp.poly,
classify the training cases with classify.poly and the trained weights, check both against reference.py,
and draw the loss of each epoch into loss.png.

  demo.py WORKDIR [--dataset xor|iris|adult-size] [--epochs E] [--target cpu|cuda|opencl] [--polyc PATH]

WORKDIR receives the data, the executables, the trained weights (W1.npy, W2.npy), the outputs (y.npy) and
loss.png.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def run(command):
    print("$ " + " ".join(command), flush=True)
    subprocess.run(command, check=True)


def plot_loss(loss, path, title):
    """A line plot of the loss against the epoch, with PIL alone (no plotting library needed)."""
    from PIL import Image, ImageDraw

    width, height, margin = 640, 400, 60
    image = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(image)
    left, top, right, bottom = margin, 30, width - 20, height - margin
    draw.rectangle([left, top, right, bottom], outline="black")
    high = float(np.max(loss)) if len(loss) else 1.0
    high = high if high > 0 else 1.0
    points = [(left + (right - left) * e / max(len(loss) - 1, 1), bottom - (bottom - top) * float(v) / high)
              for e, v in enumerate(loss)]
    if len(points) > 1:
        draw.line(points, fill=(200, 40, 40), width=2)
    draw.text((left, 8), title, fill="black")
    draw.text((left, bottom + 8), "epoch 0", fill="black")
    draw.text((right - 80, bottom + 8), f"epoch {len(loss) - 1}", fill="black")
    draw.text((4, top), f"{high:.3g}", fill="black")
    draw.text((4, bottom - 10), "0", fill="black")
    draw.text((left + 8, bottom + 30), "squared error before each epoch's update", fill="black")
    image.save(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workdir")
    parser.add_argument("--dataset", default="xor", choices=["xor", "iris", "adult-size"])
    parser.add_argument("--epochs", type=int, default=0, help="default: 2000 (xor), 500 (iris), 100 (adult-size)")
    parser.add_argument("--target", default="cpu", choices=["cpu", "cuda", "opencl"])
    parser.add_argument("--polyc", default=shutil.which("polyc") or "polyc")
    args = parser.parse_args()
    epochs = args.epochs or {"xor": 2000, "iris": 500, "adult-size": 100}[args.dataset]
    work = os.path.abspath(args.workdir)
    data = os.path.join(work, "data")
    os.makedirs(work, exist_ok=True)
    run([sys.executable, os.path.join(HERE, "make_data.py"), data, "--dataset", args.dataset])
    mlp, classify = os.path.join(work, "mlp"), os.path.join(work, "classify")
    run([args.polyc, "build", os.path.join(HERE, "mlp.poly"), "--target=" + args.target, "-o", mlp])
    run([args.polyc, "build", os.path.join(HERE, "classify.poly"), "--target=" + args.target, "-o", classify])
    inputs = [arg for name in ("X", "D", "eta", "W1", "W2") for arg in ("--in", f"{name}={data}/{name}.npy")]
    run([mlp, "--param", f"E={epochs}"] + inputs +
        ["--out", f"W1={work}/W1.npy", "--out", f"W2={work}/W2.npy", "--out", f"loss={work}/loss.npy"])
    run([classify, "--in", f"X={data}/X.npy", "--in", f"W1={work}/W1.npy", "--in", f"W2={work}/W2.npy",
         "--out", f"y={work}/y.npy"])
    check = subprocess.run([sys.executable, os.path.join(HERE, "reference.py"), data, str(epochs), "--trained",
                            f"{work}/W1.npy", f"{work}/W2.npy", "--loss", f"{work}/loss.npy", "--classified",
                            f"{work}/y.npy", "--tolerance", "1e-3"])
    plot_loss(np.load(f"{work}/loss.npy"), os.path.join(work, "loss.png"),
              f"mlp.poly on {args.dataset}, {epochs} epochs ({args.target})")
    print(f"wrote {work}/loss.png")
    return check.returncode


if __name__ == "__main__":
    sys.exit(main())
