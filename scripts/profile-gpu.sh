#!/usr/bin/env bash
# Nsight Compute profile of the 2D IIR's CUDA kernels on a GPU machine (the lent H100; CI has none), for
# explaining the numbers of examples/iir2d/bench-gpu.sh:
#   scripts/profile-gpu.sh [BUILD_DIR] [OUT_DIR]    (BUILD_DIR built by scripts/gpu-check.sh)
# For each window M in $WINDOWS (default "3 31") at $SIZE x $SIZE (default 2048) it profiles one launch of
# the flexible kernel (full section set, source counters) and writes into OUT_DIR:
#   flexible-M<M>.txt       ncu's details page (stall reasons, occupancy, memory, instruction mix)
#   flexible-M<M>-sass.csv  the SASS with per-instruction stall samples (ncu --page source)
# and prints the warp-state summary of each. Needs ncu and python3 with numpy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-gpu}
out=${2:-$root/build-gpu/profile}
python=${PYTHON:-python3}
size=${SIZE:-2048}
windows=${WINDOWS:-"3 31"}
exe=$build/kernels-generated/iir2d/cuda/iir2d-cuda-auto
[[ -x $exe ]] || { echo "profile-gpu: build first (scripts/gpu-check.sh $build)"; exit 1; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for M in $windows; do
  "$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window "$M" --seed "$M" \
    --out "$work"
  report=$work/flexible-M$M
  POLYC_CUDA_WAVEFRONT=flexible ncu --clock-control none --set full --import-source no \
    -k regex:Flexible -c 1 -o "$report" \
    "$exe" --in x="$work/x.npy" --in a="$work/a.npy" --in b="$work/b.npy" --out y="$work/y.npy" >"$work/ncu.log" 2>&1 ||
    { tail -20 "$work/ncu.log"; exit 1; }
  ncu -i "$report.ncu-rep" --page details --print-details all >"$out/flexible-M$M.txt"
  ncu -i "$report.ncu-rep" --page source --print-source sass --csv >"$out/flexible-M$M-sass.csv" || true
  echo "== M=$M"
  grep -E "Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issue Slots Busy|L1/TEX Hit|L2 Hit" \
    "$out/flexible-M$M.txt" | head -20 || true
done
