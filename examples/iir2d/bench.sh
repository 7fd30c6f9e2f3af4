#!/usr/bin/env bash
# CPU benchmark of the 2D IIR example: the fixed and the flexible allocation (polyc build
# --target=cpu) against the plain sequential reference (iir2d-reference), on a SIZE x SIZE image for
# each window M. Prints a table; with WRITE_DOC=1 also writes it into docs/performance.md (its
# subsection "2D IIR filter, fixed vs flexible allocation" of "CPU target", nothing else), with the date,
# the machine, the command and the fraction of the peak FLOP rate.
#   examples/iir2d/bench.sh [BUILD]     (BUILD defaults to build)
#   environment: SIZE (2048), WINDOWS ("3 5 9 17 31"), RUNS (3), WRITE_DOC (0),
#                ACTIVE_WINDOWS ("3 5"): windows where `fixed` is also timed with OpenMP's default
#                (spinning) wait policy; the main table uses OMP_WAIT_POLICY=passive for it (see below)
# Times: the generated executables report the median of RUNS runs of their compute region
# (--repeat RUNS --json); the reference has no timer of its own, so it is timed as a whole process
# (reading the .npy inputs and writing its float64 output included), median of RUNS runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
polyc="$build/compiler/driver/polyc"
reference="$build/examples/iir2d/iir2d-reference"
work="$build/bench-cpu"
mkdir -p "$work"

"$polyc" build "$root/examples/iir2d/iir2d.poly" --target=cpu --allocation=fixed -o "$work/iir2d-fixed"
"$polyc" build "$root/examples/iir2d/iir2d.poly" --target=cpu --allocation=flexible -o "$work/iir2d-flexible"

SIZE=${SIZE:-2048} WINDOWS=${WINDOWS:-"3 5 9 17 31"} RUNS=${RUNS:-3} WRITE_DOC=${WRITE_DOC:-0} \
  ACTIVE_WINDOWS=${ACTIVE_WINDOWS:-"3 5"} \
  /usr/bin/python3 - "$root" "$work" "$reference" <<'PY'
import datetime, json, os, re, statistics, subprocess, sys, time

root, work, reference = sys.argv[1:4]
size, runs = int(os.environ["SIZE"]), int(os.environ["RUNS"])
windows = [int(m) for m in os.environ["WINDOWS"].split()]
active_windows = [int(m) for m in os.environ["ACTIVE_WINDOWS"].split()]
example = os.path.join(root, "examples", "iir2d")
cores = os.cpu_count()
load_before = os.getloadavg()[0]

def compute_median(exe, folder, env=None):
    out = subprocess.run([exe, "--in", f"x={folder}/x.npy", "--in", f"a={folder}/a.npy", "--in",
                          f"b={folder}/b.npy", "--repeat", str(runs), "--json"],
                         capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout)["median_s"]

def verify(exe, folder, env=None):
    subprocess.run([exe, "--in", f"x={folder}/x.npy", "--in", f"a={folder}/a.npy", "--in", f"b={folder}/b.npy",
                    "--out", f"y={folder}/y.npy"], check=True, env=env, capture_output=True)
    check = subprocess.run([sys.executable, os.path.join(example, "compare.py"), f"{folder}/y.npy",
                            f"{folder}/y_ref.npy", "--rtol", "1e-5"], capture_output=True, text=True)
    return check.returncode == 0

passive = dict(os.environ, OMP_WAIT_POLICY="passive")
rows = []
for m in windows:
    folder = os.path.join(work, f"{size}_M{m}")
    os.makedirs(folder, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(example, "generate_inputs.py"), "--height", str(size), "--width",
                    str(size), "--window", str(m), "--seed", str(m), "--out", folder], check=True,
                   stdout=subprocess.DEVNULL)
    ref_times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([reference, f"{folder}/x.npy", f"{folder}/a.npy", f"{folder}/b.npy", f"{folder}/y_ref.npy"],
                       check=True)
        ref_times.append(time.perf_counter() - start)
    ok = all([verify(f"{work}/iir2d-fixed", folder, passive), verify(f"{work}/iir2d-flexible", folder)])
    row = {"M": m, "reference": statistics.median(ref_times),
           "fixed": compute_median(f"{work}/iir2d-fixed", folder, passive),
           "fixed_active": compute_median(f"{work}/iir2d-fixed", folder) if m in active_windows else None,
           "flexible": compute_median(f"{work}/iir2d-flexible", folder), "ok": ok}
    # Work per point: M^2 multiply-adds for the FIR window, M^2 - 1 for the feedback window.
    row["gflop"] = size * size * (4 * m * m - 2) / 1e9
    rows.append(row)
    active = f" (default wait policy {row['fixed_active']:.3f} s)" if row["fixed_active"] is not None else ""
    print(f"M={m}: reference {row['reference']:.3f} s, fixed {row['fixed']:.3f} s{active}, "
          f"flexible {row['flexible']:.3f} s, {'verified' if ok else 'WRONG RESULT'}", flush=True)
load_after = os.getloadavg()[0]

# Peak: the cores' two 256-bit FMA pipes (AVX2) do 2 x 8 x 2 = 32 float32 FLOP per cycle.
clock_ghz = None
try:
    for line in open("/proc/cpuinfo"):
        if line.startswith("bogomips"):
            clock_ghz = float(line.split(":")[1]) / 2000.0  # BogoMIPS is twice the TSC clock on x86
            break
except OSError:
    pass
clock_ghz = clock_ghz or 2.6
peak = cores * clock_ghz * 32
model = "unknown CPU"
for line in open("/proc/cpuinfo"):
    if line.startswith("model name"):
        model = line.split(":", 1)[1].strip()
        break

header = "| M | GFLOP | reference (s) | fixed (s) | flexible (s) | fixed / flexible | reference / flexible | " \
         "flexible GFLOP/s | % of peak |"
lines = [header, "|" + "---|" * 9]
for r in rows:
    best = r["flexible"]
    lines.append(f"| {r['M']} | {r['gflop']:.2f} | {r['reference']:.3f} | {r['fixed']:.3f} | {r['flexible']:.3f} | "
                 f"{r['fixed'] / best:.2f} | {r['reference'] / best:.2f} | {r['gflop'] / best:.2f} | "
                 f"{100 * r['gflop'] / best / peak:.2f} |")
table = "\n".join(lines)
active_lines = ["| M | fixed, OMP_WAIT_POLICY=passive (s) | fixed, default wait policy (s) |", "|---|---|---|"]
for r in rows:
    if r["fixed_active"] is not None:
        active_lines.append(f"| {r['M']} | {r['fixed']:.3f} | {r['fixed_active']:.3f} |")
active_table = "\n".join(active_lines)
print(table)
print(active_table)
if not all(r["ok"] for r in rows):
    print("bench: some output differs from the reference", file=sys.stderr)
    sys.exit(1)
if os.environ["WRITE_DOC"] != "1":
    sys.exit(0)

today = datetime.date.today().isoformat()
section = f"""### 2D IIR filter, fixed vs flexible allocation ({today}, {cores}-core {model} under KVM)

Machine: **a 2-core virtual machine** ({cores} vCPUs of an {model}, family 25 (Zen 4), AVX2 and FMA,
no AVX-512 exposed, {clock_ghz:.2f} GHz TSC clock), shared with other jobs: the 1-minute load average
was {load_before:.1f} when the benchmark started and {load_after:.1f} when it ended (above 2, the cores
are oversubscribed and the numbers below pessimistic and noisy). Compiler: the host `c++` (GCC 12) with
`-std=c++17 -O3 -fopenmp` (what `polyc build` uses), OpenMP's default thread count (2).
Command (from the repository root):

```
WRITE_DOC=1 examples/iir2d/bench.sh build
```

Image {size} x {size}, random input from `generate_inputs.py`; each time is the median of {runs} runs.
`fixed`: `--allocation=fixed` (a sequential loop over the H + W - 1 hyperplanes t = i + j around
`#pragma omp parallel for` over the points of one hyperplane), run with `OMP_WAIT_POLICY=passive`: with
libgomp's default policy its threads spin at each of the 4095 per-hyperplane barriers, which is faster on
idle cores and many times slower on oversubscribed ones (second table: both, same runs). `flexible`:
`--allocation=flexible` (`polyc::rt::cpu::runFlexibleWavefront`: workers take image rows as columns
under per-column locks and progress counters, seed 004). The generated executables time their compute
region; `reference` (`iir2d-reference`, plain sequential float64 loops) is timed as a whole process,
.npy reading and writing included (0.16 to 0.26 s of it at this size, measured with M = 1). Every output
was checked against the reference (relative error <= 1e-5 of the largest magnitude). Under load, repeated
runs differ by up to 2x (an earlier run on the same day, at load 10, is in the git history of this file);
compare the columns of one row, which ran minutes apart, rather than rows.

{table}

The fixed allocation with libgomp's default (spinning) wait policy, same runs:

{active_table}

**Against the peak.** Each point costs 2 M^2 - 1 multiply-adds (4 M^2 - 2 FLOP). The peak float32 rate
of the machine is estimated as cores x clock x 32 FLOP per cycle (two 256-bit FMA pipes, 8 lanes, 2 FLOP
per FMA) = {cores} x {clock_ghz:.2f} GHz x 32 = {peak:.0f} GFLOP/s, at the TSC clock (boost clocks are not
visible in the VM). The flexible wavefront reaches the percentage in the last column. What limits it:
`polyc build` passes no `-march`, so GCC targets baseline x86-64 (SSE2, no FMA) and at most a quarter of
that peak is in reach (4-lane vectors, separate multiply and add); GCC vectorises the FIR window's inner
loop 4 lanes wide (`-fopt-info-vec` reports it) but leaves the feedback
window's loop, with its `(k1, k2) != (0, 0)` test, scalar. The recurrence also lets only one point per
column be computed at a time, and on a loaded machine a worker whose neighbour column is descheduled
can only wait. Next steps for this target: split the image border from the interior (no boundary
tests, contiguous window rows), hoist the `(0, 0)` exclusion out of the feedback loop, and let
`POLYC_CXXFLAGS=-march=native` (already honoured by `polyc build`) into the benchmark.
"""
doc_path = os.path.join(root, "docs", "performance.md")
doc = open(doc_path).read() if os.path.exists(doc_path) else "# Performance\n"
# Only this subsection of "## CPU target" is replaced: the target's other subsections (PolyBench against
# Polly, time tiling) are other benchmarks'.
pattern = re.compile(r"^### 2D IIR filter, fixed vs flexible allocation.*?(?=^##|\Z)", re.S | re.M)
if pattern.search(doc):
    doc = pattern.sub(lambda _: section + "\n", doc)
elif re.search(r"^## CPU target\n", doc, re.M):
    doc = re.sub(r"^## CPU target\n\n", lambda _: "## CPU target\n\n" + section + "\n", doc, count=1, flags=re.M)
else:
    doc = doc.rstrip("\n") + "\n\n## CPU target\n\n" + section
open(doc_path, "w").write(doc)
print(f"bench: wrote the CPU IIR subsection of {doc_path}")
PY
