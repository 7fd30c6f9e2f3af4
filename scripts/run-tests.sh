#!/usr/bin/env bash
# Runs every test (GoogleTest unit tests, lit tests per stage, end-to-end runs) through lit,
# and ends with one line: "N passed, N failed".
set -uo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
python=/usr/bin/python3
lit=/usr/lib/llvm-19/build/utils/lit/lit.py
results="$build/test-results.json"

"$python" "$lit" -sv --time-tests -o "$results" "$build/test" ${LIT_FILTER:+--filter "$LIT_FILTER"}
status=$?

"$python" - "$results" <<'PY'
import json, sys
try:
    tests = json.load(open(sys.argv[1]))["tests"]
except (OSError, ValueError, KeyError):
    print("0 passed, 1 failed (no test results: the test run itself failed)")
    sys.exit(0)
ok = {"PASS", "XFAIL"}
skipped = {"UNSUPPORTED", "SKIPPED", "EXCLUDED"}
passed = sum(t["code"] in ok for t in tests)
failed = sum(t["code"] not in ok | skipped for t in tests)
unsupported = sum(t["code"] in skipped for t in tests)
extra = f" ({unsupported} unsupported)" if unsupported else ""
print(f"{passed} passed, {failed} failed{extra}")
PY
exit $status
