#!/bin/sh
# Self-test of scripts/check-function-length.sh (ctest `function_length_selftest`):
#  1. the listing of sample.cpp equals expected.txt (functions and lengths counted by hand);
#  2. on a temporary tree: a 150-line function passes, a 151-line one fails, an allow-listed one
#     passes until it grows past its listed length, and a stale allow-list entry fails.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
check="$here/../../scripts/check-function-length.sh"
status=0
listing=$(cd "$here" && awk -f ../../scripts/function-length.awk sample.cpp)
if [ "$listing" != "$(cat "$here/expected.txt")" ]; then
  echo "FAIL: the listing of sample.cpp differs from expected.txt:"
  printf '%s\n' "$listing" | diff "$here/expected.txt" - || true
  status=1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/sub"
# A function of n lines: signature, n - 2 body lines, closing brace.
function_of() {
  echo "int $1() {"
  i=2
  while [ "$i" -lt "$2" ]; do
    echo "  int x$i = $i;  // {"
    i=$((i + 1))
  done
  echo "}"
}
expect() {  # expect <0|1> <description> <command...>
  want="$1"
  what="$2"
  shift 2
  if "$@" >"$tmp/out" 2>&1; then got=0; else got=1; fi
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"
    cat "$tmp/out"
    status=1
  fi
}
function_of fits 150 >"$tmp/src/sub/a.cpp"
expect 0 "a 150-line function" sh "$check" "$tmp" src
function_of too_long 151 >"$tmp/src/sub/b.hpp"
expect 1 "a 151-line function" sh "$check" "$tmp" src
grep -q "src/sub/b.hpp:1: function too_long is 151 lines" "$tmp/out" || { echo "FAIL: message"; cat "$tmp/out"; status=1; }
printf '# known offender\nsrc/sub/b.hpp too_long 151\n' >"$tmp/allow.txt"
expect 0 "an allow-listed function" sh "$check" --allow "$tmp/allow.txt" "$tmp" src
function_of too_long 152 >"$tmp/src/sub/b.hpp"
expect 1 "an allow-listed function that grew" sh "$check" --allow "$tmp/allow.txt" "$tmp" src
function_of too_long 20 >"$tmp/src/sub/b.hpp"
expect 1 "a stale allow-list entry" sh "$check" --allow "$tmp/allow.txt" "$tmp" src
grep -q "matches no function over 150 lines any more" "$tmp/out" || { echo "FAIL: stale message"; cat "$tmp/out"; status=1; }
expect 0 "the same tree without the allow list" sh "$check" "$tmp" src
expect 1 "a lower limit" sh "$check" --limit 10 "$tmp" src
if [ "$status" -eq 0 ]; then echo "function-length self-test: ok"; fi
exit "$status"
