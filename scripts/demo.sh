#!/usr/bin/env bash
# `make demo`: the 2D IIR example end to end on the CPU. Builds the filter with the fixed and the
# flexible allocation, filters the test photograph (examples/iir2d/data/*.png) with both, checks them
# against the independent reference, writes the outputs and a side-by-side PNG into BUILD/demo/, and
# prints a table of compute times (median of 5 runs each, --repeat 5 --json).
#   scripts/demo.sh [BUILD]        (BUILD defaults to build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
polyc="$build/compiler/driver/polyc"
reference="$build/examples/iir2d/iir2d-reference"
python=/usr/bin/python3
example="$root/examples/iir2d"
out="$build/demo"
windows=(3 9)   # a small and a large window: fixed vs flexible is timed at both

for tool in "$polyc" "$reference"; do
  if [[ ! -x "$tool" ]]; then
    echo "demo: $tool is missing; build first (make build, or ninja -C $build)" >&2
    exit 1
  fi
done
mkdir -p "$out"

echo "== polyc build: the 2D IIR filter for the CPU, fixed and flexible allocation"
"$polyc" build "$example/iir2d.poly" --target=cpu --allocation=fixed -o "$out/iir2d-fixed"
"$polyc" build "$example/iir2d.poly" --target=cpu --allocation=flexible -o "$out/iir2d-flexible"
"$polyc" emit "$example/iir2d.poly" --target=cpu -o "$out/src"
echo "   executables in $out, generated source in $out/src (and kernels-generated/iir2d/cpu)"

# The input image; random input when no image or no Pillow is there.
image=$(ls "$example"/data/*.png 2>/dev/null | head -n 1 || true)
if [[ -n "$image" ]] && "$python" "$example/image_to_npy.py" "$image" "$out/x.npy" 2>/dev/null; then
  shape=$("$python" -c "import numpy; print(*numpy.load('$out/x.npy').shape)")
  echo "== input: $(basename "$image") ($shape, grayscale in [0, 1])"
  have_image=1
else
  shape="512 512"
  echo "== input: random 512 x 512 (no test image or no Pillow)"
  have_image=0
fi
read -r height width <<<"$shape"

status=0
for m in "${windows[@]}"; do
  dir="$out/M$m"
  mkdir -p "$dir"
  if ((have_image)); then
    "$python" "$example/generate_inputs.py" --height "$height" --width "$width" --window "$m" --seed "$m" \
      --out "$dir" --no-x >/dev/null
    cp "$out/x.npy" "$dir/x.npy"
  else
    "$python" "$example/generate_inputs.py" --height "$height" --width "$width" --window "$m" --seed "$m" \
      --out "$dir" >/dev/null
  fi
  "$reference" "$dir/x.npy" "$dir/a.npy" "$dir/b.npy" "$dir/y_ref.npy"
  echo "== M = $m: verification against iir2d-reference (float64), relative error <= 1e-5"
  for kind in fixed flexible; do
    "$out/iir2d-$kind" --in x="$dir/x.npy" --in a="$dir/a.npy" --in b="$dir/b.npy" --out y="$dir/y_$kind.npy"
    printf '   %-8s ' "$kind"
    "$python" "$example/compare.py" "$dir/y_$kind.npy" "$dir/y_ref.npy" --rtol 1e-5 || status=1
  done
done

last=${windows[-1]}
if "$python" "$example/side_by_side.py" "$out/M$last/x.npy" "$out/M$last/y_flexible.npy" "$out/iir2d.png" \
  2>/dev/null; then
  echo "== side by side (input | flexible output, M = $last): $out/iir2d.png"
fi

echo "== compute time on this machine ($(nproc) cores, OMP_NUM_THREADS=${OMP_NUM_THREADS:-default}), median of 5 runs"
printf '   %-4s %14s %14s %9s\n' M "fixed (ms)" "flexible (ms)" speedup
for m in "${windows[@]}"; do
  dir="$out/M$m"
  declare -A median
  for kind in fixed flexible; do
    json=$("$out/iir2d-$kind" --in x="$dir/x.npy" --in a="$dir/a.npy" --in b="$dir/b.npy" --repeat 5 --json \
      2>/dev/null)
    median[$kind]=$("$python" -c "import json, sys; print(json.loads(sys.argv[1])['median_s'] * 1e3)" "$json")
  done
  "$python" -c "import sys; f, x = float(sys.argv[2]), float(sys.argv[3]); \
print('   %-4s %14.2f %14.2f %8.2fx' % (sys.argv[1], f, x, f / x))" "$m" "${median[fixed]}" "${median[flexible]}"
done
if ((status)); then
  echo "demo: FAILED: an output differs from the reference" >&2
fi
exit $status
