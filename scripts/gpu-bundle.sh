#!/usr/bin/env bash
# Copies this build's polyc and its runtime (headers and static libraries) into OUTDIR, for a machine
# that has no LLVM development files but has isl's and the C++ runtime libraries (the GPU machine):
# there, `POLYC_RUNTIME_DIR=OUTDIR OUTDIR/bin/polyc build ...` builds like here (--mpi too: the MPI layer
# is in lib/), so that the fuzzer can build and run CUDA programs on the GPU (docs/testing.md, "On the
# GPU machine") and scripts/mpi-gpu.sh can build its programs there.
#   scripts/gpu-bundle.sh OUTDIR        (BUILD defaults to build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
build=${BUILD:-$root/build}
out=$1
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
cp "$build/compiler/driver/polyc" "$out/bin/polyc"
strip "$out/bin/polyc"
cp -r "$root/runtime/include" "$out/include"
for lib in "$build"/runtime/libpolyc_runtime*.a "$build"/runtime/src/*/libpolyc_runtime_*.a; do
  [[ -f $lib ]] && cp "$lib" "$out/lib/"
done
echo "gpu-bundle: $(du -sh "$out" | cut -f1) in $out"
