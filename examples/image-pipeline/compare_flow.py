#!/usr/bin/env python3
"""Endpoint errors of pyrlk.poly's flow and of examples/optical-flow's single-level flow (lkflow.poly) on the
same movie, against its true motion (make_sequence.py), over the same pixels:

  compare_flow.py SEQ LK_U.npy LK_V.npy PYR_U.npy PYR_V.npy [--pyramid-below E] [--single-above E]

LK_U, LK_V: lkflow's flow of the movie SEQ/I.npy (T frames); its last frame is compared. PYR_U, PYR_V:
pyrlk's flow from frame T - 2 to frame T - 1. The pixels are those evaluate.py keeps in the last frame
(away from the edges, a well-conditioned structure tensor). For a translation (make_sequence.py
--motion translate:DX,DY) every pixel moves alike, so pyrlk's flow at a pixel of frame T - 2 and the true
flow at that pixel of frame T - 1 agree. Prints the mean and median endpoint errors of both; with
--pyramid-below and --single-above, checks that pyrlk's median error is below the one bound and lkflow's
above the other (ok or FAIL, exit 1): medians, as a few pixels where a coarse level's window reaches
content that entered the frame make pyrlk's mean several times its median.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "optical-flow"))
from evaluate import well_conditioned  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("seq")
    for name in ("lk_u", "lk_v", "pyr_u", "pyr_v"):
        parser.add_argument(name)
    parser.add_argument("--pyramid-below", type=float)
    parser.add_argument("--single-above", type=float)
    args = parser.parse_args()
    frames = np.load(os.path.join(args.seq, "I.npy"))
    truth = np.load(os.path.join(args.seq, "truth.npy")).astype(np.float64)
    keep = well_conditioned(frames[-1])
    flows = {"single level (lkflow.poly)": (np.load(args.lk_u)[-1], np.load(args.lk_v)[-1]),
             "pyramidal (pyrlk.poly)": (np.load(args.pyr_u), np.load(args.pyr_v))}
    medians = {}
    for label, (u, v) in flows.items():
        error = np.hypot(u.astype(np.float64) - truth[0], v.astype(np.float64) - truth[1])[keep]
        medians[label] = float(np.median(error))
        print(f"{label}: endpoint error mean {error.mean():.3f} px, median {np.median(error):.3f} px "
              f"over {int(keep.sum())} pixels")
    verdicts = []
    if args.pyramid_below is not None:
        verdicts.append(medians["pyramidal (pyrlk.poly)"] < args.pyramid_below)
    if args.single_above is not None:
        verdicts.append(medians["single level (lkflow.poly)"] > args.single_above)
    if verdicts:
        print("compare_flow: " + ("ok" if all(verdicts) else "FAIL"))
        return 0 if all(verdicts) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
