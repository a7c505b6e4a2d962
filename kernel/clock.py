"""One clock for the table, its TV service and the simulators: the machine's, or a virtual one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    """Where time comes from: monotonic seconds, wall seconds, and how long to block.

    Game time (a journal's `t`, the engine's settle windows and timers, the simulated
    dealer's pace) is read from one injected `Clock`. The machine's clock
    (`SystemClock`) serves a real table; `ManualClock` is a virtual clock that moves only
    when told: `tablectl sim` steps it, so a seed gives the same events at any speed.
    """

    def now(self) -> float:
        """Monotonic seconds (never go back)."""
        ...

    def wall(self) -> float:
        """Unix seconds (a journal's epoch)."""
        ...

    def real_wait(self, seconds: float) -> float | None:
        """How long to block, in real seconds, for `seconds` of this clock to pass; None:
        until woken by a jump of the clock (`on_jump`)."""
        ...

    def on_jump(self, wake: Callable[[], None]) -> None:
        """Call `wake` after every jump of the clock (a virtual clock's step)."""
        ...


class SystemClock:
    """The machine's clock: `time.monotonic`, `time.time`; real waits."""

    def now(self) -> float:
        """`time.monotonic()`."""
        return time.monotonic()

    def wall(self) -> float:
        """`time.time()`."""
        return time.time()

    def real_wait(self, seconds: float) -> float | None:
        """`seconds`: this clock is real time."""
        return max(0.0, seconds)

    def on_jump(self, wake: Callable[[], None]) -> None:
        """Never jumps: nothing to call."""


class FunctionClock(SystemClock):
    """Wall time from a function (tests pin a journal's epoch with `lambda: EPOCH`)."""

    def __init__(self, wall: Callable[[], float]) -> None:
        self._wall = wall

    def wall(self) -> float:
        """The function's value."""
        return self._wall()


class ManualClock:
    """A virtual clock that moves only when told (the sim's conductor, tests).

    `now()` starts at `start`; `wall()` is `wall_start` plus the time moved since. Every
    step calls the `on_jump` callbacks, so a loop blocked for the clock wakes and looks at
    the time again: nothing waits on the machine's clock for a virtual second.
    """

    def __init__(self, start: float = 1000.0, *, wall_start: float | None = None) -> None:
        self._start = start
        self._now = start
        self._wall_start = start if wall_start is None else wall_start
        self._lock = threading.Lock()
        self._wakes: list[Callable[[], None]] = []

    def now(self) -> float:
        """The time set so far."""
        with self._lock:
            return self._now

    def wall(self) -> float:
        """`wall_start` plus the time moved so far."""
        with self._lock:
            return self._wall_start + (self._now - self._start)

    def real_wait(self, seconds: float) -> float | None:
        """0 when the time has come, else None: only a step of the clock brings it."""
        return 0.0 if seconds <= 0 else None

    def on_jump(self, wake: Callable[[], None]) -> None:
        """Call `wake` after every step from now on."""
        with self._lock:
            self._wakes.append(wake)

    def advance(self, seconds: float) -> float:
        """Move forward by `seconds` (never backwards); return the new time."""
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        with self._lock:
            self._now += seconds
            now, wakes = self._now, list(self._wakes)
        for wake in wakes:
            wake()
        return now

    def advance_to(self, moment: float) -> float:
        """Move forward to `moment` (no move when it is already past); return the time."""
        with self._lock:
            step = max(0.0, moment - self._now)
        return self.advance(step) if step > 0 else self.now()
