#!/usr/bin/env bash
# Builds, here (nvcc compiles; nothing runs), the CUDA executables that scripts/bench-gpu-mapping.py
# times on the GPU machine: OUTDIR/{floor, jacobi-2d, jacobi2d-fold, ratenet, lkflow}.
#   scripts/build-gpu-mapping-bench.sh OUTDIR      (POLYC defaults to build/compiler/driver/polyc)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
polyc=${POLYC:-$root/build/compiler/driver/polyc}
export PATH="$PATH:/usr/local/cuda/bin"
mkdir -p "$out"
build() { "$polyc" build "$2" --target=cuda -o "$out/$1" && strip "$out/$1" && echo "built: $1"; }
build floor "$root/test/map/jacobi2d-host-loop.poly"
build jacobi-2d "$root/test/polybench/jacobi-2d.poly"
build jacobi2d-fold "$root/test/schedule/jacobi2d.poly"
build ratenet "$root/examples/rate-network/ratenet.poly"
build lkflow "$root/examples/optical-flow/lkflow.poly"
