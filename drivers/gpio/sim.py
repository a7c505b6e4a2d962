"""Simulated GPIO backend: a thread-safe pin bank with levels, pulls, edges, bounce and history."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from controller.errors import DeviceError
from drivers.gpio.base import Edge, EdgeCallback, PinBackend, check_edge, check_pin

BCM_HEADER_PINS = range(28)
"""GPIO0..GPIO27: the pins of a Raspberry Pi 40-pin header."""


class ManualClock:
    """A clock that only moves when told to: deterministic time for tests and scripts."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds` (never backwards)."""
        if seconds < 0:
            raise ValueError(f"a clock cannot go backwards ({seconds} s)")
        with self._lock:
            self._now += seconds


@dataclass(slots=True)
class _Pin:
    mode: str  # "in" or "out"
    level: bool
    pull_up: bool = True
    history: list[tuple[float, bool]] = field(default_factory=list)
    edge: Edge | None = None
    callback: EdgeCallback | None = None
    bounce_s: float = 0.0
    last_reported: float | None = None


class SimBackend(PinBackend):
    """A simulated pin bank: not a mock, it keeps levels and behaves like the real header.

    Inputs idle at their pull (high with a pull-up). `press`/`release`/`set_input` drive an
    input as the outside world would and fire its edge callback, honouring `bounce_ms`
    against `clock`. Every pin keeps a history of (time, level) changes. Misuse raises
    DeviceError, as the hardware library would. Callbacks run in the caller's thread,
    outside the backend's lock, so they may call back into the backend.
    """

    name = "sim"

    def __init__(
        self,
        clock: Callable[[], float] | None = None,
        pins: Iterable[int] = BCM_HEADER_PINS,
    ) -> None:
        self._clock: Callable[[], float] = clock if clock is not None else time.monotonic
        if isinstance(self._clock, ManualClock):
            self._wait: Callable[[float], None] = self._clock.advance
        else:
            self._wait = time.sleep
        self._valid = frozenset(pins)
        self._pins: dict[int, _Pin] = {}
        self._lock = threading.RLock()
        self._closed = False

    # -- PinBackend ---------------------------------------------------------------------

    def setup_input(self, pin: int, pull_up: bool = True) -> None:
        with self._lock:
            self._check_open()
            self._check_valid(pin)
            state = self._pins.get(pin)
            if state is not None and state.mode != "in":
                raise DeviceError(f"GPIO{pin} is already an output; cannot make it an input")
            if state is None:
                state = _Pin(mode="in", level=pull_up, pull_up=pull_up)
                state.history.append((self._clock(), pull_up))
                self._pins[pin] = state
            state.pull_up = pull_up

    def setup_output(self, pin: int, initial: bool = False) -> None:
        with self._lock:
            self._check_open()
            self._check_valid(pin)
            state = self._pins.get(pin)
            if state is not None and state.mode != "out":
                raise DeviceError(f"GPIO{pin} is already an input; cannot make it an output")
            if state is None:
                state = _Pin(mode="out", level=bool(initial))
                state.history.append((self._clock(), bool(initial)))
                self._pins[pin] = state
            else:
                self._change(state, bool(initial))

    def read(self, pin: int) -> bool:
        with self._lock:
            return self._get(pin).level

    def write(self, pin: int, value: bool) -> None:
        with self._lock:
            state = self._get(pin)
            if state.mode != "out":
                raise DeviceError(f"GPIO{pin} is an input; it cannot be written")
            self._change(state, bool(value))

    def add_edge_callback(
        self, pin: int, edge: Edge, callback: EdgeCallback, bounce_ms: int = 0
    ) -> None:
        check_edge(edge)
        if bounce_ms < 0:
            raise DeviceError(f"bounce_ms must not be negative, got {bounce_ms}")
        with self._lock:
            state = self._get(pin)
            if state.mode != "in":
                raise DeviceError(f"GPIO{pin} is an output; edges are detected on inputs only")
            if state.callback is not None:
                raise DeviceError(f"GPIO{pin} already has edge detection")
            state.edge = edge
            state.callback = callback
            state.bounce_s = bounce_ms / 1000.0

    def close(self) -> None:
        with self._lock:
            self._pins.clear()
            self._closed = True

    # -- the outside world --------------------------------------------------------------

    def set_input(self, pin: int, level: bool) -> None:
        """Drive input `pin` to `level` from outside; fire its callback on a matching edge."""
        fire: EdgeCallback | None = None
        with self._lock:
            state = self._get(pin)
            if state.mode != "in":
                raise DeviceError(f"GPIO{pin} is an output; only inputs can be driven")
            level = bool(level)
            if level == state.level:
                return
            now = self._change(state, level)
            wanted = state.edge == "both" or state.edge == ("rising" if level else "falling")
            if state.callback is not None and wanted:
                last = state.last_reported
                if last is None or now - last >= state.bounce_s:
                    state.last_reported = now
                    fire = state.callback
        if fire is not None:
            fire(pin)

    def press(self, pin: int) -> None:
        """Close an active-low button's contact: the input goes low."""
        self.set_input(pin, False)

    def release(self, pin: int) -> None:
        """Open an active-low button's contact: the input returns high."""
        self.set_input(pin, True)

    def bounce(
        self, pin: int, n: int = 3, *, settle: bool | None = None, spacing_ms: float = 1.0
    ) -> None:
        """Drive `pin` to `settle` (default: the other level) the way a real contact does.

        The contact makes and breaks `n` times, `spacing_ms` apart, before it stays at
        `settle`: 2n+1 edges for a change of level, 2n for a glitch back to the same level.
        Time passes between edges: a ManualClock is advanced, a real clock is slept on.
        """
        if n < 0:
            raise ValueError(f"bounce count must not be negative, got {n}")
        current = self.read(pin)
        target = (not current) if settle is None else bool(settle)
        if target != current:
            levels = [target, not target] * n + [target]
        else:
            levels = [not target, target] * n
        for index, level in enumerate(levels):
            if index:
                self._wait(spacing_ms / 1000.0)
            self.set_input(pin, level)

    def level(self, pin: int) -> bool:
        """The present level of a configured pin (same as `read`)."""
        return self.read(pin)

    def history(self, pin: int) -> list[tuple[float, bool]]:
        """Every (time, level) the pin took, starting with its level at setup."""
        with self._lock:
            return list(self._get(pin).history)

    def configured(self) -> dict[int, str]:
        """Configured pins and their mode ("in" or "out")."""
        with self._lock:
            return {pin: state.mode for pin, state in sorted(self._pins.items())}

    # -- internals ----------------------------------------------------------------------

    def _change(self, state: _Pin, level: bool) -> float:
        now = self._clock()
        if level != state.level:
            state.level = level
            state.history.append((now, level))
        return now

    def _check_open(self) -> None:
        if self._closed:
            raise DeviceError("the simulated GPIO backend is closed")

    def _check_valid(self, pin: int) -> None:
        check_pin(pin)
        if pin not in self._valid:
            raise DeviceError(f"GPIO{pin} does not exist on this pin bank")

    def _get(self, pin: int) -> _Pin:
        self._check_open()
        check_pin(pin)
        state = self._pins.get(pin)
        if state is None:
            raise DeviceError(f"GPIO{pin} is not configured")
        return state
