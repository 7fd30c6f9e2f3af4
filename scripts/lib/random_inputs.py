"""Random inputs for a built polyc executable, of the shapes its --help gives for the params (used by
scripts/bench-mpi.py and test/run/mpi/Inputs/mpi_compare.py)."""
import os
import re
import subprocess

import numpy as np

DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32}


def arrays_of(exe):
    """(flag, name, role, dtype, shape text) for each array in the executable's --help."""
    text = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    found = []
    for line in text.splitlines():
        m = re.match(r"\s+--(in|out|in/--out) (\w+)=FILE\s+(\w+)\s+(\w+)\s+(\[.*\]|scalar)?", line)
        if m:
            found.append(m.groups())
    return found


def extent(text, params):
    """The value of an extent as --help prints it ("2*N + 1", "(H + 1) / 2": a floor division)."""
    return eval(text.replace("/", "//"), {}, params)


def write_random_inputs(exe, params, bounds, work, seed=1):
    """Writes WORK/NAME.npy for each input and inout: floats from a standard normal (a scalar in
    [0.1, 1)), i32 values in [0, BOUND) with BOUND from `bounds[NAME]` (a param expression, default 1).
    Returns the command-line arguments that pass them and the params, and the names of the outputs."""
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(seed)
    arguments, outputs = [], []
    for flag, name, role, dtype, shape in arrays_of(exe):
        if flag != "in":
            outputs.append(name)
        if flag == "out":
            continue
        dims = [] if not shape or shape == "scalar" else [extent(d, params) for d in shape[1:-1].split(",")]
        if dtype == "int32":
            data = rng.integers(0, max(1, eval(bounds.get(name, "1"), {}, params)), size=dims).astype(np.int32)
        else:
            data = rng.standard_normal(dims).astype(DTYPES[dtype]) if dims else DTYPES[dtype](rng.uniform(0.1, 1))
        path = os.path.join(work, name + ".npy")
        np.save(path, data)
        arguments += ["--in", f"{name}={path}"]
    arguments += [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
    return arguments, outputs
