#!/usr/bin/env bash
# GPU check of the CUDA target, for a machine with an NVIDIA GPU (the lent H100; CI has none):
#  1. builds the runtime-only configuration (cmake -DPOLYC_RUNTIME_ONLY=ON): the runtime, its GPU check
#     and the committed kernels-generated/iir2d/cuda executables (no isl or LLVM needed there);
#  2. runs the runtime's GPU check (reductions; the wavefront machinery on a hand-written IIR point);
#  3. runs the 2D IIR end to end against the float64 reference (iir2d-reference) for both allocations
#     (fixed with a graph and with plain launches, flexible, and the --allocation=fixed build), over
#     shapes 1x1, 1xN, Nx1, 97x131, 300x257 and M in {1, 2, 3, 5, 8};
#  4. runs the flexible kernel, in both forms (the decoupled step, POLYC_CUDA_DECOUPLED=1, and term
#     tables, POLYC_CUDA_DECOUPLED=0; the default is the decoupled step for windows 2 to 32), with
#     every lanes-per-point variant, five times on each of four large cases (a race shows as an error
#     that moves), with forced grids from 1 block to 4x the resident count, and built with a 200 ns wait
#     budget (iir2d-cuda-takeover, term tables: columns given up and taken over mid-way, "takeover");
#  5. runs compute-sanitizer memcheck, racecheck and synccheck on small cases of both allocations.
# Prints one line per failure and ends with "gpu-check: N passed, N failed"; exit 1 on any failure.
#   scripts/gpu-check.sh [BUILD_DIR]      (default build-gpu; PYTHON defaults to python3)
# STAGES (default "runtime e2e repeat grids takeover sanitizer") picks the stages after the build.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-gpu}
python=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stages=${STAGES:-runtime e2e repeat grids takeover sanitizer}
stage() { [[ " $stages " == *" $1 "* ]]; }
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() {
  failed=$((failed + 1))
  echo "FAIL: $*"
}

echo "== build ($build)"
cmake -S "$root" -B "$build" -G Ninja -DPOLYC_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_DISABLE_FIND_PACKAGE_OpenCL=ON -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >"$work/cmake.log" 2>&1 ||
  { cat "$work/cmake.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" >"$work/build.log" 2>&1 || { tail -50 "$work/build.log"; exit 1; }
auto=$build/kernels-generated/iir2d/cuda/iir2d-cuda-auto
fixed=$build/kernels-generated/iir2d/cuda/iir2d-cuda-fixed
takeover=$build/kernels-generated/iir2d/cuda/iir2d-cuda-takeover
check=$build/runtime/src/cuda/polyc-cuda-runtime-check
reference=$build/examples/iir2d/iir2d-reference
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true

if stage runtime; then
  echo "== runtime GPU check"
  if "$check"; then pass; else fail "polyc-cuda-runtime-check"; fi
fi

# run NAME ENV... -- EXE: runs EXE on $case_dir's inputs with the environment, compares with y_ref.npy.
run_case() {
  local name=$1
  shift
  local envs=()
  while [[ $1 != "--" ]]; do
    envs+=("$1")
    shift
  done
  shift
  local exe=$1
  rm -f "$case_dir/y.npy"
  env "${envs[@]}" "$exe" --in x="$case_dir/x.npy" --in a="$case_dir/a.npy" --in b="$case_dir/b.npy" \
    --out y="$case_dir/y.npy" >"$work/run.log" 2>&1
  local status=$?
  if ((status != 0)); then
    fail "$name: exit status $status ($(tail -1 "$work/run.log"))"
    return
  fi
  if "$python" "$root/examples/iir2d/compare.py" "$case_dir/y.npy" "$case_dir/y_ref.npy" --rtol 1e-5 \
    >"$work/compare.log" 2>&1; then
    pass
  else
    fail "$name: $(cat "$work/compare.log")"
  fi
}

# Inputs and the reference for H x W with window M, seeded by the case.
make_case() {
  case_dir=$work/case-$1x$2-$3
  mkdir -p "$case_dir"
  "$python" "$root/examples/iir2d/generate_inputs.py" --height "$1" --width "$2" --window "$3" \
    --seed $(($1 * 7919 + $2 * 104729 + $3)) --out "$case_dir" &&
    "$reference" "$case_dir/x.npy" "$case_dir/a.npy" "$case_dir/b.npy" "$case_dir/y_ref.npy" >/dev/null
}

stage e2e && echo "== IIR end to end: both allocations against the float64 reference"
stage e2e && for shape in 1x1 1x37 41x1 97x131 300x257; do
  H=${shape%x*}
  W=${shape#*x}
  for M in 1 2 3 5 8; do
    make_case "$H" "$W" "$M" || { fail "inputs $shape M=$M"; continue; }
    run_case "$shape M=$M fixed (graph)" POLYC_CUDA_WAVEFRONT=fixed -- "$auto"
    run_case "$shape M=$M fixed (plain launches)" POLYC_CUDA_WAVEFRONT=fixed POLYC_CUDA_GRAPH=0 -- "$auto"
    run_case "$shape M=$M flexible (decoupled)" POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_DECOUPLED=1 -- "$auto"
    run_case "$shape M=$M flexible (term tables)" POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_DECOUPLED=0 -- "$auto"
    run_case "$shape M=$M auto" POLYC_CUDA_VERBOSE=0 -- "$auto"
    run_case "$shape M=$M --allocation=fixed" POLYC_CUDA_VERBOSE=0 -- "$fixed"
  done
done

if stage e2e; then
  echo "== flexible wavefront: every lanes-per-point variant, and windows that choose 16 and 32 lanes"
  # Each window in both forms: the decoupled step's shapes (1, 4 and 16 lanes, strips of 128, 96 and 32) and
  # the term tables'.
  for HWM in "97 131 12" "97 131 20" "20 40 31" "40 20 31" "5 300 9" "70 100 32" "70 100 33"; do
    # (20 x 40 and 40 x 20: images narrower or shorter than the window, but wider than a strip; the term
    # tables' windows must not be clipped to the image, since the point code reads them unguarded. M = 32
    # is the decoupled step's largest window, M = 33 the term tables' alone.)
    read -r H W M <<<"$HWM"
    make_case "$H" "$W" "$M" || { fail "inputs ${H}x$W M=$M"; continue; }
    run_case "${H}x$W M=$M flexible" POLYC_CUDA_WAVEFRONT=flexible -- "$auto"
    run_case "${H}x$W M=$M flexible (decoupled)" POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_DECOUPLED=1 -- "$auto"
    run_case "${H}x$W M=$M flexible (term tables)" POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_DECOUPLED=0 -- "$auto"
  done
  # need_case H W M: make_case, a failure counted (a check skipped silently would shrink the count).
  need_case() { make_case "$@" || { fail "inputs $1x$2 M=$3"; return 1; }; }
  # run_verbose ENV... -- PATTERN: the verbose launch lines of $case_dir's run contain PATTERN. (grep reads
  # them all: `grep -q` would stop at the match, and under pipefail the run's SIGPIPE on its next line would
  # fail the check: likely what failed "64x8192 M=17" once on the H200 in session 42, not seen since.)
  run_verbose() {
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    env "${envs[@]}" POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_VERBOSE=1 "$auto" --in x="$case_dir/x.npy" \
      --in a="$case_dir/a.npy" --in b="$case_dir/b.npy" --out y="$case_dir/y.npy" 2>&1 | grep -- "$2" >/dev/null
  }
  # More strips of 16 (512) than blocks can be resident (264 on an H100, two an SM): the term tables' wide
  # 8 x 32 shape (Device.h, WideTermTableShape), whose 256 strips the verbose launch line reports.
  need_case 64 8192 17 && run_case "64x8192 M=17 flexible (term tables, wide strips)" POLYC_CUDA_WAVEFRONT=flexible \
    POLYC_CUDA_DECOUPLED=0 -- "$auto"
  run_verbose POLYC_CUDA_DECOUPLED=0 -- "columns 256)" && pass || fail "64x8192 M=17: the wide strip shape was not chosen"
  # The default takes the decoupled step wherever it is built for (Device.h, decoupledStepBuiltFor):
  # windows 2 to 32, never beyond.
  run_verbose -- "decoupled step, window 17, 4 lanes x 96 columns" && pass || fail "64x8192 M=17: not the decoupled step"
  need_case 64 2048 2 && { run_verbose -- "decoupled step, window 2, 1 lanes x 128 columns" && pass ||
    fail "64x2048 M=2: not the decoupled step"; }
  need_case 64 2048 9 && { run_verbose -- "decoupled step, window 9, 4 lanes x 96 columns" && pass ||
    fail "64x2048 M=9: not the decoupled step"; }
  need_case 97 131 20 && { run_verbose -- "decoupled step, window 20, 16 lanes x 32 columns" && pass ||
    fail "97x131 M=20: not the decoupled step"; }
  need_case 70 100 33 && { run_verbose POLYC_CUDA_DECOUPLED=1 -- "decoupled step" && fail "70x100 M=33: the decoupled step" || pass; }
  need_case 300 257 5
  for lanes in 4 8 16 32; do
    for publish in 1 3; do
      run_case "300x257 M=5 flexible lanes $lanes publish $publish" POLYC_CUDA_WAVEFRONT=flexible \
        POLYC_CUDA_LANES=$lanes POLYC_CUDA_PUBLISH=$publish -- "$auto"
    done
  done
fi

# A moving error is a race: the flexible kernel several times on one large case against the reference.
if stage repeat; then
  echo "== flexible wavefront, repeated runs of large cases"
  for HWM in "2048 2048 31" "2048 2048 20" "2048 2048 17" "1031 2053 9"; do
    read -r H W M <<<"$HWM"
    make_case "$H" "$W" "$M" || { fail "inputs ${H}x$W M=$M"; continue; }
    for k in 1 2 3 4 5; do
      run_case "${H}x$W M=$M flexible (decoupled) run $k" POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_DECOUPLED=1 -- "$auto"
      run_case "${H}x$W M=$M flexible (term tables) run $k" POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_DECOUPLED=0 -- "$auto"
    done
  done
fi

if stage grids; then
echo "== flexible wavefront with forced grids"
make_case 300 257 5
resident=$(POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_VERBOSE=1 "$auto" --in x="$case_dir/x.npy" \
  --in a="$case_dir/a.npy" --in b="$case_dir/b.npy" --out y="$case_dir/y.npy" 2>&1 |
  sed -n 's/.*resident \([0-9]*\).*/\1/p' | head -1)
echo "resident blocks: ${resident:-unknown}"
grids="1 2 3 7 19"
if [[ -n $resident ]]; then
  grids="$grids $((resident / 2)) $resident $((2 * resident)) $((4 * resident))"
fi
for grid in $grids; do
  run_case "300x257 M=5 flexible (decoupled) grid $grid" POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_DECOUPLED=1 \
    POLYC_CUDA_GRID="$grid" -- "$auto"
  run_case "300x257 M=5 flexible (term tables) grid $grid" POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_DECOUPLED=0 \
    POLYC_CUDA_GRID="$grid" -- "$auto"
done
# The decoupled step's blocks take strips in turn: any grid, with fewer or more blocks than strips.
make_case 1031 2053 17
for grid in 1 3 31 1000; do
  run_case "1031x2053 M=17 flexible (decoupled) grid $grid" POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_DECOUPLED=1 \
    POLYC_CUDA_GRID="$grid" -- "$auto"
done
fi

# With a 200 ns wait budget a follower gives its column up whenever its neighbour pauses, and another
# block (or itself) takes it over at a later step: the staging of a column entered mid-way. The term
# tables only: the decoupled step has no take-overs.
if stage takeover; then
  echo "== flexible wavefront, columns taken over mid-way (200 ns wait budget)"
  for HWM in "2048 2048 17" "2048 2048 3" "1031 2053 9" "300 257 31" "97 131 20" "64 8192 17"; do
    read -r H W M <<<"$HWM"
    make_case "$H" "$W" "$M" || { fail "inputs ${H}x$W M=$M"; continue; }
    for grid in default 3 1000; do
      envs=(POLYC_CUDA_WAVEFRONT=flexible POLYC_CUDA_DECOUPLED=0)
      [[ $grid != default ]] && envs+=(POLYC_CUDA_GRID=$grid)
      run_case "${H}x$W M=$M takeover grid $grid" "${envs[@]}" -- "$takeover"
    done
  done
fi

if ! stage sanitizer; then
  :
elif command -v compute-sanitizer >/dev/null; then
  echo "== compute-sanitizer"
  for tool in memcheck racecheck synccheck; do
    if timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 "$check" --quick >"$work/san.log" 2>&1; then
      pass
    else
      fail "$tool on the runtime check: $(grep -m3 -E 'ERROR|hazard|FAIL' "$work/san.log")"
    fi
    for small in "33 47 3" "20 70 8" "40 90 17"; do
      read -r H W M <<<"$small"
      make_case "$H" "$W" "$M"
      for variant in fixed flexible tables; do
        for grid in "" 2; do
          envs=(POLYC_CUDA_WAVEFRONT=${variant/tables/flexible})
          [[ $variant == flexible ]] && envs+=(POLYC_CUDA_DECOUPLED=1)
          [[ $variant == tables ]] && envs+=(POLYC_CUDA_DECOUPLED=0)
          [[ -n $grid ]] && envs+=(POLYC_CUDA_GRID=$grid)
          [[ $variant == fixed && -n $grid ]] && continue
          if env "${envs[@]}" timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 "$auto" --in x="$case_dir/x.npy" \
            --in a="$case_dir/a.npy" --in b="$case_dir/b.npy" --out y="$case_dir/y.npy" >"$work/san.log" 2>&1 &&
            "$python" "$root/examples/iir2d/compare.py" "$case_dir/y.npy" "$case_dir/y_ref.npy" >/dev/null; then
            pass
          else
            fail "$tool ${H}x$W M=$M $variant ${grid:+grid $grid}: $(grep -m3 -E 'ERROR|hazard|error' "$work/san.log")"
          fi
        done
      done
    done
  done
else
  fail "compute-sanitizer not found"
fi

echo "gpu-check: $passed passed, $failed failed"
((failed == 0))
