#!/usr/bin/env bash
# Fuzzes the front end (lexer, parser, Sema, AST dump) with libFuzzer for SECONDS seconds:
# configures build-fuzz with clang-19 and sanitizers, seeds a corpus from examples/ and test/dsl/,
# runs, and prints the number of executions, the rate and the crashes found (saved in fuzz-out/frontend/).
set -euo pipefail
seconds=${1:-600}
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
corpus="$build/fuzz-corpus/frontend"
artifacts="$root/fuzz-out/frontend"
log="$build/fuzz-frontend.log"

sanitizers="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-19 CXX=clang++-19 cmake -S "$root" -B "$build" -G Ninja -DPOLYC_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$sanitizers" -DCMAKE_C_FLAGS="$sanitizers" >/dev/null
fi
ninja -C "$build" -j2 FrontendFuzzer
fuzzer=$(find "$build" -name FrontendFuzzer -type f -perm -u+x | head -1)

mkdir -p "$corpus" "$artifacts"
for f in "$root"/examples/*/*.poly "$root"/test/dsl/*.poly "$root"/test/dsl/Inputs/*.poly; do
  [ -f "$f" ] && cp "$f" "$corpus/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
done

# libFuzzer stops at the first crash; restart it (the corpus persists) until the time is used up.
before=$(find "$artifacts" -type f | wc -l)
: >"$log"
total=0 elapsed=0 runs=0
start=$(date +%s)
while [ "$elapsed" -lt "$seconds" ] && [ "$runs" -lt 20 ]; do
  runs=$((runs + 1))
  # -timeout: an input that takes seconds is a hang; -max_len: long enough for the examples.
  "$fuzzer" "$corpus" -dict="$root/test/fuzz/frontend.dict" -max_total_time=$((seconds - elapsed)) \
    -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    >"$log.run" 2>&1 || true
  cat "$log.run" >>"$log"
  n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log.run" | grep -o '[0-9]*$' | tail -1)
  total=$((total + ${n:-0}))
  elapsed=$(($(date +%s) - start))
done
after=$(find "$artifacts" -type f | wc -l)

rate=$((total / (elapsed > 0 ? elapsed : 1)))
echo "frontend fuzzer: ${elapsed}s in $runs run(s), $total executions, $rate exec/s, $((after - before)) new crash/hang artifacts"
grep -E '^==[0-9]+==ERROR|^SUMMARY|deadly signal|ALARM|runtime error' "$log" | sort | uniq -c | head -20 || true
ls -t "$artifacts" | head -"$((after - before))"
[ "$after" -eq "$before" ]
