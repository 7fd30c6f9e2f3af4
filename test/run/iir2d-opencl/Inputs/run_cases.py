#!/usr/bin/env python3
"""Runs built iir2d executables on random inputs of several shapes and windows and compares each
output with iir2d-reference (an independent float64 evaluation) by compare.py's measure: the largest
absolute error over the largest reference magnitude, at most RTOL. Prints one line per case and a
summary; exits 1 if any case failed.

run_cases.py --work DIR --reference EXE --examples DIR --case NAME=EXE[:ENV=VALUE,...] ...
             --shapes HxW,... --windows M,... [--big HxW --big-windows M,...] [--rtol 1e-5]
"""
import argparse
import os
import subprocess
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", required=True)
    parser.add_argument("--reference", required=True)
    parser.add_argument("--examples", required=True)
    parser.add_argument("--case", action="append", required=True,
                        help="NAME=EXE or NAME=EXE:VAR=VALUE,VAR=VALUE (environment for the run)")
    parser.add_argument("--shapes", required=True)
    parser.add_argument("--windows", required=True)
    parser.add_argument("--big", default="")
    parser.add_argument("--big-windows", default="")
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()

    cases = []
    for spec in args.case:
        name, rest = spec.split("=", 1)
        exe, _, env_text = rest.partition(":")
        env = dict(item.split("=", 1) for item in env_text.split(",") if item)
        cases.append((name, exe, env))

    runs = []
    for shape in args.shapes.split(","):
        for m in args.windows.split(","):
            runs.append((shape, int(m)))
    if args.big:
        for m in args.big_windows.split(","):
            runs.append((args.big, int(m)))

    failed = 0
    for shape, m in runs:
        h, w = (int(v) for v in shape.split("x"))
        folder = os.path.join(args.work, f"{h}x{w}_M{m}")
        os.makedirs(folder, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(args.examples, "iir2d", "generate_inputs.py"), "--height",
                        str(h), "--width", str(w), "--window", str(m), "--seed", str(h * 1000 + w * 10 + m),
                        "--out", folder], check=True)
        ref = os.path.join(folder, "y_ref.npy")
        subprocess.run([args.reference] + [os.path.join(folder, f) for f in ("x.npy", "a.npy", "b.npy")] + [ref],
                       check=True)
        want = np.load(ref)
        for name, exe, env in cases:
            out = os.path.join(folder, f"y_{name}.npy")
            if os.path.exists(out):
                os.remove(out)
            command = [exe, "--param", f"M={m}", "--in", f"x={folder}/x.npy", "--in", f"a={folder}/a.npy", "--in",
                       f"b={folder}/b.npy", "--out", f"y={out}"]
            result = subprocess.run(command, env={**os.environ, **env}, capture_output=True, text=True,
                                    timeout=120)
            if result.returncode != 0:
                print(f"{name} {h}x{w} M={m}: FAIL (exit {result.returncode}): {result.stderr.strip()[-400:]}")
                failed += 1
                continue
            got = np.load(out).astype(np.float64)
            scale = float(np.max(np.abs(want))) if want.size else 0.0
            error = float(np.max(np.abs(got - want))) if want.size else 0.0
            relative = error / scale if scale > 0 else error
            ok = got.shape == want.shape and np.all(np.isfinite(got)) and relative <= args.rtol
            failed += not ok
            print(f"{name} {h}x{w} M={m}: relative error {relative:.2e}: {'ok' if ok else 'FAIL'}")
    print(f"{len(runs) * len(cases) - failed} cases ok, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
