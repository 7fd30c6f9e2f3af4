#!/usr/bin/env bash
# Times variants of the 2D IIR executables side by side: one table row per window size M, one column per
# variant, each cell the median compute time (ms) of 5 runs (`--repeat 5 --json`). A variant is
# NAME=EXE[:VAR=VALUE,...]: an executable (any target) and the environment variables it runs with, so one
# executable under several settings, or two builds, are compared in one run on one machine. CUDA
# executables run their flexible wavefront (POLYC_CUDA_WAVEFRONT=flexible unless the variant sets it).
#   scripts/bench-variants.sh SIZE "M..." NAME=EXE[:VAR=VALUE,...]...
#   e.g. scripts/bench-variants.sh 2048 "3 17" fence=bin/iir2d-opencl-flexible membar=bin/iir2d-opencl-flexible:POLYC_OPENCL_NV_FENCE=0
# A cell reads "fail" when the run fails or exceeds 60 s. Inputs: examples/iir2d/generate_inputs.py.
set -u
size=${1:?usage: bench-variants.sh SIZE "M..." NAME=EXE[:VAR=VALUE,...]...}
windows=${2:?usage: bench-variants.sh SIZE "M..." NAME=EXE[:VAR=VALUE,...]...}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window 3 --seed 1 \
  --out "$work" >/dev/null
header="| M |"
rule="|---|"
for variant in "$@"; do
  header="$header ${variant%%=*} |"
  rule="$rule---|"
done
echo "$header"
echo "$rule"
for M in $windows; do
  "$python" "$root/examples/iir2d/generate_inputs.py" --height "$size" --width "$size" --window "$M" --seed "$M" \
    --no-x --out "$work" >/dev/null
  row="| $M |"
  for variant in "$@"; do
    spec=${variant#*=}
    exe=${spec%%:*}
    settings=""
    [[ $spec == *:* ]] && settings=${spec#*:}
    ms=$(env POLYC_CUDA_WAVEFRONT=flexible ${settings//,/ } timeout 60 "$exe" --in x="$work/x.npy" \
           --in a="$work/a.npy" --in b="$work/b.npy" --repeat 5 --json 2>/dev/null | tail -1 |
         "$python" -c 'import json, sys; print("%.3f" % (1e3 * json.load(sys.stdin)["median_s"]))' 2>/dev/null) ||
      ms=fail
    row="$row ${ms:-fail} |"
  done
  echo "$row"
done
