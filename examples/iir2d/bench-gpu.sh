#!/usr/bin/env bash
# Benchmark of the 2D IIR example's CUDA code on a GPU machine: fixed wavefront (plain launches and a
# replayed CUDA graph) against the flexible wavefront, for 2048x2048 and 8192x8192 images and windows
# M in {3, 5, 9, 17, 31}, with the floors they are measured against:
#   copy     a device-to-device copy of the image (every element read and written once: the bandwidth
#            floor of any filter over it);
#   steps    the recurrence's H + W - 1 dependent steps times one barrier-and-shared-memory round trip
#            of a block (the least a flexible step waits for): the latency floor of a block-synchronous
#            wavefront;
#   launches the same H + W - 1 steps times one node of a graph of empty kernels: the floor of any
#            one-launch-per-hyperplane schedule.
# Times are the median of --repeat runs of the compute region (device events), from the committed
# kernels-generated/iir2d/cuda executables; flexible and fixed outputs are checked against each other.
#   examples/iir2d/bench-gpu.sh [BUILD_DIR]    (default build-gpu, built by scripts/gpu-check.sh)
# After the table it states the goals (issue 5, from seed 004's measurements), met or not:
#   - the flexible wavefront at least 2.4x faster than the fixed one (graph) at M = 31;
#   - the flexible wavefront nearly flat in M up to 17, taken as M = 17 within FLAT (default 1.2) of
#     M = 3 (the fixed graph's growth is printed beside it);
#   - its distance from the steps floor, at the smallest and largest M.
# Env: SIZES (default "2048 8192"), WINDOWS (default "3 5 9 17 31"), FLAT (default 1.2), SWEEP=1 (also
# the shape sweep below).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-gpu}
python=${PYTHON:-python3}
sizes=${SIZES:-"2048 8192"}
windows=${WINDOWS:-"3 5 9 17 31"}
exe=$build/kernels-generated/iir2d/cuda/iir2d-cuda-auto
check=$build/runtime/src/cuda/polyc-cuda-runtime-check
[[ -x $exe && -x $check ]] || { echo "bench-gpu: build first (scripts/gpu-check.sh $build)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# time VARIANT_ENV... : median milliseconds of the compute region
time_variant() {
  local repeat=$1
  shift
  env "$@" "$exe" --in x="$work/x.npy" --in a="$work/a.npy" --in b="$work/b.npy" --out y="$work/y.npy" \
    --repeat "$repeat" --json | "$python" -c 'import json, sys; print("%.3f" % (1e3 * json.load(sys.stdin)["median_s"]))'
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader || true
flat=${FLAT:-1.2}
rows=()
declare -A flexibleMs graphMs stepsMs
for size in $sizes; do
  floors=$("$check" --floors "$size" "$size")
  echo "$floors"
  copy=$(sed -n 's/.*copy_ms \([0-9.]*\).*/\1/p' <<<"$floors")
  barrier=$(sed -n 's/.*barrier_step_us \([0-9.]*\).*/\1/p' <<<"$floors")
  node=$(sed -n 's/.*graph_node_us \([0-9.]*\).*/\1/p' <<<"$floors")
  steps=$(awk -v n="$size" -v us="$barrier" 'BEGIN { printf "%.3f", (2 * n - 1) * us / 1e3 }')
  launches=$(awk -v n="$size" -v us="$node" 'BEGIN { printf "%.3f", (2 * n - 1) * us / 1e3 }')
  stepsMs[$size]=$steps
  "$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window 3 --seed 1 --out "$work"
  repeat=5
  ((size > 4096)) && repeat=3
  for M in $windows; do
    "$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window "$M" --seed "$M" \
      --no-x --out "$work"
    plain=$(time_variant "$repeat" POLYC_CUDA_WAVEFRONT=fixed POLYC_CUDA_GRAPH=0)
    graph=$(time_variant "$repeat" POLYC_CUDA_WAVEFRONT=fixed POLYC_CUDA_GRAPH=1)
    cp "$work/y.npy" "$work/y_fixed.npy"
    flexible=$(time_variant "$repeat" POLYC_CUDA_WAVEFRONT=flexible)
    agree=$("$python" "$root/examples/iir2d/compare.py" "$work/y.npy" "$work/y_fixed.npy" --rtol 1e-4 | sed 's/.*: //')
    speedup=$(awk -v f="$graph" -v x="$flexible" 'BEGIN { printf "%.2f", f / x }')
    flexibleMs[$size:$M]=$flexible
    graphMs[$size:$M]=$graph
    rows+=("$(printf '| %dx%d | %d | %s | %s | %s | %s | %s | %s | %s | %s |' "$size" "$size" "$M" "$plain" "$graph" \
      "$flexible" "$speedup" "$copy" "$steps" "$launches" "$agree")")
    echo "${rows[-1]}"
  done
done
echo
echo "| image | M | fixed, plain (ms) | fixed, graph (ms) | flexible (ms) | fixed graph / flexible | copy floor (ms) | steps floor (ms) | launch floor (ms) | flexible = fixed |"
echo "|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"

# ratio A B: A / B to three decimals (the verdicts compare these, so a ratio of 1.2013 is not "<= 1.2")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# verdict VALUE OP BOUND: "met" or "not met"
verdict() { awk -v v="$1" -v b="$3" -v op="$2" 'BEGIN { ok = op == ">=" ? v >= b : v <= b; print ok ? "met" : "not met" }'; }
echo
echo "Goals (issue 5; seed 004 measured 2.4x at M = 31 and a flexible time nearly constant in M):"
read -r -a measured <<<"$windows"
smallest=${measured[0]}
largest=${measured[-1]}
for size in $sizes; do
  image="${size}x$size"
  if [[ -n ${flexibleMs[$size:31]:-} ]]; then
    x=$(ratio "${graphMs[$size:31]}" "${flexibleMs[$size:31]}")
    echo "- $image: fixed graph / flexible at M = 31 = ${x}x (goal >= 2.4x): $(verdict "$x" ">=" 2.4)"
  fi
  if [[ -n ${flexibleMs[$size:3]:-} && -n ${flexibleMs[$size:17]:-} ]]; then
    x=$(ratio "${flexibleMs[$size:17]}" "${flexibleMs[$size:3]}")
    g=$(ratio "${graphMs[$size:17]}" "${graphMs[$size:3]}")
    echo "- $image: flexible M = 17 / M = 3 = ${x}x (goal <= ${flat}x, fixed graph ${g}x): $(verdict "$x" "<=" "$flat")"
  fi
  echo "- $image: flexible / steps floor = $(ratio "${flexibleMs[$size:$smallest]}" "${stepsMs[$size]}")x at M =" \
    "$smallest, $(ratio "${flexibleMs[$size:$largest]}" "${stepsMs[$size]}")x at M = $largest"
done

# SWEEP=1: the flexible kernel's run-time shape at SWEEP_SIZE (default 2048): threads per point
# (POLYC_CUDA_LANES) x steps between progress stores (POLYC_CUDA_PUBLISH), for each M.
if [[ -n ${SWEEP:-} ]]; then
  size=${SWEEP_SIZE:-2048}
  "$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window 3 --seed 1 --out "$work"
  echo
  echo "Flexible wavefront shape, ${size}x$size (ms; rows: M, lanes per point; columns: progress every N steps)"
  echo "| M | lanes | 1 | 2 | 4 | 8 |"
  echo "|---|---|---|---|---|---|"
  for M in $windows; do
    "$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window "$M" --seed "$M" \
      --no-x --out "$work"
    for lanes in 4 8 16 32; do
      line="| $M | $lanes |"
      for publish in 1 2 4 8; do
        line+=" $(time_variant 3 POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_LANES=$lanes POLYC_CUDA_PUBLISH=$publish) |"
      done
      echo "$line"
    done
  done
fi
