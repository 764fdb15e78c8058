#!/bin/sh
# Fails when a function of the given folders (default: mapper/search and its join package) is longer
# than 150 lines, lambdas included in their function (clang-tidy readability-function-size). Needs a
# configured build for its compile database: build/release (cmake --preset release).
#   scripts/check_function_size.sh [folder...]
set -eu
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- mapper/search mapper/search/join
files=""
for d in "$@"; do files="$files $(ls "$d"/*.cpp)"; done
# shellcheck disable=SC2086
out=$(clang-tidy -p build/release --quiet --checks='-*,readability-function-size' \
  --config='{CheckOptions: [{key: readability-function-size.LineThreshold, value: 150}]}' $files 2>/dev/null || true)
if echo "$out" | grep -q "exceeds recommended size"; then
  echo "$out" | grep -A1 "exceeds recommended size"
  exit 1
fi
echo "function size: every function of $* is at most 150 lines"
