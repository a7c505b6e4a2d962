"""Device backends by name: one table for the reader boards, the GPIO bank and the badge reader."""

from __future__ import annotations

import importlib
from typing import Any

from kernel.errors import ConfigError, DeviceError

#: Device kind -> backend name (as the table file says it) -> "module:attribute" of what makes
#: that backend. A module is imported only when its backend is chosen, so a hardware library
#: (RPi.GPIO, pyscard) or a simulator is never imported on a table that does not use it. To add
#: a backend: add its line here; `tablectl` validates the table file against these names.
BACKENDS: dict[str, dict[str, str]] = {
    "reader": {
        "sim": "controller.devices:simulated_board",
        "sim-field": "controller.devices:field_board",
        "serial": "controller.devices:serial_board",
    },
    "gpio": {
        "sim": "drivers.gpio.sim:SimBackend",
        "rpi": "drivers.gpio.rpi:RpiBackend",
    },
    "badge_reader": {
        "sim": "drivers.badge.sim:SimBadgeReader",
        "pcsc": "drivers.badge.pcsc:PcscBadgeReader",
    },
}

#: How error messages name each kind of device.
LABELS = {"reader": "reader board", "gpio": "GPIO", "badge_reader": "badge reader"}


def backend_names(device: str) -> tuple[str, ...]:
    """The backend names a kind of device accepts, in the table's order."""
    return tuple(BACKENDS[device])


def create_backend(device: str, name: str, /, **kw: Any) -> Any:
    """Make backend `name` of a kind of device ("reader", "gpio", "badge_reader"), passing `kw`.

    Raises ConfigError for a name the table does not know and DeviceError when the backend's
    module (or the library it needs) cannot be imported.
    """
    known = BACKENDS[device]
    target = known.get(name) if isinstance(name, str) else None
    if target is None:
        raise ConfigError(
            f"unknown {LABELS[device]} backend {name!r} (expected one of: {', '.join(known)})"
        )
    module_name, attribute = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise DeviceError(f"{LABELS[device]} backend {name!r} cannot be loaded: {exc}") from exc
    return getattr(module, attribute)(**kw)
