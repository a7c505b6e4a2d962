#!/usr/bin/env bash
# One command for the test suite: set-up, then lint, type-check and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check controller drivers firmware_sim tests bench broadcast room
.venv/bin/mypy
exec .venv/bin/python -m pytest -q "$@"
