#!/usr/bin/env bash
# GPU ranks of the CUDA target (polyc build --target=cuda --mpi): build here, check on the GPU machine.
#   scripts/mpi-gpu.sh build DIR    builds each program below twice into DIR, plain (NAME-cuda) and with
#                                   --mpi (NAME-mpi); needs polyc (POLYC, default build/compiler/driver/polyc),
#                                   nvcc and mpicxx; stripped, to carry them to the GPU machine, or built
#                                   there from a bundle (scripts/gpu-bundle.sh), JOBS builds at once
#   scripts/mpi-gpu.sh check DIR    on the GPU machine: runs every NAME-mpi under mpirun with 1 to 4 ranks
#                                   (RANKS) on random inputs and compares its outputs byte for byte with
#                                   the plain build's, or, where the plain build computes in another order
#                                   (a matrix product's tiles, which --mpi does not use), with NAME-mpi
#                                   run alone; within a relative tolerance where the ranks split sums by
#                                   their terms (the MLP: partial sums added in another order); the ranks share the GPUs there are (local rank modulo GPUs:
#                                   rows GPU to GPU through NCCL when each rank has its own, else through
#                                   host memory; POLYC_MPI_NCCL=0 forces the latter)
# ONLY="NAME ..." limits either mode to those programs.
# Prints one line a program and rank count; ends with "mpi-gpu: N passed, N failed"; exit 1 on a failure.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:?usage: scripts/mpi-gpu.sh build|check DIR}
dir=${2:?usage: scripts/mpi-gpu.sh build|check DIR}
polyc=${POLYC:-$root/build/compiler/driver/polyc}
python=${PYTHON:-python3}

# name|source|params for the check|the reference: plain (the plain build) or alone (NAME-mpi, one
# process)|options of mpi_compare.py (--rtol where sums are split by their terms, or where a pipeline's
# strips run the fixed wavefront's sums against the plain build's flexible ones: with more ranks than
# GPUs, {gpus}, or none peer to peer; {peer-ranks}: only the rank counts up to the GPUs, where a sum that
# grows without bound, M = 31's, leaves no tolerance meaningful)|environment of the runs
programs=(
  "gemm|test/polybench/gemm.poly|--param NI=37 --param NJ=41 --param NK=43|alone"
  "jacobi-2d|test/polybench/jacobi-2d.poly|--param N=97 --param T=9|plain"
  "syrk|test/polybench/syrk.poly|--param N=53 --param M=17|plain"
  "syrk-few|test/polybench/syrk.poly|--param N=5 --param M=3|plain"
  "cholesky|test/polybench/cholesky.poly|--param N=29|plain"
  "halo|test/run/mpi/Inputs/halo.poly|--param N=13 --param T=5|plain"
  "halo-small|test/run/mpi/Inputs/halo.poly|--param N=2 --param T=3|plain"
  "mlp|examples/mlp/mlp.poly|--param P=37 --param I=5 --param J=9 --param K=3 --param E=4|alone|--rtol 1e-5"
  "mlp-few|examples/mlp/mlp.poly|--param P=2 --param I=5 --param J=9 --param K=3 --param E=3|alone|--rtol 1e-5"
  "mlp-none|examples/mlp/mlp.poly|--param P=0 --param I=5 --param J=9 --param K=3 --param E=2|alone|--rtol 1e-5"
  "ratenet|examples/rate-network/ratenet.poly|--param N=500 --param C=7 --param T=6 --int-bound pre=N|plain"
  "lkflow|examples/optical-flow/lkflow.poly|--param T=4 --param H=61 --param W=83|plain"
  "iir2d|examples/iir2d/iir2d.poly|--param H=37 --param W=29 --param M=3|plain|--rtol 1e-4 --exact-ranks {gpus}"
  "iir2d-thin|examples/iir2d/iir2d.poly|--param H=7 --param W=300 --param M=5|plain|--rtol 1e-4 --exact-ranks {gpus}"
  "iir2d-m31|examples/iir2d/iir2d.poly|--param H=70 --param W=100 --param M=31|plain|{peer-ranks}"
  "iir2d-fixed|examples/iir2d/iir2d.poly|--param H=70 --param W=100 --param M=31|plain||POLYC_CUDA_WAVEFRONT=fixed"
  "iir2d-m33|examples/iir2d/iir2d.poly|--param H=40 --param W=50 --param M=33|plain|--rtol 1e-4"
  "iir2d-m1|examples/iir2d/iir2d.poly|--param H=9 --param W=11 --param M=1|plain|--rtol 1e-4"
  "pyramid|test/image/pyramid.poly|--param H=37 --param W=23|plain"
  "canny|examples/image-pipeline/canny.poly|--param H=45 --param W=61 --param R=3000|plain"
  "pyrlk|examples/image-pipeline/pyrlk.poly|--param H=37 --param W=53|plain"
  "fixed-point|test/image/fixed-point.poly|--param H=37 --param W=23 --param K=50|plain"
  "iir2d-messages|examples/iir2d/iir2d.poly|--param H=37 --param W=29 --param M=3|plain|--rtol 1e-4|POLYC_MPI_PEER=0"
)
field() { cut -d'|' -f"$2" <<<"$1"; }
if [[ -n ${ONLY:-} ]]; then
  chosen=()
  for p in "${programs[@]}"; do
    [[ " $ONLY " == *" $(field "$p" 1) "* ]] && chosen+=("$p")
  done
  programs=("${chosen[@]}")
fi

case $mode in
build)
  mkdir -p "$dir"
  # One polyc build a job (JOBS at once, default the cores there are): on the GPU machine's cores with
  # a carried bundle (scripts/gpu-bundle.sh; POLYC and POLYC_RUNTIME_DIR point into it).
  for p in "${programs[@]}"; do
    source=$root/$(field "$p" 2)
    exe=$(basename "$source" .poly)
    [[ -x $dir/$exe-cuda ]] || echo "$source $dir/$exe-cuda"
    [[ -x $dir/$exe-mpi ]] || echo "$source $dir/$exe-mpi --mpi"
  done | sort -u | xargs -P "${JOBS:-$(nproc)}" -L 1 sh -c '"$0" build --target=cuda "$1" -o "$2" $3' "$polyc" ||
    exit 1
  strip "$dir"/*-cuda "$dir"/*-mpi
  ;;
check)
  passed=0 failed=0
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  for p in "${programs[@]}"; do
    name=$(field "$p" 1) source=$(field "$p" 2) params=$(field "$p" 3) reference=$(field "$p" 4)
    options=$(field "$p" 5) environment=$(field "$p" 6)
    options=${options//\{gpus\}/$gpus}
    if [[ $options == *"{peer-ranks}"* ]]; then
      peerRanks=$(tr , '\n' <<<"${RANKS:-1,2,3,4}" | awk -v g="$gpus" '$1 <= g' | paste -sd,)
      [[ -n $peerRanks ]] || continue
      options=${options//\{peer-ranks\}/--ranks $peerRanks}
    fi
    exe=$(basename "$source" .poly)
    ref=$dir/$exe-cuda
    [[ $reference == alone ]] && ref=$dir/$exe-mpi
    # shellcheck disable=SC2086
    out=$(env $environment "$python" "$root/test/run/mpi/Inputs/mpi_compare.py" "$ref" "$dir/$exe-mpi" $params \
      --ranks "${RANKS:-1,2,3,4}" $options --work "$work/$name" 2>&1)
    while IFS= read -r line; do
      echo "$name ($reference): $line"
      case $line in
      *identical* | *within*) passed=$((passed + 1)) ;;
      *) failed=$((failed + 1)) ;;
      esac
    done <<<"$out"
  done
  echo "mpi-gpu: $passed passed, $failed failed"
  [[ $failed == 0 ]]
  ;;
*)
  echo "usage: scripts/mpi-gpu.sh build|check DIR" >&2
  exit 2
  ;;
esac
