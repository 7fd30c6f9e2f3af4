#!/usr/bin/env python3
"""Frames per second of the image-pipeline executables (docs/performance.md, "Image pipeline"): for each
size, the camera photograph (examples/iir2d/data/camera.png) resized to it, each executable run with
--repeat K --json; FPS = 1 / median compute time (uploads and downloads excluded). --program canny (the
default, run with --param R=ROUNDS: 0, the double threshold alone, or 100000, the hysteresis to its end)
or hough (on the photograph's Canny edges with the hysteresis, from reference.py: 180 angles, bins of one
pixel, lines of at least --least votes) or pyrlk (the second frame: the photograph moved 3 pixels right
and 2 down). With --opencv, the same work in OpenCV on this machine's CPU, timed here over K runs:
cv2.GaussianBlur 5 x 5 then cv2.Canny (which always runs its hysteresis), cv2.HoughLines on the same edges,
or cv2.calcOpticalFlowPyrLK at every pixel (3 levels, a 7 x 7 window, 4 iterations). Prints a markdown
table:

  bench.py [--program canny|hough|pyrlk] [--rounds R] [--least V] [--sizes 640x480,1920x1080] [--repeat K] [--opencv] [--images DIR] LABEL=EXE ...
  bench.py --save-images DIR [--sizes ...]     writes DIR/camera-WxH.npy, for a machine without Pillow

The photograph is resized with Pillow, or OpenCV where Pillow is missing, or read from --images DIR.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference  # noqa: E402

ANGLES = 180
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


def hough_edges(image):
    """The photograph's Canny edges after the hysteresis (2 on an edge pixel), as canny.poly gives them."""
    return reference.hysteresis(reference.canny(image, 0.1, 0.3))


def program_inputs(program, work, image, least):
    """The executable's --in arguments for a frame."""
    if program == "canny":
        arrays = {"img": image, "low": np.float32(0.1), "high": np.float32(0.3)}
    elif program == "hough":
        cosines, sines = reference.hough_tables(ANGLES)
        arrays = {"edges": hough_edges(image), "cosines": cosines, "sines": sines, "least": np.int32(least)}
    else:
        arrays = {"A": image * 255, "B": np.roll(image * 255, (2, 3), axis=(0, 1))}
    args = []
    for name, value in arrays.items():
        np.save(os.path.join(work, name + ".npy"), value)
        args += ["--in", f"{name}={work}/{name}.npy"]
    return args


def polyc_fps(program, exe, work, image, repeat, rounds, least):
    outputs = {"canny": ["edges"], "hough": ["votes", "peaks"], "pyrlk": ["u", "v"]}[program]
    params = {"canny": ["--param", f"R={rounds}"],
              "hough": ["--param", f"T={ANGLES}", "--param", f"R={reference.hough_bins(*image.shape)}"],
              "pyrlk": []}[program]
    command = [exe] + params + program_inputs(program, work, image, least) + \
        [a for name in outputs for a in ("--out", f"{name}={work}/{name}.npy")]
    run = subprocess.run(command + ["--repeat", str(repeat), "--json"], capture_output=True, text=True, check=True)
    return 1.0 / json.loads(run.stdout.strip().splitlines()[-1])["median_s"]


def opencv_fps(program, image, repeat, least):
    import cv2
    grey = (image * 255).astype(np.uint8)
    if program == "hough":
        edges = (hough_edges(image) == 2).astype(np.uint8) * 255
        work = lambda: cv2.HoughLines(edges, 1, np.pi / ANGLES, least)  # noqa: E731
    elif program == "pyrlk":
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
    parser.add_argument("--program", choices=("canny", "hough", "pyrlk"), default="canny")
    parser.add_argument("--least", type=int, default=60, help="hough.poly's least: the fewest votes of a line")
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
            row = [f"{width}x{height}"] + [
                f"{polyc_fps(args.program, exe, work, image, args.repeat, args.rounds, args.least):.0f}"
                for _, exe in columns]
            if args.opencv:
                row.append(f"{opencv_fps(args.program, image, args.repeat, args.least):.0f}")
            print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
