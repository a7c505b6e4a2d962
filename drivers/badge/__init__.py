"""Staff badge reader drivers: a small reader interface and its backends (sim, pcsc)."""

from __future__ import annotations

from drivers.badge.base import (
    OFFLINE,
    ONLINE,
    AlertCallback,
    BadgeCallback,
    BadgeReader,
    DeviceCallback,
)

__all__ = [
    "OFFLINE",
    "ONLINE",
    "AlertCallback",
    "BadgeCallback",
    "BadgeReader",
    "DeviceCallback",
]
