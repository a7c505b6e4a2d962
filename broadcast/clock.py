"""The TV service's clock, injected: the one clock abstraction of `kernel/clock.py`."""

from __future__ import annotations

from kernel.clock import Clock, ManualClock, SystemClock

__all__ = ["Clock", "ManualClock", "SystemClock"]
