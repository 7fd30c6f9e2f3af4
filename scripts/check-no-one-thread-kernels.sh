#!/usr/bin/env bash
# Fails (exit 1, naming file and line) when emitted CUDA or OpenCL under DIR (default kernels-generated)
# launches work on one thread: a one-thread CUDA launch or launch bound, or an OpenCL kernel that one
# work-item runs (polyc names those `..._serial`). polyc emits them only for bands with no parallel
# dimension or reduction in or under them, and no example has such a band.
#   scripts/check-no-one-thread-kernels.sh [DIR]
set -uo pipefail
dir=${1:-$(cd "$(dirname "$0")/.." && pwd)/kernels-generated}
hits=$(grep -rnE '<<<1, 1[,>]|__launch_bounds__\(1\)|__kernel void [A-Za-z0-9_]*_serial\b' "$dir" \
  --include='*.cu' --include='*.cl' --include='*.cpp' 2>/dev/null)
if [[ -n "$hits" ]]; then
  echo "one-thread kernels:"
  echo "$hits"
  exit 1
fi
echo "no one-thread kernels in $dir"
