#!/usr/bin/env bash
# The MLP example (examples/mlp) on the CUDA target, for a machine with an NVIDIA GPU, with executables
# built elsewhere (polyc build --target=cuda examples/mlp/mlp.poly -o DIR/mlp, and classify.poly as
# DIR/classify): trains on xor, the adult-sized set, an odd-sized random network (1,000 x 37 -> 33 -> 3:
# partial tiles) and a wide one (4,000 x 784 -> 1,024 -> 10: square tiles, split terms), classifies with
# the trained weights, and compares the weights, the loss curve and the outputs with
# examples/mlp/reference.py (float64 NumPy). Ends with "mlp-gpu: N passed, N failed"; exit 1 on a failure.
#   scripts/mlp-gpu.sh DIR        (PYTHON defaults to python3)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -ne 1 ]]; then
  echo "usage: $0 DIR_OF_CUDA_EXECUTABLES" >&2
  exit 2
fi
dir=$(cd "$1" && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# check NAME EPOCHS make_data.py-options...
check() {
  local name=$1 epochs=$2 d=$work/$1
  shift 2
  "$python" "$root/examples/mlp/make_data.py" "$d" "$@" >/dev/null &&
    "$dir/mlp" --param E="$epochs" --in X="$d/X.npy" --in D="$d/D.npy" --in eta="$d/eta.npy" \
      --in W1="$d/W1.npy" --in W2="$d/W2.npy" --out W1="$d/W1t.npy" --out W2="$d/W2t.npy" \
      --out loss="$d/loss.npy" &&
    "$dir/classify" --in X="$d/X.npy" --in W1="$d/W1t.npy" --in W2="$d/W2t.npy" --out y="$d/y.npy" &&
    "$python" "$root/examples/mlp/reference.py" "$d" "$epochs" --trained "$d/W1t.npy" "$d/W2t.npy" \
      --loss "$d/loss.npy" --classified "$d/y.npy" >"$d/check.log" 2>&1
  local status=$?
  if [[ $status -eq 0 ]]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $name: $(grep -v ': ok$' "$d/check.log" 2>/dev/null | tr '\n' ' ')"
  fi
  cat "$d/check.log" 2>/dev/null | sed "s/^/$name: /"
}

check xor 2000 --dataset xor
check adult-size 100 --dataset adult-size
check odd 20 --dataset random --cases 1000 --features 37 --outputs 3 --hidden 33
check wide 3 --dataset random --cases 4000 --features 783 --outputs 10 --hidden 1024
echo "mlp-gpu: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
