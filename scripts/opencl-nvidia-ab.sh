#!/usr/bin/env bash
# Issue 6 on an NVIDIA GPU: the OpenCL target's NVIDIA switches measured on and off in one run, for the
# 2D IIR filter at 2048x2048 (SIZE) with M in {3, 5, 9, 17, 31}:
#   POLYC_OPENCL_NV_SHUFFLE=0|1   lane reductions by warp shuffles (inline PTX) instead of local memory
#   POLYC_OPENCL_NV_MAXRREG=0|N   -cl-nv-maxrregcount=N (0: not passed), so 512 work-items fit
#   POLYC_OPENCL_NV_STRIP=0|1     the CUDA target's strip widths (64/64/32/16 for 4/8/16/32 lanes)
# and the fixed wavefront with shuffles on and off (its host loop now sets 2 arguments per hyperplane, one
# of them only when it changes; the enqueue floor's "fixed-loop" line is the same pattern on an empty
# kernel). First correctness (the committed executables against the float64 reference, the new defaults
# and the variants), then the enqueue floor, then the timings; CUDA's times beside them unless SKIP_CUDA=1
# (built from this tree with nvcc in the background, as scripts/opencl-gpu.sh does).
#   scripts/opencl-nvidia-ab.sh BIN [LIB]   (env: OUT=/tmp/opencl-nvidia, SIZE=2048, REPEAT=5,
#                                            PYTHON=python3, SKIP_CUDA=1, WINDOWS="3 5 9 17 31",
#                                            CASES: the correctness shapes)
# BIN holds iir2d-opencl-{auto,fixed,flexible}, iir2d-reference and polyc-opencl-enqueue-floor (x86-64,
# a runtime-only Release build: see .oclgpu); LIB (default BIN/../lib when it exists) the ICD loader and
# libgomp for machines without them. Prints the tables last; exits 1 when a correctness case fails.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:?usage: opencl-nvidia-ab.sh BIN [LIB]}" && pwd)
lib=${2:-$bin/../lib}
[[ -d $lib ]] && export LD_LIBRARY_PATH=$(cd "$lib" && pwd):${LD_LIBRARY_PATH:-}
out=${OUT:-/tmp/opencl-nvidia}
size=${SIZE:-2048}
repeat=${REPEAT:-5}
python=${PYTHON:-python3}
windows=${WINDOWS:-"3 5 9 17 31"}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$out/log.txt
: >"$log"
say() { echo "$*" | tee -a "$log"; }

source "$root/scripts/lib/nvidia-opencl-icd.sh"

[[ -n ${SKIP_CUDA:-} ]] || (cmake -S "$root" -B "$work/cuda" -G Ninja -DPOLYC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release >"$out/cuda-build.txt" 2>&1 &&
  cmake --build "$work/cuda" -j "$(nproc)" --target iir2d_cuda_auto >>"$out/cuda-build.txt" 2>&1) &
cuda_build=$!

say "== device and build options (defaults, then every switch off)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee -a "$log" || true
"$python" "$root/examples/iir2d/generate_inputs.py" --height 4 --width 4 --window 3 --out "$work/tiny" >/dev/null
tiny=(--in x="$work/tiny/x.npy" --in a="$work/tiny/a.npy" --in b="$work/tiny/b.npy")
POLYC_OPENCL_VERBOSE=1 "$bin/iir2d-opencl-flexible" "${tiny[@]}" 2>&1 | grep "^polyc:" | tee -a "$log"
POLYC_OPENCL_VERBOSE=1 POLYC_OPENCL_NV_SHUFFLE=0 POLYC_OPENCL_NV_MAXRREG=0 "$bin/iir2d-opencl-flexible" "${tiny[@]}" 2>&1 |
  grep "build options" | tee -a "$log"
POLYC_OPENCL_VERBOSE=1 "$bin/iir2d-opencl-fixed" "${tiny[@]}" 2>&1 | grep "command buffer" | tee -a "$log"

say "== correctness (relative error <= 1e-5 of the largest reference magnitude)"
flex=$bin/iir2d-opencl-flexible
fixed=$bin/iir2d-opencl-fixed
"$python" "$root/test/run/iir2d-opencl/Inputs/run_cases.py" --work "$work/cases" --reference "$bin/iir2d-reference" \
  --examples "$root/examples" --shapes "${CASES:-1x1,1x17,17x1,97x131,300x257}" --windows 1,3,5,9,17 --big "${size}x$size" \
  --big-windows 9,31 \
  --case flexible="$flex" --case fixed="$fixed" --case auto="$bin/iir2d-opencl-auto" \
  --case fixed-direct="$fixed:POLYC_OPENCL_COMMAND_BUFFER=0" \
  --case flexible-rreg64="$flex:POLYC_OPENCL_NV_MAXRREG=64" \
  --case flexible-shuffle="$flex:POLYC_OPENCL_NV_SHUFFLE=1" \
  --case flexible-old="$flex:POLYC_OPENCL_NV_SHUFFLE=0,POLYC_OPENCL_NV_MAXRREG=0,POLYC_OPENCL_NV_STRIP=0" \
  --case flexible-lanes4="$flex:POLYC_OPENCL_LANES=4" --case flexible-lanes32="$flex:POLYC_OPENCL_LANES=32" \
  --case flexible-odd="$flex:POLYC_OPENCL_STRIP=3,POLYC_OPENCL_LANES=2,POLYC_OPENCL_GROUPS=5" \
  --case flexible-one-group="$flex:POLYC_OPENCL_GROUPS=1" \
  --case fixed-shuffle="$fixed:POLYC_OPENCL_NV_SHUFFLE=1" \
  --case fixed-group32="$fixed:POLYC_OPENCL_GROUP_SIZE=32" \
  --case fixed-group8="$fixed:POLYC_OPENCL_GROUP_SIZE=8" >"$out/correctness.txt" 2>&1
correctness=$?
grep -v ": ok$" "$out/correctness.txt" | tee -a "$log"

if [[ -x $bin/polyc-opencl-enqueue-floor ]]; then
  say "== enqueue floor ($((2 * size - 1)) enqueues: the ${size}x$size IIR's hyperplanes)"
  "$bin/polyc-opencl-enqueue-floor" $((2 * size - 1)) 2>&1 | tee -a "$log" "$out/floor.txt"
fi

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
ratio() { "$python" -c 'import sys
try: print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))
except ValueError: print("n/a")' "$1" "$2"; }

[[ -n ${SKIP_CUDA:-} ]] || wait $cuda_build
cuda=$work/cuda/kernels-generated/iir2d/cuda
if [[ -x $cuda/iir2d-cuda-auto ]]; then say "== CUDA build: ok"; else say "== CUDA build: none (SKIP_CUDA or failed: cuda-build.txt)"; fi

# Flexible columns: old = every switch off (the 2026-11-22 code path), then one switch on at a time, then
# the defaults (no shuffles since session 4: POLYC_OPENCL_NV_SHUFFLE=1 turns them on; maxrregcount 128, CUDA strips)
# and the same with 64 registers.
off="POLYC_OPENCL_NV_SHUFFLE=0 POLYC_OPENCL_NV_MAXRREG=0 POLYC_OPENCL_NV_STRIP=0"
flex_table=$out/flexible.md
{
  echo "| M | old | +shuffle | +strip (rreg off) | +rreg128 (no shuffle) | new default | new, rreg64 | CUDA flexible | new/CUDA | best/CUDA |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
} >"$flex_table"
fixed_table=$out/fixed.md
{
  echo "| M | fixed, shuffle off | fixed, shuffle on | CUDA fixed | on/CUDA |"
  echo "|---|---|---|---|---|"
} >"$fixed_table"
base=$work/bench$size
"$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window 31 --seed 1 --out "$base" >/dev/null
for M in $windows; do
  dir=$work/bench${size}_M$M
  mkdir -p "$dir"
  ln -sf "$base/x.npy" "$dir/x.npy"
  "$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window "$M" --seed 1 --no-x \
    --out "$dir" >/dev/null
  # shellcheck disable=SC2086
  old=$(time_ms "$flex" "$dir" $off)
  shuffle=$(time_ms "$flex" "$dir" POLYC_OPENCL_NV_SHUFFLE=1 POLYC_OPENCL_NV_MAXRREG=0 POLYC_OPENCL_NV_STRIP=0)
  strip=$(time_ms "$flex" "$dir" POLYC_OPENCL_NV_SHUFFLE=1 POLYC_OPENCL_NV_MAXRREG=0 POLYC_OPENCL_NV_STRIP=1)
  rreg=$(time_ms "$flex" "$dir" POLYC_OPENCL_NV_SHUFFLE=0 POLYC_OPENCL_NV_MAXRREG=128 POLYC_OPENCL_NV_STRIP=1)
  new=$(time_ms "$flex" "$dir")
  rreg64=$(time_ms "$flex" "$dir" POLYC_OPENCL_NV_MAXRREG=64)
  fixed_off=$(time_ms "$fixed" "$dir" POLYC_OPENCL_NV_SHUFFLE=0)
  fixed_on=$(time_ms "$fixed" "$dir" POLYC_OPENCL_NV_SHUFFLE=1)
  cf=n/a
  cx=n/a
  if [[ -x $cuda/iir2d-cuda-auto ]]; then
    cf=$(time_ms "$cuda/iir2d-cuda-auto" "$dir" POLYC_CUDA_WAVEFRONT=fixed)
    cx=$(time_ms "$cuda/iir2d-cuda-auto" "$dir" POLYC_CUDA_WAVEFRONT=flexible)
  fi
  best=$("$python" -c 'import sys
values = [float(v) for v in sys.argv[1:] if v not in ("fail", "n/a")]
print("%.3f" % min(values) if values else "n/a")' "$old" "$shuffle" "$strip" "$rreg" "$new" "$rreg64")
  echo "| $M | $old | $shuffle | $strip | $rreg | $new | $rreg64 | $cx | $(ratio "$new" "$cx") | $(ratio "$best" "$cx") |" >>"$flex_table"
  echo "| $M | $fixed_off | $fixed_on | $cf | $(ratio "$fixed_on" "$cf") |" >>"$fixed_table"
done

# The shapes each flexible setting chose (strip x lanes, groups), for reading the table.
say "== flexible shapes chosen at ${size}x$size (POLYC_OPENCL_VERBOSE)"
for M in $windows; do
  dir=$work/bench${size}_M$M
  for setting in "$off" "POLYC_OPENCL_NV_MAXRREG=0" ""; do
    # shellcheck disable=SC2086
    line=$(env POLYC_OPENCL_VERBOSE=1 $setting "$flex" --in x="$dir/x.npy" --in a="$dir/a.npy" --in b="$dir/b.npy" 2>&1 |
      grep -i "strip" | head -1)
    say "M=$M [${setting:-defaults}] ${line:-(no shape line printed)}"
  done
done

say "== correctness: $(tail -1 "$out/correctness.txt")"
say "== flexible, ${size}x$size, median of $repeat device-timed runs (ms)"
tee -a "$log" <"$flex_table"
say "== fixed, ${size}x$size (ms)"
tee -a "$log" <"$fixed_table"
exit $correctness
