#!/usr/bin/env bash
# A fuzzer target (scripts/fuzz/fuzz.py --targets 'mpi=scripts/fuzz/build-mpi.sh'): builds FILE.poly with
# `polyc build --mpi --target=MPI_TARGET` (default cpu; opencl and cuda too) and makes EXE a wrapper that
# runs it on MPI_RANKS ranks (default 3) under mpirun.
#   scripts/fuzz/build-mpi.sh FILE.poly -o EXE
set -euo pipefail
poly=$1
exe=$3
polyc=${POLYC:-$(cd "$(dirname "$0")/../.." && pwd)/build/compiler/driver/polyc}
"$polyc" build --mpi --target="${MPI_TARGET:-cpu}" "$poly" -o "$exe.ranks"
cat > "$exe" <<WRAPPER
#!/bin/sh
exec mpirun --oversubscribe --allow-run-as-root -np ${MPI_RANKS:-3} "$exe.ranks" "\$@"
WRAPPER
chmod +x "$exe"
