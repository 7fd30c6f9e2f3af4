#!/usr/bin/env bash
# The image programs (test/image/*.poly: quasi-affine indices, shapes that divide, sample(), repeat loops
# that stop early) on the CUDA target: build here, check on the GPU machine.
#   scripts/image-gpu.sh build DIR   builds each as DIR/NAME (polyc build --target=cuda; POLYC defaults to
#                                    build/compiler/driver/polyc), to carry to the GPU machine
#   scripts/image-gpu.sh check DIR   there: checks each against its reference (test/image/Inputs/image.py
#                                    check) at a small odd size and a larger one, the larger twice (a race
#                                    shows as an error in some runs only), then the small one under
#                                    compute-sanitizer's memcheck
# Prints a line per failure; ends with "image-gpu: N passed, N failed"; exit 1 on a failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?usage: scripts/image-gpu.sh build|check DIR}
dir=${2:?usage: scripts/image-gpu.sh build|check DIR}
polyc=${POLYC:-$root/build/compiler/driver/polyc}
python=${PYTHON:-python3}
if ! "$python" -c 'import numpy' 2>/dev/null && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  python=/usr/bin/python3
fi
export PATH="$PATH:/usr/local/cuda/bin"

# name|small sizes|larger sizes
programs=(
  "quasi-affine|H=7,W=9|H=97,W=131"
  "pyramid|H=13,W=7|H=241,W=321"
  "sample|T=2,H=13,W=7|T=2,H=121,W=161"
  "fixed-point|H=13,W=17,K=100|H=97,W=131,K=5000"
)
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*"
}

if [[ $mode == build ]]; then
  mkdir -p "$dir"
  for entry in "${programs[@]}"; do
    IFS='|' read -r name _ _ <<<"$entry"
    if "$polyc" build "$root/test/image/$name.poly" --target=cuda -o "$dir/$name" >"$dir/$name.log" 2>&1; then
      pass
    else
      fail "$name: $(grep -m1 error "$dir/$name.log")"
    fi
  done
  echo "image-gpu: $passed built, $failed failed"
  ((failed == 0))
  exit
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || true
check() {
  local name=$1 sizes=$2 label=$3
  shift 3
  if timeout 600 "$python" "$root/test/image/Inputs/image.py" check "$root/test/image/$name.poly" \
    --exe "$dir/$name" --sizes "$sizes" --work "$work/$name-$label" "$@" >"$work/out.log" 2>&1; then
    pass
  else
    fail "$name $label ($sizes): $(grep -m3 -E 'FAIL|error|Error' "$work/out.log" | tr '\n' ' ')"
  fi
}
for entry in "${programs[@]}"; do
  IFS='|' read -r name small larger <<<"$entry"
  check "$name" "$small" small
  check "$name" "$larger" larger --runs 2
  if command -v compute-sanitizer >/dev/null; then
    check "$name" "$small" memcheck --launcher "compute-sanitizer --tool memcheck --error-exitcode 9"
  fi
done
echo "image-gpu: $passed passed, $failed failed"
((failed == 0))
