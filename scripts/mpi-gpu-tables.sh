#!/usr/bin/env bash
# The tables of docs/performance.md, "GPU ranks", on the GPU machine (issues 33 and 34): the examples'
# MPI builds on 1 to R GPUs against their plain builds on one GPU, after the byte-for-byte check.
#   scripts/mpi-gpu-tables.sh DIR [RANKS]
# DIR holds the builds of `scripts/mpi-gpu.sh build DIR` (made there from a bundle: POLYC and
# POLYC_RUNTIME_DIR, scripts/gpu-bundle.sh); RANKS is a list such as 1,2,4 (default: 1 to the GPUs there
# are). TABLES picks some of: check lkflow ratenet mlp iir (default all), each bounded by a timeout so
# that one slow table leaves the others their time. Prints markdown tables (scripts/bench-mpi-gpu.py).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:?usage: scripts/mpi-gpu-tables.sh DIR [RANKS]}
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
ranks=${2:-$(seq -s, 1 "$gpus")}
tables=${TABLES:-check lkflow ratenet mlp iir}
polyc=${POLYC:-$root/build/compiler/driver/polyc}
bench() { timeout "$1" python3 "$root/scripts/bench-mpi-gpu.py" "${@:2}" --work "/dev/shm/mpi-gpu-tables"; }
wants() { [[ " $tables " == *" $1 "* ]]; }
start=$SECONDS

echo "# $gpus x $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), ranks $ranks, $(date -u +%F)"
if wants check; then
  echo "## check"
  RANKS=$ranks timeout 300 "$root/scripts/mpi-gpu.sh" check "$dir" | grep -v -e identical -e within
fi
if wants lkflow; then
  # Halos recomputed (the default) and sent (--no-recompute), 1920 x 1080, 16 frames.
  [[ -x $dir/lkflow-sent ]] ||
    "$polyc" build --target=cuda --mpi --no-recompute "$root/examples/optical-flow/lkflow.poly" -o "$dir/lkflow-sent"
  for exe in lkflow-mpi lkflow-sent; do
    echo "## optical flow, $exe"
    bench 150 "$dir/lkflow-cuda" "$dir/$exe" --param H=1080 --param W=1920 --param T=16 --ranks "$ranks" \
      --weak H --repeat 10
  done
fi
if wants ratenet; then
  # Its largest size, presynaptic indices sorted within a neuron (make_network.py), as the one-GPU tables;
  # weak scaling from 20,000 neurons (80,000 on 4 GPUs).
  network="python3 $root/examples/rate-network/make_network.py {dir} --neurons {N} --fan-in {C}"
  echo "## rate network"
  bench 200 "$dir/ratenet-cuda" "$dir/ratenet-mpi" --param N=80000 --param C=8192 --param T=20 \
    --int-bound pre=N --ranks "$ranks" --repeat 5 --inputs-command "$network"
  echo "## rate network, weak"
  bench 200 "$dir/ratenet-cuda" "$dir/ratenet-mpi" --param N=20000 --param C=8192 --param T=20 \
    --int-bound pre=N --ranks "$ranks" --repeat 5 --weak N --inputs-command "$network"
fi
if wants mlp; then
  echo "## MLP, wide"
  bench 150 "$dir/mlp-cuda" "$dir/mlp-mpi" --param P=32561 --param I=784 --param J=1024 --param K=10 \
    --param E=20 --ranks "$ranks" --repeat 5
fi
if wants iir; then
  echo "## IIR"
  bench 150 "$dir/iir2d-cuda" "$dir/iir2d-mpi" --param H=8192 --param W=8192 --param M=31 --ranks "$ranks" --weak H \
    --repeat 5
fi
echo "mpi-gpu-tables: done in $((SECONDS - start)) s"
