#!/usr/bin/env bash
# The OpenCL flexible wavefront's race check on an NVIDIA GPU: repeated runs of the 2D IIR filter at
# 2048x2048 (M = 5, 17, 31) under several grids (the default, 64 and 2000 work-groups, one work-group) and
# without polling, each compared with the float64 reference (relative error <= 1e-5). A publication or
# barrier race shows as some runs wrong, not all (docs/performance.md, OpenCL: "A publication race").
#   scripts/opencl-repeat-check.sh BIN [LIB]   (BIN: iir2d-opencl-flexible and iir2d-reference, as for
#                                               scripts/opencl-gpu.sh; env PYTHON=python3)
# Exits 1 when a run is wrong.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:?usage: opencl-repeat-check.sh BIN [LIB]}" && pwd)
[[ -n ${2:-} ]] && export LD_LIBRARY_PATH=$(cd "$2" && pwd):${LD_LIBRARY_PATH:-}
python=${PYTHON:-python3}
if [[ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ]]; then
  mkdir -p /tmp/icd
  echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd
  export OCL_ICD_VENDORS=/tmp/icd
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ok=0 bad=0
for M in 5 17 31; do
  w=$work/M$M
  "$python" "$root/examples/iir2d/generate_inputs.py" --height 2048 --width 2048 --window $M --seed $M --out "$w" >/dev/null
  "$bin/iir2d-reference" "$w/x.npy" "$w/a.npy" "$w/b.npy" "$w/ref.npy" >/dev/null || { echo "reference failed"; exit 1; }
  for setting in "" POLYC_OPENCL_GROUPS=64 POLYC_OPENCL_GROUPS=2000 POLYC_OPENCL_POLLS=0 POLYC_OPENCL_GROUPS=1; do
    runs=4
    [[ $setting == POLYC_OPENCL_GROUPS=1 ]] && runs=1 # one work-group walks every column: slow
    for ((k = 1; k <= runs; ++k)); do
      env $setting "$bin/iir2d-opencl-flexible" --in x="$w/x.npy" --in a="$w/a.npy" --in b="$w/b.npy" \
        --out y="$w/y.npy" >/dev/null 2>&1
      if result=$("$python" "$root/examples/iir2d/compare.py" "$w/y.npy" "$w/ref.npy" --rtol 1e-5 2>&1); then
        ok=$((ok + 1))
      else
        bad=$((bad + 1))
        echo "M=$M ${setting:-default} run $k: $result"
      fi
    done
  done
done
echo "repeated runs: $ok ok, $bad wrong"
((bad == 0))
