"""Staff badge reader drivers: a small reader interface, backends by name (sim, pcsc)."""

from __future__ import annotations

from drivers.badge.base import (
    BACKEND_NAMES,
    OFFLINE,
    ONLINE,
    AlertCallback,
    BadgeCallback,
    BadgeReader,
    DeviceCallback,
    get_backend,
)

__all__ = [
    "BACKEND_NAMES",
    "OFFLINE",
    "ONLINE",
    "AlertCallback",
    "BadgeCallback",
    "BadgeReader",
    "DeviceCallback",
    "get_backend",
]
