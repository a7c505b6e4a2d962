"""GPIO drivers: a pin-backend interface, its backends (sim, rpi), table buttons and lamps."""

from __future__ import annotations

from drivers.gpio.base import Edge, EdgeCallback, PinBackend
from drivers.gpio.buttons import LAMP_NAMES, Lamps, PinPlan, TableButtons

__all__ = [
    "LAMP_NAMES",
    "Edge",
    "EdgeCallback",
    "Lamps",
    "PinBackend",
    "PinPlan",
    "TableButtons",
]
