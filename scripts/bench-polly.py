#!/usr/bin/env python3
"""polyc's CPU target against clang -O3 and Polly on PolyBench/C 4.2.1 (issue 29).

  scripts/bench-polly.py POLYBENCH_DIR [--kernels gemm,lu] [--preset bench] [--repeat 3]
                         [--march native] [--polyc build/compiler/driver/polyc] [--work DIR]

POLYBENCH_DIR is a checkout of PolyBench/C 4.2.1 (any public mirror; its sources stay out of this
repository). For each kernel of test/polybench/*.poly the script
  - builds PolyBench's C twice with clang-19: `-O3`, and `-O3 -mllvm -polly -mllvm -polly-parallel
    -fopenmp` (Polly's tiling, fusion and OpenMP parallel loops), with -DPOLYBENCH_TIME, the element
    type of the .poly version (DATA_TYPE_IS_FLOAT, _DOUBLE or _INT) and the sizes given as macros
    (so that the checkout's default dataset does not matter);
  - builds polyc's .poly version with `polyc build --target=cpu`;
  - runs each REPEAT times at the same sizes and takes the median: PolyBench's own timer around the
    kernel for the C, the executable's compute region (--repeat K --json) for polyc;
--march CPU compiles all three for that CPU (clang -march, polyc build --march); the default is the
compilers' baseline. The script prints a table of the times and the ratios polyc / Polly and polyc / clang -O3, then the geometric
mean of polyc / Polly over the kernels that ran. Threads: OpenMP's default for both (OMP_NUM_THREADS).
The sizes are test/polybench/Inputs/polybench.py's presets ('bench': PolyBench's LARGE, MEDIUM for the
time-stepped stencils). Needs clang-19 with Polly and libomp-19-dev (Debian: apt-get install clang-19
libomp-19-dev), and numpy.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "polybench", "Inputs"))
import polybench  # noqa: E402  (the presets, input generation and the executables' JSON)

# Where each kernel lives in PolyBench/C 4.2.1.
SOURCES = {
    "gemm": "linear-algebra/blas/gemm", "syrk": "linear-algebra/blas/syrk",
    "gesummv": "linear-algebra/blas/gesummv", "2mm": "linear-algebra/kernels/2mm",
    "atax": "linear-algebra/kernels/atax", "bicg": "linear-algebra/kernels/bicg",
    "mvt": "linear-algebra/kernels/mvt", "cholesky": "linear-algebra/solvers/cholesky",
    "durbin": "linear-algebra/solvers/durbin", "lu": "linear-algebra/solvers/lu",
    "lu-right-looking": "linear-algebra/solvers/lu",
    "trisolv": "linear-algebra/solvers/trisolv", "floyd-warshall": "medley/floyd-warshall",
    "fdtd-2d": "stencils/fdtd-2d", "heat-3d": "stencils/heat-3d", "jacobi-1d": "stencils/jacobi-1d",
    "jacobi-2d": "stencils/jacobi-2d", "seidel-2d": "stencils/seidel-2d",
}
# polyc's param T is PolyBench's TSTEPS (TMAX for fdtd-2d); every other param has the macro's name.
TIME_MACRO = {"fdtd-2d": "TMAX"}

CLANG = os.environ.get("CLANG", "clang-19")
POLLY_FLAGS = ["-mllvm", "-polly", "-mllvm", "-polly-parallel", "-fopenmp"]


def element_macro(poly_path):
    """DATA_TYPE_IS_* for the .poly version's element type (its first array declaration's)."""
    text = open(poly_path).read()
    match = re.search(r"^\s*(?:input|output|inout)?\s*(f32|f64|i32)\s+\w+", text, re.M)
    return {"f32": "DATA_TYPE_IS_FLOAT", "f64": "DATA_TYPE_IS_DOUBLE", "i32": "DATA_TYPE_IS_INT"}[match.group(1)]


def size_macros(kernel, sizes):
    macros = []
    for name, value in sizes.items():
        macro = TIME_MACRO.get(kernel, "TSTEPS") if name == "T" else name
        macros.append(f"-D{macro}={value}")
    return macros


def build_c(polybench_dir, kernel, sizes, poly_path, extra, output):
    folder = os.path.join(polybench_dir, SOURCES[kernel])
    source = os.path.join(folder, os.path.basename(SOURCES[kernel]) + ".c")
    utilities = os.path.join(polybench_dir, "utilities")
    command = [CLANG, "-O3", *extra, "-DPOLYBENCH_TIME", f"-D{element_macro(poly_path)}",
               *size_macros(kernel, sizes), "-I", utilities, "-I", folder, source,
               os.path.join(utilities, "polybench.c"), "-lm", "-o", output]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.stderr.write(" ".join(command) + "\n" + run.stderr[-2000:])
        return False
    return True


def time_c(exe, repeat, timeout):
    """The median of PolyBench's timer (seconds, the last number printed) over `repeat` runs."""
    times = []
    for _ in range(repeat):
        run = subprocess.run([exe], capture_output=True, text=True, timeout=timeout)
        numbers = re.findall(r"[0-9]+\.[0-9]+", run.stdout)
        if run.returncode != 0 or not numbers:
            return None
        times.append(float(numbers[-1]))
    return statistics.median(times)


def time_polyc(exe, kernel, sizes, repeat, work, timeout):
    command, stored, _ = polybench.write_inputs(kernel, sizes, exe, work, 1)
    run = subprocess.run(command + ["--repeat", str(repeat), "--json"], capture_output=True, text=True,
                         timeout=timeout)
    for name in stored:
        os.remove(os.path.join(work, "in", f"{name}.npy"))
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    if run.returncode != 0 or not lines:
        sys.stderr.write(run.stderr[-2000:])
        return None
    return json.loads(lines[-1])["median_s"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("polybench_dir")
    parser.add_argument("--kernels", help="comma-separated (default: every kernel of test/polybench)")
    parser.add_argument("--preset", default="bench", choices=("small", "medium", "bench"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--march", help="compile the C and polyc's code for this CPU (native, x86-64-v3, ...)")
    parser.add_argument("--polyc", default=os.path.join(ROOT, "build", "compiler", "driver", "polyc"))
    parser.add_argument("--work", help="keep the executables and inputs here (default: a temporary folder)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per run")
    args = parser.parse_args()
    if not os.path.isfile(os.path.join(args.polybench_dir, "utilities", "polybench.c")):
        sys.exit(f"bench-polly: {args.polybench_dir} is not a PolyBench/C checkout (no utilities/polybench.c)")
    if shutil.which(CLANG) is None:
        sys.exit(f"bench-polly: {CLANG} not found (apt-get install clang-19 libomp-19-dev)")
    probe = subprocess.run([CLANG, "-fopenmp", "-x", "c", "-fsyntax-only", "-"], input="#include <omp.h>\n",
                           capture_output=True, text=True)
    if probe.returncode != 0:
        sys.exit(f"bench-polly: {CLANG} -fopenmp finds no omp.h (apt-get install libomp-19-dev)")
    kernels = args.kernels.split(",") if args.kernels else sorted(SOURCES)
    march = [f"-march={args.march}"] if args.march else []
    polyc_march = [f"--march={args.march}"] if args.march else []
    work = args.work or tempfile.mkdtemp(prefix="bench-polly-")
    os.makedirs(work, exist_ok=True)

    print(f"# polyc --target=cpu{' ' + polyc_march[0] if march else ''} against {CLANG} -O3 and Polly "
          f"({' '.join(POLLY_FLAGS + march)}), PolyBench/C at "
          f"{args.polybench_dir}, preset {args.preset}, median of {args.repeat} runs, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'default')}, {os.cpu_count()} cores")
    header = (f"{'kernel':<15} {'sizes':<26} {'clang -O3 s':>11} {'Polly s':>9} {'polyc s':>9} "
              f"{'polyc/Polly':>11} {'polyc/O3':>9}")
    print(header)
    print("-" * len(header))
    ratios, status = [], 0
    for kernel in kernels:
        poly = os.path.join(ROOT, "test", "polybench", f"{kernel}.poly")
        text = polybench.PRESETS[kernel][args.preset]
        sizes = polybench.parse_sizes(text)
        exes = {name: os.path.join(work, f"{kernel}-{name}") for name in ("o3", "polly", "polyc")}
        built = (build_c(args.polybench_dir, kernel, sizes, poly, march, exes["o3"]) and
                 build_c(args.polybench_dir, kernel, sizes, poly, POLLY_FLAGS + march, exes["polly"]) and
                 subprocess.run([args.polyc, "build", poly, "--target=cpu", *polyc_march, "-o",
                                 exes["polyc"]]).returncode == 0)
        if not built:
            print(f"{kernel:<15} {text:<26} {'build failed':>11}")
            status = 1
            continue
        try:
            o3 = time_c(exes["o3"], args.repeat, args.timeout)
            polly = time_c(exes["polly"], args.repeat, args.timeout)
            mine = time_polyc(exes["polyc"], kernel, sizes, args.repeat, os.path.join(work, kernel), args.timeout)
        except subprocess.TimeoutExpired:
            o3 = polly = mine = None
        if None in (o3, polly, mine):
            print(f"{kernel:<15} {text:<26} {'run failed':>11}")
            status = 1
            continue
        ratios.append(mine / polly)
        print(f"{kernel:<15} {text:<26} {o3:>11.4g} {polly:>9.4g} {mine:>9.4g} {mine / polly:>11.2f} "
              f"{mine / o3:>9.2f}", flush=True)
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        worst = max(ratios)
        print(f"# geometric mean of polyc / Polly over {len(ratios)} kernels: {geomean:.2f} (goal <= 0.8); "
              f"worst {worst:.2f} (goal <= 1.2); {sum(r > 1.5 for r in ratios)} kernels above 1.5")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
