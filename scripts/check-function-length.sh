#!/bin/sh
# Fails when a function in the given source folders is longer than the limit (ctest `function_length`).
#   scripts/check-function-length.sh [--limit N] [--allow FILE] [--list] ROOT FOLDER...
# Every *.cpp and *.hpp under ROOT/FOLDER (recursively) is read by scripts/function-length.awk, which
# lists each function defined at namespace or class scope with its length in lines (declaration to
# closing brace). A function longer than the limit (150 by default) fails the check unless the allow
# list names it: lines "path name length" (path relative to ROOT, name as the listing prints it), for
# known offenders that another change is splitting; such a function may not grow past its listed
# length, and an entry that no longer matches a function over the limit fails the check too (remove
# it). --list prints every function with its length and checks nothing.
# POSIX sh and awk: runs on a fresh Debian 12 (dash, mawk).
set -eu
limit=150
allow=""
list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --limit) limit="$2"; shift 2 ;;
    --allow) allow="$2"; shift 2 ;;
    --list) list=1; shift ;;
    --) shift; break ;;
    -*) echo "check-function-length: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 2 ]; then
  echo "usage: check-function-length.sh [--limit N] [--allow FILE] [--list] ROOT FOLDER..." >&2
  exit 2
fi
root="$1"
shift
here=$(cd "$(dirname "$0")" && pwd)
cd "$root"
for folder in "$@"; do
  if [ ! -d "$folder" ]; then
    echo "check-function-length: no folder $root/$folder" >&2
    exit 2
  fi
done
files=$(find "$@" -type f \( -name '*.cpp' -o -name '*.hpp' \) | LC_ALL=C sort)
if [ -z "$files" ]; then
  echo "check-function-length: no sources under $*" >&2
  exit 2
fi
# shellcheck disable=SC2086
listing=$(awk -f "$here/function-length.awk" $files)
if [ "$list" -eq 1 ]; then
  printf '%s\n' "$listing"
  exit 0
fi
if [ -n "$allow" ] && [ ! -f "$allow" ]; then
  echo "check-function-length: no allow list $allow" >&2
  exit 2
fi
printf '%s\n' "$listing" | awk -v limit="$limit" -v allow="$allow" '
  BEGIN {
    if (allow != "") {
      while ((getline line < allow) > 0) {
        sub(/#.*/, "", line)
        if (split(line, f, /[ \t]+/) < 3) {
          if (line ~ /[^ \t]/) { printf "%s: malformed line (want: path name length): %s\n", allow, line; bad = 1 }
          continue
        }
        if (f[1] == "") { f[1] = f[2]; f[2] = f[3]; f[3] = f[4] }
        key = f[1] " " f[2]
        allowed[key] = f[3] + 0
        used[key] = 0
      }
    }
  }
  NF >= 5 && $4 > limit {
    key = $1 " " $5
    if (key in allowed) {
      used[key] = 1
      if ($4 > allowed[key]) {
        printf "%s:%d: function %s is %d lines, more than its allow-list length %d (limit %d)\n", $1, $2, $5, $4, allowed[key], limit
        bad = 1
      }
      next
    }
    printf "%s:%d: function %s is %d lines (limit %d): split it\n", $1, $2, $5, $4, limit
    bad = 1
  }
  END {
    for (key in allowed)
      if (!used[key]) {
        printf "%s: allow-list entry \"%s\" matches no function over %d lines any more: remove it\n", allow, key, limit
        bad = 1
      }
    if (bad) exit 1
    printf "function length: ok (limit %d lines)\n", limit
  }'
