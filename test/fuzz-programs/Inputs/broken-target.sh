#!/usr/bin/env bash
# A deliberately wrong "target" for shrink.test: the cpu target, except that every call of tanh is
# compiled as abs. Called as the fuzzer calls a target script: broken-target.sh FILE.poly -o EXE
# (POLYC names the polyc binary).
set -euo pipefail
src=$1
exe=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/tanh(/abs(/g' "$src" >"$tmp/$(basename "$src")"
"${POLYC:?}" build "$tmp/$(basename "$src")" --target=cpu -o "$exe"
