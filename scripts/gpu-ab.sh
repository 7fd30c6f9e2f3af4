#!/usr/bin/env bash
# A/B of two compilers (or more) on the GPU machine, in one device call: builds there, from bundles made
# here by scripts/gpu-bundle.sh (polyc and its runtime), every PolyBench kernel (test/polybench/*.poly) and
# the GPU-mapping benchmarks (scripts/build-gpu-mapping-bench.sh's programs), then
#   STAGE=check  checks the last bundle: scripts/polybench-gpu.sh with the cost model's forms, with
#                int64_t indices forced (POLYC_CUDA_INDEX=64) and with the persistent form forced, and the
#                2D IIR end to end (scripts/gpu-check.sh, stages runtime and e2e; it builds this tree's
#                kernels-generated itself);
#   STAGE=bench  times every bundle: the stencils at PolyBench LARGE against their floor (BANDWIDTH, GB/s,
#                default 3000: the H100 SXM; 4009 measured on the H200), the other kernels
#                at `bench`, and scripts/bench-gpu-mapping.py; the tables of A, then of B (then of C...).
# The builds go to WORK (default gpu-bin/ab, ignored by git): STAGE=bench after STAGE=check reuses them
# when it finds them, that is on a machine still warm (the lent one stays so 30 s after a call); else it
# builds first.
#   scripts/gpu-ab.sh BUNDLE_A BUNDLE_B [BUNDLE_C ...]   (STAGE defaults to check; JOBS to 7 parallel
#                                                        builds a bundle)
# Session 26 measured the index type with it (docs/performance.md at 2c04002, "Kernels indexed in int").
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -lt 2 || $# -gt 8 ]]; then
  echo "usage: $0 BUNDLE_A BUNDLE_B [BUNDLE_C ...] (at most 8)" >&2
  exit 2
fi
bundles=()
for bundle in "$@"; do bundles+=("$(cd "$bundle" && pwd)"); done
sides=(a b c d e f g h)
sides=("${sides[@]:0:$#}")
last=${sides[$# - 1]}
cd "$root"
export PATH="$PATH:/usr/local/cuda/bin"
work=${WORK:-$root/gpu-bin/ab}
stage=${STAGE:-check}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for k in "${!bundles[@]}"; do
  echo "${sides[$k]}: ${bundles[$k]}: $(tr '\n' ' ' < "${bundles[$k]}/COMMIT" 2>/dev/null)"
done

# build BUNDLE OUTDIR: every program, JOBS at a time; prints the ones that failed.
build() {
  local bundle=$1 out=$2
  mkdir -p "$out/gm"
  { for poly in test/polybench/*.poly; do echo "$out/$(basename "$poly" .poly) $poly"; done
    echo "$out/gm/floor test/map/jacobi2d-host-loop.poly"
    echo "$out/gm/jacobi-2d test/polybench/jacobi-2d.poly"
    echo "$out/gm/jacobi2d-fold test/schedule/jacobi2d.poly"
    echo "$out/gm/ratenet examples/rate-network/ratenet.poly"
    echo "$out/gm/lkflow examples/optical-flow/lkflow.poly"; } |
    xargs -P "${JOBS:-7}" -L 1 sh -c 'POLYC_RUNTIME_DIR="$0" "$0/bin/polyc" build "$2" --target=cuda -o "$1" \
      > "$1.log" 2>&1 || echo "FAILED: $1 (see $1.log)"' "$bundle"
}
start=$(date +%s)
if [[ $stage == check || ! -x $work/$last/gemm ]]; then
  rm -rf "$work"
  for k in "${!bundles[@]}"; do build "${bundles[$k]}" "$work/${sides[$k]}" & done
  wait
  echo "built in $(( $(date +%s) - start )) s"
fi

if [[ $stage == check ]]; then
  echo "== B: the cost model's forms"
  scripts/polybench-gpu.sh "$work/$last" 2>&1 | tail -1
  echo "== B: int64_t indices forced"
  POLYC_CUDA_INDEX=64 RACECHECK="trisolv" scripts/polybench-gpu.sh "$work/$last" 2>&1 | tail -1
  echo "== B: persistent form forced"
  POLYC_CUDA_PERSISTENT=1 RACECHECK="" KERNELS="jacobi-1d jacobi-2d heat-3d fdtd-2d seidel-2d lu cholesky floyd-warshall trisolv durbin" \
    scripts/polybench-gpu.sh "$work/$last" 2>&1 | tail -1
  echo "== the 2D IIR end to end (this tree's kernels-generated)"
  STAGES="runtime e2e" timeout 240 scripts/gpu-check.sh 2>&1 | tail -1
else
  driver=test/polybench/Inputs/polybench.py
  stencils=jacobi-1d,jacobi-2d,heat-3d,fdtd-2d,seidel-2d
  others=gemm,2mm,atax,bicg,mvt,gesummv,syrk,trisolv,lu-right-looking,cholesky,durbin,floyd-warshall
  for side in "${sides[@]}"; do
    echo "== $side"
    python3 "$driver" bench "$work/$side" cuda --kernels $stencils --preset large --repeat 3 --bandwidth ${BANDWIDTH:-3000} \
      --work "$work/run-$side"
    python3 "$driver" bench "$work/$side" cuda --kernels $others --preset bench --repeat 3 --bandwidth ${BANDWIDTH:-3000} \
      --work "$work/run-$side" | tail -n +4
    timeout 150 python3 scripts/bench-gpu-mapping.py "$work/$side/gm" --repeat 5
  done
fi
echo "gpu-ab: $stage in $(( $(date +%s) - start )) s"
