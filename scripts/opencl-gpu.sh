#!/usr/bin/env bash
# The OpenCL target on an NVIDIA GPU (the lent H100; CI has none), in one run:
#  1. registers NVIDIA's OpenCL driver with the ICD loader (OCL_ICD_VENDORS), shows the device and, when
#     BIN has polyc-opencl-enqueue-floor, the host cost of one kernel enqueue;
#  2. correctness: the 2D IIR filter's committed OpenCL executables (kernels-generated/iir2d/opencl, both
#     allocations and the run-time choice, plus the flexible kernel on one work-group and on many) against
#     the float64 reference over shapes 1x1, 1x17, 17x1, 97x131, 300x257 and M in {1, 2, 3, 5, 8}, and one
#     2048x2048 M=31 case;
#  3. benchmark: 2048x2048 (and 8192x8192 unless SIZES says otherwise) with M in {3, 5, 9, 17, 31}, fixed
#     (launches replayed from a command buffer where the driver has cl_khr_command_buffer, and enqueued one
#     by one: POLYC_OPENCL_COMMAND_BUFFER=0) vs flexible, the median of REPEAT device-timed runs; the CUDA
#     target's executables (kernels-generated/iir2d/cuda, built here with nvcc in a runtime-only build) are
#     timed the same way for a side-by-side table;
#  4. a sweep of the flexible kernel's shape (lanes per point, strip width, polls) at 2048x2048.
# The executables and the reference come prebuilt in BIN (x86-64; this machine has no isl or LLVM); the
# ICD loader may come in LIB. Writes logs and results.md under OUT; prints the tables last.
#   scripts/opencl-gpu.sh BIN [LIB]   (env: OUT, SIZES="2048 8192", REPEAT=5, PYTHON=python3, SKIP_CUDA=1,
#                                      CASES: the correctness shapes, SWEEP_SIZE=2048; a size not in
#                                      SIZES, e.g. none, skips the sweep)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:?usage: opencl-gpu.sh BIN [LIB]}" && pwd)
lib=${2:-}
out=${OUT:-/tmp/opencl-gpu}
sizes=${SIZES:-"2048 8192"}
repeat=${REPEAT:-5}
python=${PYTHON:-python3}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$out/log.txt
: >"$log"
say() { echo "$*" | tee -a "$log"; }

source "$root/scripts/lib/nvidia-opencl-icd.sh"
[[ -n $lib ]] && export LD_LIBRARY_PATH=$(cd "$lib" && pwd):${LD_LIBRARY_PATH:-}

# The CUDA build runs in the background while the OpenCL checks run (SKIP_CUDA=1: not at all).
[[ -n ${SKIP_CUDA:-} ]] || (cmake -S "$root" -B "$work/cuda" -G Ninja -DPOLYC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >"$out/cuda-build.txt" 2>&1 &&
  cmake --build "$work/cuda" -j "$(nproc)" --target iir2d_cuda_auto iir2d_cuda_fixed >>"$out/cuda-build.txt" 2>&1) &
cuda_build=$!

say "== device"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader 2>&1 | tee -a "$log"
"$python" "$root/examples/iir2d/generate_inputs.py" --height 4 --width 4 --window 3 --out "$work/tiny" >/dev/null
POLYC_OPENCL_VERBOSE=1 "$bin/iir2d-opencl-flexible" --in x="$work/tiny/x.npy" --in a="$work/tiny/a.npy" \
  --in b="$work/tiny/b.npy" 2>&1 | grep -v "^iir2d: note" | tee -a "$log"
# Whether the fixed wavefront's launches are recorded into a command buffer (cl_khr_command_buffer) or, and
# why not, enqueued one by one.
POLYC_OPENCL_VERBOSE=1 "$bin/iir2d-opencl-fixed" --in x="$work/tiny/x.npy" --in a="$work/tiny/a.npy" \
  --in b="$work/tiny/b.npy" 2>&1 | grep "command buffer" | tee -a "$log"

# The floor of one enqueue per hyperplane (the fixed wavefront's shape), when BIN has the tool.
if [[ -x $bin/polyc-opencl-enqueue-floor ]]; then
  say "== enqueue floor (4095 enqueues: the 2048x2048 IIR's hyperplanes)"
  "$bin/polyc-opencl-enqueue-floor" 4095 2>&1 | tee -a "$log" "$out/floor.txt"
fi

say "== correctness (relative error <= 1e-5 of the largest reference magnitude)"
"$python" "$root/test/run/iir2d-opencl/Inputs/run_cases.py" --work "$work/cases" --reference "$bin/iir2d-reference" \
  --examples "$root/examples" --shapes "${CASES:-1x1,1x17,17x1,97x131,300x257}" --windows 1,2,3,5,8 --big "${BIG:-2048x2048}" \
  --big-windows 31 --case fixed="$bin/iir2d-opencl-fixed" --case flexible="$bin/iir2d-opencl-flexible" \
  --case auto="$bin/iir2d-opencl-auto" --case one-group="$bin/iir2d-opencl-flexible:POLYC_OPENCL_GROUPS=1" \
  --case many-groups="$bin/iir2d-opencl-flexible:POLYC_OPENCL_GROUPS=2000" \
  --case fixed-direct="$bin/iir2d-opencl-fixed:POLYC_OPENCL_COMMAND_BUFFER=0" >"$out/correctness.txt" 2>&1
correctness=$?
grep -v ": ok$" "$out/correctness.txt" | tee -a "$log"

# time EXE DIR [ENV...]: the median compute time in ms of $repeat runs, or "fail".
time_ms() {
  local exe=$1 dir=$2
  shift 2
  local text
  if text=$(env "$@" timeout 120 "$exe" --in x="$dir/x.npy" --in a="$dir/a.npy" --in b="$dir/b.npy" --repeat "$repeat" --json \
    2>>"$out/errors.txt"); then
    "$python" -c 'import json,sys; print("%.3f" % (1e3 * json.loads(sys.argv[1].splitlines()[-1])["median_s"]))' "$text"
  else
    echo fail
  fi
}

[[ -n ${SKIP_CUDA:-} ]] || wait $cuda_build
cuda=$work/cuda/kernels-generated/iir2d/cuda
if [[ -x $cuda/iir2d-cuda-auto ]]; then say "== CUDA build: ok"; else say "== CUDA build failed (see cuda-build.txt)"; fi

table=$out/results.md
{
  echo "| size | M | OpenCL fixed (ms) | OpenCL fixed, direct (ms) | OpenCL flexible (ms) | CUDA fixed (ms) | CUDA flexible (ms) | OpenCL/CUDA fixed | OpenCL/CUDA flexible |"
  echo "|---|---|---|---|---|---|---|---|---|"
} >"$table"
for size in $sizes; do
  base=$work/bench$size
  "$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window 31 --seed 1 \
    --out "$base" >/dev/null
  for M in 3 5 9 17 31; do
    dir=$work/bench${size}_M$M
    mkdir -p "$dir"
    ln -sf "$base/x.npy" "$dir/x.npy"
    "$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window "$M" --seed 1 \
      --no-x --out "$dir" >/dev/null
    of=$(time_ms "$bin/iir2d-opencl-fixed" "$dir")
    od=$(time_ms "$bin/iir2d-opencl-fixed" "$dir" POLYC_OPENCL_COMMAND_BUFFER=0)
    ox=$(time_ms "$bin/iir2d-opencl-flexible" "$dir")
    cf=n/a
    cx=n/a
    if [[ -x $cuda/iir2d-cuda-auto ]]; then
      cf=$(time_ms "$cuda/iir2d-cuda-auto" "$dir" POLYC_CUDA_WAVEFRONT=fixed)
      cx=$(time_ms "$cuda/iir2d-cuda-auto" "$dir" POLYC_CUDA_WAVEFRONT=flexible)
    fi
    ratio() { "$python" -c 'import sys
try: print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))
except ValueError: print("n/a")' "$1" "$2"; }
    echo "| ${size}x$size | $M | $of | $od | $ox | $cf | $cx | $(ratio "$of" "$cf") | $(ratio "$ox" "$cx") |" >>"$table"
  done
done

sweep=$out/sweep.md
{
  echo "| M | lanes | strip | polls | OpenCL flexible (ms) |"
  echo "|---|---|---|---|---|"
} >"$sweep"
for M in 9 31; do
  dir=$work/bench${SWEEP_SIZE:-2048}_M$M
  [[ -d $dir ]] || continue
  for lanes in 8 16 32; do
    for strip in 8 16 32; do
      for polls in 0 64; do
        t=$(time_ms "$bin/iir2d-opencl-flexible" "$dir" POLYC_OPENCL_LANES=$lanes POLYC_OPENCL_STRIP=$strip \
          POLYC_OPENCL_POLLS=$polls)
        echo "| $M | $lanes | $strip | $polls | $t |" >>"$sweep"
      done
    done
  done
done

say "== correctness: $(tail -1 "$out/correctness.txt")"
say "== benchmark (median of $repeat runs, device timers; REPEAT=$repeat)"
tee -a "$log" <"$table"
say "== flexible kernel shape sweep, ${SWEEP_SIZE:-2048}x${SWEEP_SIZE:-2048}"
tee -a "$log" <"$sweep"
exit $correctness
