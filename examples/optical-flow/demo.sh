#!/usr/bin/env bash
# The optical flow end to end on the CPU (part of `make demo`): a movie made from the test photograph
# turning by half a degree a frame, written as PNG frames; lkflow built by polyc reads the folder and
# computes the flow of every frame; the flow of the last frame is compared with the true motion and
# drawn (colour wheel and arrows) into BUILD/demo/optical-flow/flow.png.
#   examples/optical-flow/demo.sh [BUILD]        (BUILD defaults to build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
polyc="$build/compiler/driver/polyc"
python=/usr/bin/python3
out="$build/demo/optical-flow"
if [[ ! -x "$polyc" ]]; then
  echo "demo: $polyc is missing; build first (make build)" >&2
  exit 1
fi
mkdir -p "$out"

echo "== optical flow: a movie of 40 frames, 160 x 120, the photograph turning 0.5 degrees a frame"
"$python" "$here/make_sequence.py" "$out/seq" --size 160x120 --frames 40 --motion rotate:0.5 --png
echo "== polyc build: lkflow for the CPU (explain shows the factored sums: polyc explain $here/lkflow.poly)"
"$polyc" build "$here/lkflow.poly" --target=cpu -o "$out/lkflow"
echo "== lkflow reads the PNG frames of $out/seq/frames"
"$out/lkflow" --in I="$out/seq/frames" --in gx="$out/seq/gx.npy" --in gy="$out/seq/gy.npy" \
  --in gt="$out/seq/gt.npy" --out u="$out/u.npy" --out v="$out/v.npy" --repeat 3
echo "== the flow against the true motion, and its picture"
"$python" "$here/evaluate.py" "$out/seq" "$out/u.npy" "$out/v.npy" --picture "$out/flow.png"
echo "   $out/flow.png"
