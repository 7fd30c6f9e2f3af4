#!/usr/bin/env python3
"""Differential check of `polyc run` (the reference interpreter) against an executable that polyc built
for another target: the same random inputs, every output compared.

differential.py --polyc POLYC --exe EXE --work DIR [--sizes N=5,T=2] FILE.poly

The interface (params, arrays, dtypes, shapes) comes from `polyc run FILE.poly --help`, which prints what
the executable's --help prints. Inputs: the PolyBench kernels' generators (test/polybench/Inputs/
reference.py) for the kernels, per-example generators below for the examples (stable IIR feedback,
gather indices partly out of range), uniform values otherwise. Every param is given with --param.

`polyc run` computes in float64 by default and in the declared types with --exact-types; both are
compared with EXE. Per output, the difference is max|run - exe| / max(max|exe|, 1e-30): at most 1e-5
for f32 outputs (float64 against float32 arithmetic), 1e-9 for f64 (only the order of sums differs),
0 for i32. Prints `PROGRAM OUTPUT: relative difference D, exact types D: ok` (or FAIL) per output and
exits 1 on a failure.
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "polybench", "Inputs"))
from reference import KERNELS  # noqa: E402

DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32}
TOLERANCE = {"float32": 1e-5, "float64": 1e-9, "int32": 0.0}


def interface(polyc, poly):
    """([params], {name: (role, dtype, shape text)}) from `polyc run FILE --help`."""
    text = subprocess.run([polyc, "run", poly, "--help"], capture_output=True, text=True, check=True).stdout
    params = re.findall(r"^\s+--param (\w+)=VALUE", text, re.M)
    arrays = {}
    for _, name, role, dtype, shape in re.findall(
            r"--(in|out) (\w+)=FILE\s+(input|output|inout)\s+(\w+)\s+(\[.*?\]|scalar)", text):
        arrays[name] = (role, dtype, shape)
    return params, arrays


def shape_of(text, sizes):
    if text == "scalar":
        return ()
    return tuple(int(eval(extent, {}, dict(sizes))) for extent in text[1:-1].split(","))


def iir2d_inputs(shapes, rng):
    m = shapes["a"][0]
    a = rng.uniform(0.0, 1.0, (m, m))
    b = rng.uniform(-1.0, 1.0, (m, m))
    b[0, 0] = 0.0
    # sum |b| < 1 keeps the quarter-plane recursion stable (examples/iir2d/generate_inputs.py).
    return {"x": rng.uniform(0.0, 1.0, shapes["x"]), "a": a / a.sum(), "b": b * 0.9 / max(np.abs(b).sum(), 1e-30)}


def ratenet_inputs(shapes, rng):
    n, c = shapes["pre"]
    # Some presynaptic indices outside [0, N): the boundary rule (zero) applies to gathers too.
    return {"r0": rng.uniform(0, 1, n), "pre": rng.integers(-2, n + 2, (n, c)), "w": rng.uniform(-0.5, 1.0, (n, c)),
            "baseline": rng.uniform(0, 0.2, n)}


def mlp_inputs(shapes, rng):
    return {"X": rng.uniform(-1, 1, shapes["X"]), "D": rng.uniform(0, 1, shapes["D"]), "eta": np.array(0.05),
            "W1": rng.uniform(-0.5, 0.5, shapes["W1"]), "W2": rng.uniform(-0.5, 0.5, shapes["W2"])}


EXAMPLES = {"iir2d": iir2d_inputs, "ratenet": ratenet_inputs, "mlp": mlp_inputs}


def inputs_for(program, arrays, sizes, rng):
    shapes = {name: shape_of(shape, sizes) for name, (_, _, shape) in arrays.items()}
    if program in KERNELS:
        return KERNELS[program].generate(sizes, rng)
    if program in EXAMPLES:
        return EXAMPLES[program](shapes, rng)
    return {name: rng.uniform(0, 1, shapes[name]) for name, (role, _, _) in arrays.items() if role != "output"}


def run(command, label):
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode:
        sys.stdout.write(result.stdout + result.stderr)
        print(f"{label} exited with status {result.returncode}: FAIL")
        return False
    return True


def difference(got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        return float("inf")
    if want.size == 0:
        return 0.0
    got, want = got.astype(np.float64), want.astype(np.float64)
    if not (np.all(np.isfinite(got)) and np.all(np.isfinite(want))):
        return float("inf")
    return float(np.abs(got - want).max()) / max(float(np.abs(want).max()), 1e-30)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("poly")
    parser.add_argument("--polyc", required=True)
    parser.add_argument("--exe", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--sizes", default="")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    program = os.path.basename(args.poly)[:-len(".poly")]
    sizes = {k: int(v) for k, v in (item.split("=") for item in filter(None, args.sizes.split(",")))}
    params, arrays = interface(args.polyc, args.poly)
    if sorted(params) != sorted(sizes):
        raise SystemExit(f"differential.py: {program} has params {params}, --sizes gives {sorted(sizes)}")
    os.makedirs(args.work, exist_ok=True)
    values = inputs_for(program, arrays, sizes, np.random.default_rng(args.seed))
    common = [f"--param={name}={sizes[name]}" for name in params]
    for name, (role, dtype, _) in arrays.items():
        if role != "output":
            path = os.path.join(args.work, f"{name}.npy")
            np.save(path, np.asarray(values[name]).astype(DTYPES[dtype]))
            common += ["--in", f"{name}={path}"]
    outputs = [name for name, (role, _, _) in arrays.items() if role != "input"]
    runs = {"exe": [args.exe], "run": [args.polyc, "run", args.poly], "exact": [args.polyc, "run", args.poly,
                                                                              "--exact-types"]}
    for tag, command in runs.items():
        outs = [f"--out={name}={os.path.join(args.work, f'{name}_{tag}.npy')}" for name in outputs]
        if not run(command + common + outs, f"{program}: {tag}"):
            return 1
    status = 0
    for name in outputs:
        dtype = arrays[name][1]
        want = np.load(os.path.join(args.work, f"{name}_exe.npy"))
        plain = difference(np.load(os.path.join(args.work, f"{name}_run.npy")), want)
        exact = difference(np.load(os.path.join(args.work, f"{name}_exact.npy")), want)
        ok = plain <= TOLERANCE[dtype] and exact <= TOLERANCE[dtype]
        status |= not ok
        print(f"{program} {name}: relative difference {plain:.1e}, exact types {exact:.1e}: {'ok' if ok else 'FAIL'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
