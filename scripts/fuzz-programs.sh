#!/usr/bin/env bash
# Differential testing on random programs (issue 28): generates N valid .poly programs from SEED on,
# builds each for every target in TARGETS (default "cpu opencl"; cuda runs only where a GPU is present,
# elsewhere it is only built; cpu-stream and cuda-stream build with --stream, where polyc streams the
# program), runs them on random inputs and compares every output with the oracle
# (`polyc run` where it exists, else the cpu target). PoCL's cache goes to a temporary folder. Mismatches
# are shrunk and saved under fuzz-out/programs/ (its README lists them with the command that reproduces
# each). Ends with "fuzz-programs: N programs, M mismatches" and exits 1 when M > 0.
# JOBS programs are built and run at once (default: the number of cores).
# More options (passed through): scripts/fuzz/fuzz.py --help; docs/testing.md.
#
#   scripts/fuzz-programs.sh 200            # 200 programs from seed 1
#   TARGETS="cpu opencl cuda" scripts/fuzz-programs.sh 50 1000
set -uo pipefail
count=${1:-20}
seed=${2:-1}
shift $(($# < 2 ? $# : 2))
root=$(cd "$(dirname "$0")/.." && pwd)
# The first python3 with numpy: the one on the PATH (the GPU machine's), else the system's (here, where
# python3 is a pyenv shim without it).
python=${PYTHON:-python3}
if ! "$python" -c 'import numpy' 2>/dev/null; then
  python=/usr/bin/python3
fi
"$python" "$root/scripts/fuzz/fuzz.py" --count "$count" --seed "$seed" \
  --targets "${TARGETS:-cpu opencl}" --jobs "${JOBS:-$(nproc)}" --out "$root/fuzz-out" "$@"
