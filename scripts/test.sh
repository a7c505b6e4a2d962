#!/usr/bin/env bash
# One command for the test suite: set-up, then lint, type-check and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/ruff check tablectl kernel controller drivers firmware firmware_sim sim tests bench broadcast room
.venv/bin/mypy
.venv/bin/mypy --config-file firmware/mypy.ini  # the firmware as MicroPython (RP2040 stubs)
exec .venv/bin/python -m pytest -q "$@"
