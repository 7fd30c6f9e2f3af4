#!/usr/bin/env bash
# Fuzzes the runtime's .npy reader with libFuzzer (test/fuzz/NpyFuzzer.cpp) for SECONDS (default 300).
# Builds in build-fuzz-npy with clang-19 and -DPOLYC_FUZZ=ON, seeds the corpus with valid .npy files of
# every format version, dtype, byte order and memory order, and leaves crash inputs in fuzz-out/npy/.
set -euo pipefail
seconds=${1:-300}
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz-npy"
python=/usr/bin/python3

if [ ! -f "$build/build.ninja" ]; then
  CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DPOLYC_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C "$build" -j2 NpyFuzzer

seeds="$build/npy-seeds"
corpus="$build/npy-corpus"
artifacts="$root/fuzz-out/npy"
mkdir -p "$seeds" "$corpus" "$artifacts"
"$python" - "$seeds" <<'PY'
import os, sys
import numpy as np
folder = sys.argv[1]
rng = np.random.default_rng(0)
shapes = [(), (0,), (3,), (2, 3), (3, 0, 2), (2, 2, 2)]
for version in [(1, 0), (2, 0), (3, 0)]:
    for dtype in ["<f4", ">f4", "<f8", ">f8", "<i4", ">i4"]:
        for shape in shapes:
            for fortran in (False, True):
                a = rng.integers(-9, 9, size=shape).astype(dtype)
                if fortran:
                    a = np.asfortranarray(a)
                name = f"v{version[0]}_{dtype[0] == '>' and 'be' or 'le'}{dtype[1:]}_{'x'.join(map(str, shape)) or 'scalar'}_{'F' if fortran else 'C'}.npy"
                with open(os.path.join(folder, name), "wb") as f:
                    np.lib.format.write_array(f, a, version=version)
PY

# libFuzzer exits non-zero when it finds a crash; report and keep the status.
status=0
"$build/test/fuzz/NpyFuzzer" -max_total_time="$seconds" -print_final_stats=1 \
  -dict="$root/test/fuzz/NpyFuzzer.dict" -artifact_prefix="$artifacts/" -max_len=4096 \
  "$corpus" "$seeds" || status=$?
echo "fuzz-npy: corpus $(ls "$corpus" | wc -l) files; crash inputs (if any) in $artifacts"
exit $status
