#!/usr/bin/env bash
# Builds every PolyBench kernel of test/polybench/*.poly for the CUDA target (nvcc; nothing runs), as
# OUTDIR/NAME, the executables that scripts/polybench-gpu.sh and scripts/bench-polybench.sh take on the
# GPU machine. Prints one line per kernel and ends with "build-polybench-cuda: N built, N failed";
# exit 1 when any failed.
#   scripts/build-polybench-cuda.sh OUTDIR      (POLYC defaults to build/compiler/driver/polyc;
#                                                TARGET=cpu|opencl builds for another target instead)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
out=$1
polyc=${POLYC:-$root/build/compiler/driver/polyc}
target=${TARGET:-cuda}
export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$out"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
built=0
failed=0
for poly in "$root"/test/polybench/*.poly; do
  name=$(basename "$poly" .poly)
  if "$polyc" build "$poly" --target="$target" -o "$out/$name" >"$log" 2>&1; then
    built=$((built + 1))
    echo "built: $name"
  else
    failed=$((failed + 1))
    echo "FAILED: $name: $(grep -m1 -E 'error' "$log" || tail -1 "$log")"
  fi
done
echo "build-polybench-cuda: $built built, $failed failed ($target, in $out)"
((failed == 0))
