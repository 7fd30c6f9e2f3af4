#!/usr/bin/env bash
# Times polyc's executables of the PolyBench kernels (test/polybench/*.poly) and prints a table: per
# kernel the sizes (PolyBench's LARGE dataset; MEDIUM for the time-stepped stencils, whose arrays carry
# the time dimension), the median of the executable's compute region over K runs (EXE --repeat K
# --json), and for the stencils the time per step, the bandwidth floor of one step (every state array
# read once and written once, at the copy bandwidth given) and measured / floor. The inputs are
# generated here with numpy; no reference runs. The same script times the CPU target here and CUDA on
# the GPU machine:
#   scripts/build-polybench-cuda.sh DIR                       # TARGET=cpu for the CPU target
#   scripts/bench-polybench.sh DIR cpu|cuda [COPY_GBS]
# COPY_GBS (or POLYBENCH_COPY_GBS): the measured copy bandwidth in GB/s, counted as bytes read + bytes
# written (STREAM's copy; on a GPU, e.g. a device-to-device cudaMemcpy of 1 GiB: 2 GiB / time). For
# cpu it defaults to numpy's copy bandwidth measured on the spot; for cuda without it the floor is left
# out. REPEAT (default 5), PRESET (bench, or medium/small for a quick run), KERNELS ("gemm lu") and
# PYTHON (python3) adjust the run.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 DIR cpu|cuda [COPY_GBS]" >&2
  exit 2
fi
dir=$1
label=$2
python=${PYTHON:-python3}
# Where python3 has no numpy (a pyenv shim), the system's python3 may.
if ! "$python" -c 'import numpy' 2>/dev/null && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  python=/usr/bin/python3
fi
args=(bench "$dir" "$label" --repeat "${REPEAT:-5}" --preset "${PRESET:-bench}")
bandwidth=${3:-${POLYBENCH_COPY_GBS:-}}
[[ -n $bandwidth ]] && args+=(--bandwidth "$bandwidth")
[[ -n ${KERNELS:-} ]] && args+=(--kernels "$(echo "$KERNELS" | tr ' ' ',')")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$root/test/polybench/Inputs/polybench.py" "${args[@]}" --work "$work"
