"""GPIO drivers: a pin-backend interface, backends by name (sim, rpi), table buttons and lamps."""

from __future__ import annotations

from drivers.gpio.base import BACKEND_NAMES, Edge, EdgeCallback, PinBackend, get_backend
from drivers.gpio.buttons import LAMP_NAMES, Lamps, PinPlan, TableButtons

__all__ = [
    "BACKEND_NAMES",
    "LAMP_NAMES",
    "Edge",
    "EdgeCallback",
    "Lamps",
    "PinBackend",
    "PinPlan",
    "TableButtons",
    "get_backend",
]
