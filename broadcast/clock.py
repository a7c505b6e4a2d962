"""The TV service's clock, injected: the one clock abstraction of `controller/clock.py`."""

from __future__ import annotations

from controller.clock import Clock, ManualClock, SystemClock

__all__ = ["Clock", "ManualClock", "SystemClock"]
