#!/usr/bin/env bash
# Installs what tablectl needs on Debian 12 / Raspberry Pi OS: apt packages when missing,
# a virtualenv in .venv and the project with its test extras. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(mosquitto mosquitto-clients openssl pcscd vsmartcard-vpcd libpcsclite-dev
              swig python3-venv python3-dev gcc
              systemd  # systemd-analyze: tests/unit/test_systemd.py checks the unit offline
              chromium  # the TV pages' browser tests (playwright drives it, nothing downloaded)
              postgresql  # the room server's tests start their own PostgreSQL (initdb, pg_ctl)
              strace    # tests/system/test_power_loss.py traces the daemon's system calls
              nftables  # the broker kit's connection front, loaded in a test's own network namespace
              iproute2) # (tests/loris_rig.py: ip, with util-linux's unshare and prlimit)
# Node and npm run MicroPython's WebAssembly port (the firmware tests); a machine whose node
# comes from elsewhere (with its own npm) keeps it.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    APT_PACKAGES+=(nodejs npm)
fi
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$pkg")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
# playwright (test extra) drives Debian's chromium: no browser is ever downloaded
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
stamp=.venv/.tablectl-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e '.[test]'
    touch "$stamp"
fi

# The firmware's MicroPython checks: the RP2040 stubs (kept out of the venv's site-packages,
# whose `time`/`select` stubs would shadow CPython's) and the WebAssembly interpreter.
MPY_STUBS=(micropython-rp2-rpi-pico-stubs==1.29.*)
if [ ! -f .venv/mpy-stubs/.installed ] || [ scripts/setup.sh -nt .venv/mpy-stubs/.installed ]; then
    rm -rf .venv/mpy-stubs
    .venv/bin/python -m pip install -q --target .venv/mpy-stubs "${MPY_STUBS[@]}"
    touch .venv/mpy-stubs/.installed
fi
if [ ! -d firmware_sim/wasm/node_modules ] \
        || [ firmware_sim/wasm/package-lock.json -nt firmware_sim/wasm/node_modules ]; then
    (cd firmware_sim/wasm && npm ci --no-audit --no-fund --loglevel=error)
    touch firmware_sim/wasm/node_modules
fi

# The table's signing key (docs/security.md, "The table's keys"): with TABLE_KEY=<file> the
# Ed25519 key pair is made there once (<file> private, 0600; <file>.pub for the room server),
# e.g. sudo TABLE_KEY=/etc/tablectl/t01.key bash scripts/setup.sh on the table's Pi. An
# existing key is never replaced.
if [ -n "${TABLE_KEY:-}" ] && [ ! -e "$TABLE_KEY" ]; then
    .venv/bin/tablectl keygen --out "$TABLE_KEY"
fi
