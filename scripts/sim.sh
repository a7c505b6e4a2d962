#!/usr/bin/env bash
# One command for a whole simulated table: set-up, then `tablectl sim` on local defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/tablectl sim --room "$@"  # --no-room: the table alone
