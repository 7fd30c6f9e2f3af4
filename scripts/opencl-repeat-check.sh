#!/usr/bin/env bash
# Repeats the OpenCL flexible IIR on one large case against the float64 reference under several
# run-time settings, on a machine with NVIDIA's OpenCL driver (the lent H100): a publication race shows
# as an error that comes and goes (it found one on 2026-11-22: docs/performance.md, OpenCL).
#   scripts/opencl-repeat-check.sh BIN [LIB]   (env: M=31, N=8 runs per setting; BIN as for opencl-gpu.sh)
# Prints one line per setting: "setting 'S': F of N failed [the last failure]"; exit 1 if any failed.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:?usage: opencl-repeat-check.sh BIN [LIB]}" && pwd)
[[ -n ${2:-} ]] && export LD_LIBRARY_PATH=$(cd "$2" && pwd):${LD_LIBRARY_PATH:-}
source "$root/scripts/lib/nvidia-opencl-icd.sh"
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$root/examples/iir2d/generate_inputs.py" --height 2048 --width 2048 --window "${M:-31}" --seed 7 \
  --out "$work" >/dev/null
"$bin/iir2d-reference" "$work/x.npy" "$work/a.npy" "$work/b.npy" "$work/ref.npy" >/dev/null
status=0
for setting in "" POLYC_OPENCL_POLLS=0 POLYC_OPENCL_GROUPS=64 POLYC_OPENCL_GROUPS=2000 POLYC_OPENCL_STRIP=4; do
  fails=0
  last=""
  for _ in $(seq "${N:-8}"); do
    env $setting "$bin/iir2d-opencl-flexible" --in x="$work/x.npy" --in a="$work/a.npy" --in b="$work/b.npy" \
      --out y="$work/y.npy" >/dev/null 2>&1
    if ! result=$("$python" "$root/examples/iir2d/compare.py" "$work/y.npy" "$work/ref.npy" --rtol 1e-5 2>&1); then
      fails=$((fails + 1))
      last=$result
    fi
  done
  echo "setting '${setting:-default}': $fails of ${N:-8} failed $last"
  ((fails == 0)) || status=1
done
exit $status
