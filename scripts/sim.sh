#!/usr/bin/env bash
# One command for a whole simulated table: set-up, then `tablectl sim` on local defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Arguments go to `tablectl sim` (`tablectl sim --help` explains each). It shows a line per
# hand and the URLs; the pages stay up until Ctrl-C, which stops everything it started.
#   --hands N   deal N hands (default: a cash game until Ctrl-C); --json: raw messages.
# Both are safe at any value:
#   --speed N   pace of simulated time: 1 (real time), 10, 100, or max (as fast as the
#               machine goes); the same --seed deals the same game at every speed.
#   --tables N  N simulated tables (t01, t02, ...) on the one broker, each with its own
#               journal and seed; the room server (--room) stores them all. 1 to 500.
# Python's objects from glibc's heap, as the service runs (docs/operations.md, memory).
export PYTHONMALLOC="${PYTHONMALLOC:-malloc}"
exec .venv/bin/tablectl sim --room "$@"  # --no-room: the table alone
