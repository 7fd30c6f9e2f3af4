#!/usr/bin/env bash
# Regenerates kernels-generated/: the emitted source of every example for every target, committed so
# that readers can inspect kernels without building. `--check` writes to a temporary folder and
# fails (exit 1, with a diff) when the committed files are stale; the staleness tests run that.
#   scripts/regenerate-kernels.sh [--check] [POLYC]    (POLYC defaults to build/compiler/driver/polyc)
# Commands run from the repository root with relative paths, so the files' banners do not depend on
# where the checkout is.
set -euo pipefail
check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
polyc=$(realpath "${1:-$root/build/compiler/driver/polyc}")
cd "$root"
out=kernels-generated
if ((check)); then
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi

# emit DIR ARGS...: polyc emit ARGS -o $out/DIR
emit() {
  local dir=$1
  shift
  mkdir -p "$out/$dir"
  "$polyc" emit "$@" -o "$out/$dir"
}

# CPU (compiler/codegen/cpu): the 2D IIR filter with polyc's default allocation (both the flexible and
# the fixed wavefront, chosen at run time by M > 1), and the other examples.
emit iir2d/cpu examples/iir2d/iir2d.poly --target=cpu
emit rate-network/cpu examples/rate-network/ratenet.poly --target=cpu
emit rate-network/cpu examples/rate-network/ratenet-csr.poly --target=cpu
emit mlp/cpu examples/mlp/mlp.poly --target=cpu
emit optical-flow/cpu examples/optical-flow/lkflow.poly --target=cpu
emit image-pipeline/cpu examples/image-pipeline/canny.poly --target=cpu
emit image-pipeline/cpu examples/image-pipeline/hough.poly --target=cpu
emit image-pipeline/cpu examples/image-pipeline/pyrlk.poly --target=cpu

# CUDA (compiler/codegen/cuda): the 2D IIR filter with polyc's default allocation (flexible if M > 1,
# else fixed) and with the fixed one only.
emit iir2d/cuda/auto examples/iir2d/iir2d.poly --target=cuda
emit iir2d/cuda/fixed examples/iir2d/iir2d.poly --target=cuda --allocation=fixed
# The other examples: their time and repeat loops are host loops (or persistent kernels) around kernels.
emit rate-network/cuda examples/rate-network/ratenet.poly --target=cuda
emit rate-network/cuda examples/rate-network/ratenet-csr.poly --target=cuda
emit mlp/cuda examples/mlp/mlp.poly --target=cuda
emit optical-flow/cuda examples/optical-flow/lkflow.poly --target=cuda
# Streamed (--stream): the frames uploaded and the flow downloaded one step at a time, overlapped.
emit optical-flow/cuda-stream examples/optical-flow/lkflow.poly --target=cuda --stream
emit image-pipeline/cuda examples/image-pipeline/canny.poly --target=cuda
emit image-pipeline/cuda examples/image-pipeline/hough.poly --target=cuda
emit image-pipeline/cuda examples/image-pipeline/pyrlk.poly --target=cuda

# OpenCL (compiler/codegen/opencl): the 2D IIR filter with the default allocation (both kernels, flexible
# if M > 1), and each allocation forced.
emit iir2d/opencl/auto examples/iir2d/iir2d.poly --target=opencl
emit iir2d/opencl/fixed examples/iir2d/iir2d.poly --target=opencl --allocation=fixed
emit iir2d/opencl/flexible examples/iir2d/iir2d.poly --target=opencl --allocation=flexible
emit rate-network/opencl examples/rate-network/ratenet.poly --target=opencl
emit rate-network/opencl examples/rate-network/ratenet-csr.poly --target=opencl
emit mlp/opencl examples/mlp/mlp.poly --target=opencl
emit optical-flow/opencl examples/optical-flow/lkflow.poly --target=opencl
emit image-pipeline/opencl examples/image-pipeline/canny.poly --target=opencl
emit image-pipeline/opencl examples/image-pipeline/hough.poly --target=opencl
emit image-pipeline/opencl examples/image-pipeline/pyrlk.poly --target=opencl

if ((check)); then
  status=0
  for file in $(cd "$out" && find . -type f | sort); do
    if ! diff -u "kernels-generated/$file" "$out/$file" >/dev/null 2>&1; then
      echo "stale: kernels-generated/${file#./} (run scripts/regenerate-kernels.sh)"
      diff -u "kernels-generated/$file" "$out/$file" | head -20 || true
      status=1
    fi
  done
  exit $status
fi
