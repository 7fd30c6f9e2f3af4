#!/usr/bin/env python3
"""Frames per second of the image-pipeline executables (docs/performance.md, "Image pipeline"): for each
size, the camera photograph (examples/iir2d/data/camera.png) resized to it, each executable run with
--repeat K --json; FPS = 1 / median compute time (uploads and downloads excluded). --program canny (the
default, run with --param R=ROUNDS: 0, the double threshold alone, or 100000, the hysteresis to its end)
or pyrlk (the second frame: the photograph moved 3 pixels right and 2 down). With --opencv, the same work
in OpenCV on this machine's CPU, timed here over K runs: cv2.GaussianBlur 5 x 5 then cv2.Canny (which
always runs its hysteresis), or cv2.calcOpticalFlowPyrLK at every pixel (3 levels, a 7 x 7 window, 4
iterations). Prints a markdown table:

  bench.py [--program canny|pyrlk] [--rounds R] [--sizes 640x480,1920x1080] [--repeat K] [--opencv] [--images DIR] LABEL=EXE ...
  bench.py --save-images DIR [--sizes ...]     writes DIR/camera-WxH.npy, for a machine without Pillow

The photograph is resized with Pillow, or OpenCV where Pillow is missing, or read from --images DIR.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CAMERA = os.path.join(HERE, "..", "iir2d", "data", "camera.png")


def photograph(width, height, images=None):
    if images:
        return np.load(os.path.join(images, f"camera-{width}x{height}.npy"))
    try:
        from PIL import Image
        grey = np.asarray(Image.open(CAMERA).convert("L").resize((width, height), Image.BILINEAR))
    except ImportError:
        import cv2
        grey = cv2.resize(cv2.imread(CAMERA, cv2.IMREAD_GRAYSCALE), (width, height), interpolation=cv2.INTER_LINEAR)
    return grey.astype(np.float32) / 255


def program_inputs(program, work, image):
    """The executable's --in arguments for a frame."""
    if program == "canny":
        arrays = {"img": image, "low": np.float32(0.1), "high": np.float32(0.3)}
    else:
        arrays = {"A": image * 255, "B": np.roll(image * 255, (2, 3), axis=(0, 1))}
    args = []
    for name, value in arrays.items():
        np.save(os.path.join(work, name + ".npy"), value)
        args += ["--in", f"{name}={work}/{name}.npy"]
    return args


def polyc_fps(program, exe, work, image, repeat, rounds):
    outputs = ["edges"] if program == "canny" else ["u", "v"]
    params = ["--param", f"R={rounds}"] if program == "canny" else []
    command = [exe] + params + program_inputs(program, work, image) + \
        [a for name in outputs for a in ("--out", f"{name}={work}/{name}.npy")]
    run = subprocess.run(command + ["--repeat", str(repeat), "--json"], capture_output=True, text=True, check=True)
    return 1.0 / json.loads(run.stdout.strip().splitlines()[-1])["median_s"]


def opencv_fps(program, image, repeat):
    import cv2
    grey = (image * 255).astype(np.uint8)
    if program == "pyrlk":
        second = np.roll(grey, (2, 3), axis=(0, 1))
        h, w = grey.shape
        points = np.stack(np.meshgrid(np.arange(w), np.arange(h)), -1).reshape(-1, 1, 2).astype(np.float32)
        criteria = (cv2.TERM_CRITERIA_COUNT, 4, 0)
        work = lambda: cv2.calcOpticalFlowPyrLK(grey, second, points, None, winSize=(7, 7), maxLevel=2,
                                                criteria=criteria)
    else:
        work = lambda: cv2.Canny(cv2.GaussianBlur(grey, (5, 5), 1.0), 25, 75)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return 1.0 / float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--program", choices=("canny", "pyrlk"), default="canny")
    parser.add_argument("--rounds", type=int, default=100000, help="canny.poly's R: hysteresis rounds at most")
    parser.add_argument("--sizes", default="640x480,1920x1080")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--opencv", action="store_true")
    parser.add_argument("--images")
    parser.add_argument("--save-images")
    parser.add_argument("executables", nargs="*", metavar="LABEL=EXE")
    args = parser.parse_args()
    sizes = [tuple(map(int, size.split("x"))) for size in args.sizes.split(",")]
    if args.save_images:
        os.makedirs(args.save_images, exist_ok=True)
        for width, height in sizes:
            np.save(os.path.join(args.save_images, f"camera-{width}x{height}.npy"), photograph(width, height))
        return
    columns = [entry.split("=", 1) for entry in args.executables]
    header = ["size"] + [f"{label} FPS" for label, _ in columns] + (["OpenCV CPU FPS"] if args.opencv else [])
    print("| " + " | ".join(header) + " |")
    print("| --- |" + " ---: |" * (len(header) - 1))
    with tempfile.TemporaryDirectory() as work:
        for width, height in sizes:
            image = photograph(width, height, args.images)
            row = [f"{width}x{height}"] + [f"{polyc_fps(args.program, exe, work, image, args.repeat, args.rounds):.0f}"
                                           for _, exe in columns]
            if args.opencv:
                row.append(f"{opencv_fps(args.program, image, args.repeat):.0f}")
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
