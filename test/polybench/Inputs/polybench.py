"""Runs polyc's executables of the PolyBench kernels (test/polybench/*.poly) on generated inputs.

  polybench.py check KERNEL.poly --exe EXE (--sizes N=..,T=.. | --preset small|medium|bench)
                     --work DIR [--rtol R] [--seed S] [--runs K] [--launcher CMD]
      writes the inputs as .npy, runs EXE, compares every output with the float64 reference of
      reference.py and prints `KERNEL OUTPUT: relative error E: ok` (or FAIL) per output, where
      E = max|out - ref| / max(1, max|ref|). Exits 1 on a failure, a missing output or EXE failing.
      --runs K runs EXE K times on the same inputs and reports the worst error (for races);
      --launcher CMD runs it under CMD (compute-sanitizer ...).
  polybench.py time KERNEL --exe EXE (--sizes .. | --preset ..) --work DIR [--repeat K] [--launcher CMD]
      writes the inputs (no reference) and runs EXE --repeat K --json (under CMD); prints the JSON line.
  polybench.py bench DIR LABEL [--preset bench] [--repeat K] [--bandwidth GB/s] [--kernels a,b]
      times every executable DIR/KERNEL (EXE --repeat K --json, inputs generated here, no reference)
      and prints a table: sizes, median compute time and, for the time-stepped stencils, the time per
      step, the bandwidth floor of one step (every state array read once and written once, at the given
      copy bandwidth, counted as bytes read + bytes written) and measured / floor. LABEL (cpu, cuda)
      names the table. Without --bandwidth (or POLYBENCH_COPY_GBS) the CPU's copy bandwidth is measured
      here with numpy (label cpu) or the floor is left out.
  polybench.py sizes KERNEL PRESET
      prints the preset's sizes as N=..,T=..
  polybench.py kernels
      lists the kernels.

The executable's contract (docs/running.md): EXE --param N=.. --in NAME=FILE.npy --out NAME=FILE.npy;
`EXE --help` lists its params and arrays (role, dtype, shape), which is where the arrays come from.
The kernel is named by the .poly file's (or executable's) name without its extension.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import KERNELS, STENCIL_STATE  # noqa: E402

# Sizes per kernel. small: seconds in a sequential Python reference; medium: a larger run for the GPU
# machine, still checkable by the reference; bench: PolyBench's LARGE dataset, MEDIUM for the
# time-stepped stencils (their arrays carry a time dimension); large: PolyBench's LARGE for every kernel
# (the stencils need 5 to 8 GB: the GPU machine).
PRESETS = {
    "jacobi-1d": {"small": "N=37,T=5", "medium": "N=400,T=20", "bench": "N=400,T=100", "large": "N=2000,T=500"},
    "jacobi-2d": {"small": "N=37,T=5", "medium": "N=250,T=20", "bench": "N=250,T=100", "large": "N=1300,T=500"},
    "heat-3d": {"small": "N=13,T=4", "medium": "N=40,T=20", "bench": "N=40,T=100", "large": "N=120,T=500"},
    "fdtd-2d": {"small": "NX=23,NY=31,T=5", "medium": "NX=200,NY=240,T=20", "bench": "NX=200,NY=240,T=100", "large": "NX=1000,NY=1200,T=500"},
    "seidel-2d": {"small": "N=29,T=4", "medium": "N=150,T=10", "bench": "N=400,T=100", "large": "N=2000,T=500"},
    "gemm": {"small": "NI=37,NJ=41,NK=43", "medium": "NI=500,NJ=550,NK=600",
             "bench": "NI=1000,NJ=1100,NK=1200"},
    "2mm": {"small": "NI=33,NJ=37,NK=41,NL=29", "medium": "NI=400,NJ=450,NK=550,NL=600",
            "bench": "NI=800,NJ=900,NK=1100,NL=1200"},
    "atax": {"small": "M=39,N=45", "medium": "M=1900,N=2100", "bench": "M=1900,N=2100"},
    "bicg": {"small": "M=39,N=45", "medium": "M=1900,N=2100", "bench": "M=1900,N=2100"},
    "mvt": {"small": "N=41", "medium": "N=2000", "bench": "N=2000"},
    "gesummv": {"small": "N=43", "medium": "N=1300", "bench": "N=1300"},
    "syrk": {"small": "N=37,M=31", "medium": "N=600,M=500", "bench": "N=1200,M=1000"},
    "trisolv": {"small": "N=41", "medium": "N=1000", "bench": "N=2000"},
    "lu": {"small": "N=23", "medium": "N=200", "bench": "N=2000"},
    "lu-right-looking": {"small": "N=23", "medium": "N=200", "bench": "N=2000"},
    "cholesky": {"small": "N=29", "medium": "N=300", "bench": "N=2000"},
    "durbin": {"small": "N=37", "medium": "N=1000", "bench": "N=2000"},
    "floyd-warshall": {"small": "N=31", "medium": "N=300", "bench": "N=2800"},
}

for sizes in PRESETS.values():
    sizes.setdefault("large", sizes["bench"])

DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32}


def kernel_name(path):
    name = os.path.basename(path)
    return name[:-len(".poly")] if name.endswith(".poly") else name


def parse_sizes(text):
    sizes = {}
    for item in filter(None, text.split(",")):
        key, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()) or not value.strip().isdigit():
            raise SystemExit(f"polybench.py: error: bad size '{item}' (expected NAME=VALUE)")
        sizes[key.strip()] = int(value)
    return sizes


def sizes_of(args, kernel):
    if args.sizes is not None:
        return parse_sizes(args.sizes)
    return parse_sizes(PRESETS[kernel][args.preset])


def exe_interface(exe):
    """The executable's params and arrays from its --help: ([params], {name: (role, dtype, shape)})."""
    try:
        text = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        raise SystemExit(f"polybench.py: error: cannot run {exe} --help: {error}")
    params = re.findall(r"^\s+--param (\w+)=VALUE", text, re.M)
    arrays = {}
    for role_flag, name, role, dtype, shape in re.findall(
            r"--(in|out) (\w+)=FILE\s+(input|output|inout)\s+(\w+)\s+(\[.*?\]|scalar|\(\))?", text):
        arrays[name] = (role, dtype, shape)
    return params, arrays


def write_inputs(kernel, sizes, exe, folder, seed):
    spec = KERNELS[kernel]
    missing = [name for name in spec.params if name not in sizes]
    if missing:
        raise SystemExit(f"polybench.py: error: {kernel} needs sizes for {', '.join(missing)}")
    params, arrays = exe_interface(exe)
    if sorted(params) != sorted(spec.params):
        raise SystemExit(f"polybench.py: error: {exe} has params {params}, {kernel} expects {list(spec.params)}")
    rng = np.random.default_rng(seed)
    inputs = spec.generate(sizes, rng)
    os.makedirs(os.path.join(folder, "in"), exist_ok=True)
    os.makedirs(os.path.join(folder, "out"), exist_ok=True)
    command = [exe] + [f"--param={name}={sizes[name]}" for name in spec.params]
    stored = {}
    for name, (role, dtype, _) in arrays.items():
        if role == "output":
            continue
        if name not in inputs:
            raise SystemExit(f"polybench.py: error: no generator for {kernel}'s input {name}")
        value = np.asarray(inputs[name]).astype(DTYPES[dtype])
        stored[name] = value
        path = os.path.join(folder, "in", f"{name}.npy")
        np.save(path, value)
        command += ["--in", f"{name}={path}"]
    outputs = [name for name, (role, _, _) in arrays.items() if role in ("output", "inout")]
    return command, stored, outputs


def check(args):
    kernel = kernel_name(args.poly)
    spec = KERNELS[kernel]
    sizes = sizes_of(args, kernel)
    command, stored, outputs = write_inputs(kernel, sizes, args.exe, args.work, args.seed)
    for name in outputs:
        command += ["--out", f"{name}={os.path.join(args.work, 'out', f'{name}.npy')}"]
    command = shlex.split(args.launcher) + command
    # The reference sees exactly the values the executable read (rounded to its dtype).
    exact = {name: value.astype(np.int64 if value.dtype.kind == "i" else np.float64)
             for name, value in stored.items()}
    expected = spec.evaluate(exact, sizes)
    tolerance = spec.tolerance if args.rtol is None else args.rtol
    # With --runs K the executable runs K times and each output's line gives the worst of the K runs:
    # a race in the generated code shows up as some runs differing.
    worst = {name: 0.0 for name in outputs}
    problems = {}
    for _ in range(args.runs):
        for name in outputs:
            path = os.path.join(args.work, "out", f"{name}.npy")
            if os.path.exists(path):
                os.remove(path)
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            sys.stderr.write(run.stdout + run.stderr)
            print(f"{kernel}: {os.path.basename(args.exe)} exited with status {run.returncode}: FAIL")
            return 1
        for name in outputs:
            error, problem = compare(os.path.join(args.work, "out", f"{name}.npy"), np.asarray(expected[name]))
            if problem:
                problems.setdefault(name, problem)
            worst[name] = max(worst[name], error)
    status = 0
    for name in outputs:
        if name in problems:
            print(f"{kernel} {name}: {problems[name]}: FAIL")
            status = 1
            continue
        verdict = "ok" if worst[name] <= tolerance else "FAIL"
        print(f"{kernel} {name}: relative error {worst[name]:.2e}: {verdict}")
        status |= verdict != "ok"
    return status


def compare(path, want):
    """(relative error, problem or None) of the output file against the reference."""
    if not os.path.exists(path):
        return float("inf"), "no output written"
    got = np.load(path)
    if got.shape != want.shape:
        return float("inf"), f"shape {got.shape}, expected {want.shape}"
    got = got.astype(np.float64)
    want = want.astype(np.float64)
    if got.size == 0:
        return 0.0, None
    if not np.all(np.isfinite(got)):
        return float("inf"), None
    return float(np.max(np.abs(got - want)) / max(1.0, float(np.max(np.abs(want))))), None

def time_run(args):
    kernel = kernel_name(args.kernel)
    sizes = sizes_of(args, kernel)
    command, _, _ = write_inputs(kernel, sizes, args.exe, args.work, args.seed)
    command = shlex.split(args.launcher) + command + ["--repeat", str(args.repeat), "--json"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(run.stdout + run.stderr)
        print(json.dumps({"program": kernel, "error": f"exit status {run.returncode}"}))
        return 1
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    if not lines:
        sys.stderr.write(run.stdout + run.stderr)
        return 1
    print(lines[-1])
    return 0


def copy_bandwidth_numpy():
    """The host's copy bandwidth in GB/s (bytes read + bytes written), median of 7 copies of 256 MiB."""
    import time
    source = np.ones(1 << 25)
    target = np.empty_like(source)
    times = []
    for _ in range(7):
        start = time.perf_counter()
        np.copyto(target, source)
        times.append(time.perf_counter() - start)
    return 2 * source.nbytes / sorted(times)[3] / 1e9


def bench(args):
    folder = args.dir
    kernels = args.kernels.split(",") if args.kernels else list(KERNELS)
    bandwidth = args.bandwidth or float(os.environ.get("POLYBENCH_COPY_GBS", "0") or 0)
    source = "given"
    if not bandwidth and args.label == "cpu":
        bandwidth, source = copy_bandwidth_numpy(), "measured here with numpy"
    print(f"# polybench {args.label}: {folder}, preset {args.preset}, median of {args.repeat} runs")
    if bandwidth:
        print(f"# copy bandwidth {bandwidth:.1f} GB/s ({source}; bytes read + bytes written)")
    else:
        print("# no copy bandwidth given (--bandwidth or POLYBENCH_COPY_GBS): no floor")
    header = f"{'kernel':<15} {'sizes':<28} {'median s':>10} {'steps':>6} {'s/step':>10} {'floor s/step':>12} {'ratio':>6}"
    print(header)
    print("-" * len(header))
    status = 0
    for kernel in kernels:
        exe = os.path.join(folder, kernel)
        text = PRESETS[kernel][args.preset]
        sizes = parse_sizes(text)
        if not os.access(exe, os.X_OK):
            print(f"{kernel:<15} {text:<28} {'no executable':>10}")
            status = 1
            continue
        work = os.path.join(args.work, kernel)
        try:
            command, stored, _ = write_inputs(kernel, sizes, exe, work, args.seed)
            run = subprocess.run(command + ["--repeat", str(args.repeat), "--json"], capture_output=True,
                                 text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"{kernel:<15} {text:<28} {'timeout':>10}")
            status = 1
            continue
        except SystemExit as error:
            print(f"{kernel:<15} {text:<28} {'error':>10}  {error}")
            status = 1
            continue
        lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
        if run.returncode != 0 or not lines:
            print(f"{kernel:<15} {text:<28} {'exit ' + str(run.returncode):>10}")
            sys.stderr.write(run.stderr[-2000:])
            status = 1
            continue
        median = json.loads(lines[-1])["median_s"]
        row = f"{kernel:<15} {text:<28} {median:>10.4g}"
        if kernel in STENCIL_STATE and sizes.get("T", 0) > 0:
            steps = sizes["T"]
            # One step reads and writes each state array once; the inputs' dtype is the arrays'.
            init = {name: value for name, value in stored.items() if name.endswith("_init")}
            elements = next(iter(init.values())).size
            itemsize = next(iter(init.values())).itemsize
            floor = 2 * len(STENCIL_STATE[kernel]) * elements * itemsize / (bandwidth * 1e9) if bandwidth else 0
            row += f" {steps:>6} {median / steps:>10.4g}"
            row += f" {floor:>12.4g} {median / steps / floor:>6.1f}" if floor else f" {'-':>12} {'-':>6}"
        print(row, flush=True)
        for name in stored:
            os.remove(os.path.join(work, "in", f"{name}.npy"))
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("check", "time"):
        sub = commands.add_parser(name)
        sub.add_argument("poly" if name == "check" else "kernel")
        sub.add_argument("--exe", required=True)
        group = sub.add_mutually_exclusive_group(required=True)
        group.add_argument("--sizes")
        group.add_argument("--preset", choices=("small", "medium", "bench", "large"))
        sub.add_argument("--work", required=True)
        sub.add_argument("--seed", type=int, default=4221)
        sub.add_argument("--launcher", default="",
                         help="a command to run EXE under, e.g. 'compute-sanitizer --tool memcheck'")
        if name == "check":
            sub.add_argument("--rtol", type=float)
            sub.add_argument("--runs", type=int, default=1)
        else:
            sub.add_argument("--repeat", type=int, default=5)
    sub = commands.add_parser("bench")
    sub.add_argument("dir")
    sub.add_argument("label")
    sub.add_argument("--preset", choices=("small", "medium", "bench", "large"), default="bench")
    sub.add_argument("--repeat", type=int, default=5)
    sub.add_argument("--bandwidth", type=float, help="copy bandwidth in GB/s (read + write)")
    sub.add_argument("--kernels", help="comma-separated kernels (default: all)")
    sub.add_argument("--work", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "polybench-bench"))
    sub.add_argument("--timeout", type=float, default=1800, help="seconds per kernel")
    sub.add_argument("--seed", type=int, default=4221)
    sub = commands.add_parser("sizes")
    sub.add_argument("kernel")
    sub.add_argument("preset", choices=("small", "medium", "bench", "large"))
    commands.add_parser("kernels")
    args = parser.parse_args()
    if args.command == "kernels":
        print("\n".join(KERNELS))
        return 0
    if args.command == "bench":
        return bench(args)
    if args.command == "sizes":
        print(PRESETS[kernel_name(args.kernel)][args.preset])
        return 0
    kernel = kernel_name(args.poly if args.command == "check" else args.kernel)
    if kernel not in KERNELS:
        raise SystemExit(f"polybench.py: error: unknown kernel '{kernel}' (known: {', '.join(KERNELS)})")
    return check(args) if args.command == "check" else time_run(args)


if __name__ == "__main__":
    sys.exit(main())
