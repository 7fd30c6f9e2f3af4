#!/usr/bin/env bash
# The PolyBench kernels (test/polybench/*.poly) on the CUDA target, for a machine with an NVIDIA GPU,
# with executables built elsewhere by scripts/build-polybench-cuda.sh DIR (DIR/jacobi-2d, DIR/gemm, ...):
#  1. checks each against the float64 reference (test/polybench/Inputs/polybench.py check) at its small
#     and medium sizes (polybench.py sizes KERNEL small|medium), the medium run twice (a race shows as
#     an error in some runs only);
#  2. runs each at its small size under compute-sanitizer --tool memcheck, and the kernels with block
#     reductions or recurrences named in RACECHECK under racecheck too, still checked against the reference.
# Prints one line per failure and ends with "polybench-gpu: N passed, N failed"; exit 1 on any failure.
#   scripts/polybench-gpu.sh DIR        (PYTHON defaults to python3; KERNELS="gemm lu" picks kernels;
#                                        RACECHECK defaults to "gemm atax syrk trisolv")
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -ne 1 ]]; then
  echo "usage: $0 DIR_OF_CUDA_EXECUTABLES" >&2
  exit 2
fi
dir=$(cd "$1" && pwd)
python=${PYTHON:-python3}
# Where python3 has no numpy (a pyenv shim), the system's python3 may.
if ! "$python" -c 'import numpy' 2>/dev/null && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  python=/usr/bin/python3
fi
driver=$root/test/polybench/Inputs/polybench.py
export PATH="$PATH:/usr/local/cuda/bin"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
kernels=${KERNELS:-$("$python" "$driver" kernels)}
racecheck=${RACECHECK:-gemm atax syrk trisolv}
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true

# check KERNEL PRESET LABEL [polybench.py options...]
check() {
  local kernel=$1 preset=$2 label=$3
  shift 3
  local sizes
  sizes=$("$python" "$driver" sizes "$kernel" "$preset")
  if timeout 600 "$python" "$driver" check "$root/test/polybench/$kernel.poly" --exe "$dir/$kernel" \
    --sizes "$sizes" --work "$work/$kernel-$label" "$@" >"$work/out.log" 2>&1; then
    pass
  else
    fail "$kernel $label ($sizes): $(grep -m3 -E 'FAIL|ERROR|error|Error' "$work/out.log" | tr '\n' ' ')"
  fi
}

echo "== reference checks"
for kernel in $kernels; do
  if [[ ! -x $dir/$kernel ]]; then
    fail "$kernel: no executable $dir/$kernel (see scripts/build-polybench-cuda.sh)"
    continue
  fi
  check "$kernel" small small
  check "$kernel" medium medium --runs 2
done

if command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer"
  for kernel in $kernels; do
    [[ -x $dir/$kernel ]] || continue
    check "$kernel" small memcheck --launcher "compute-sanitizer --tool memcheck --error-exitcode 9"
    if [[ " $racecheck " == *" $kernel "* ]]; then
      check "$kernel" small racecheck --launcher "compute-sanitizer --tool racecheck --error-exitcode 9"
    fi
  done
else
  fail "compute-sanitizer not found"
fi

echo "polybench-gpu: $passed passed, $failed failed"
((failed == 0))
