#!/usr/bin/env bash
# Nightly benchmark regression of npu-mapper: the baseline revision (bench/baseline.json) against
# HEAD, both built from their own exports in build/nightly/<sha>/ and run interleaved, so that a
# slower machine cannot pass for a slower program. See docs/nightly.md; `--help` lists the options.
#
# Exit status:
#   0  answers identical and no benchmark significantly slower beyond the threshold
#   1  answers differ (a front, a front hash, a model result; whatever the speed)
#   3  speed regression only (answers identical)
#   2  broken run: usage, a build that failed, a crash, no verdict
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if ! command -v python3 >/dev/null 2>&1; then
  echo "nightly: python3 is needed (bash scripts/install-deps.sh installs it)" >&2
  exit 2
fi
# nightly.py writes the status it decided into this file just before it exits; a Python failure
# before that point (which exits 1 like "answers differ" would) thus still reads as a broken run.
status_file="$(mktemp "${TMPDIR:-/tmp}/npumap-nightly-status.XXXXXX")"
trap 'rm -f "$status_file"' EXIT
NPUMAP_NIGHTLY_STATUS_FILE="$status_file" python3 "$ROOT/bench/nightly.py" "$@"
rc=$?
decided="$(cat "$status_file" 2>/dev/null)"
if [[ "$decided" =~ ^[0-3]$ && "$decided" == "$rc" ]]; then
  exit "$rc"
fi
if [[ $rc -eq 0 && -z "$decided" ]]; then
  exit 0  # --help
fi
echo "nightly: python3 exited with status $rc without a verdict: exit status 2 (broken run)" >&2
exit 2
