"""Board entry point: copied to the Pico as /main.py (docs/hardware.md, flashing)."""

from firmware.hal_rp2 import start

start()
