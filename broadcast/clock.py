"""The TV service's clock, injected: the wall clock in service, a hand-driven one in tests."""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Clock(Protocol):
    """Seconds on one monotonic scale: when an input arrived, when it may go on air."""

    def now(self) -> float:
        """The current time in seconds."""
        ...


class SystemClock:
    """The machine's monotonic clock."""

    def now(self) -> float:
        """`time.monotonic()`."""
        return time.monotonic()


class ManualClock:
    """A clock that moves only when told (tests of the secure delay)."""

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def now(self) -> float:
        """The time set so far."""
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> float:
        """Move forward by `seconds` (never backwards); return the new time."""
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        with self._lock:
            self._now += seconds
            return self._now
