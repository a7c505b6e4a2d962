"""The table loop's reorder window: inputs applied in the order they were made.

The loop's own Ticks wait there too ([inputs] reorder_ms; 0: inputs go as they come)."""

from __future__ import annotations

import time

from controller.config import Config
from controller.engine import Engine
from controller.holeresend import HoleRequest
from controller.items import DeviceAlert, FromRoom, Item, RefusedCommand, ReleaseDue, made
from controller.ordering import ReorderWindow
from controller.resend import ResendRequest
from kernel.clock import Clock, SystemClock
from kernel.inputs import ButtonPress, Command, Device, TagIn, TagOut, Tick


class InputWindow:
    """The window (None when reorder_ms is 0), which source an item came from, and the
    loop's own Ticks while they wait in it (known by their ids)."""

    def __init__(self, config: Config, timer: Clock, engine: Engine) -> None:
        self.timer = timer
        self.engine = engine
        self.window: ReorderWindow[Item] | None = (
            ReorderWindow(
                config.inputs.window,
                time.monotonic if isinstance(timer, SystemClock) else timer.now,
            )
            if config.inputs.window > 0
            else None
        )
        self._tick_waiting: float | None = None  # the time of a Tick held in the window
        self._window_ticks: set[int] = set()  # ids of the loop's own Ticks, not applied yet
        self._sources = {
            **dict.fromkeys(config.card_reader.antennas, "card_reader"),
            **dict.fromkeys(config.chip_reader.antennas, "chip_reader"),
        }

    def __len__(self) -> int:
        """How many inputs the window holds (0 without a window)."""
        return len(self.window) if self.window is not None else 0

    def tick(self, t: float) -> Tick:
        """An engine timer fired: its Tick (the loop's own, known by its id while it waits
        in the reorder window)."""
        tick = Tick(t=t)
        if self.window is not None:
            self._window_ticks.add(id(tick))
        return tick

    def stale(self, item: Tick) -> bool:
        """A Tick of the loop's own that waited in the window, and an input made before it
        moved the engine's timer: nothing fires now."""
        if id(item) not in self._window_ticks:
            return False
        self._window_ticks.discard(id(item))
        deadline = self.engine.deadline()
        return deadline is None or deadline > item.t

    def deadline(self) -> float | None:
        """The engine's next timer, unless its Tick already waits in the reorder window."""
        deadline = self.engine.deadline()
        if deadline is not None and self._tick_waiting is not None:
            return None
        return deadline

    def release_at(self, now: float) -> float | None:
        """When (trace time) the window lets its next input go; None: none held."""
        window = self.window
        release = window.next_release() if window is not None else None
        if window is None or release is None:
            return None
        return now + (release - window.clock())

    def wait(self) -> float | None:
        """How long (real seconds) until the window lets its next input go; None: none."""
        window = self.window
        release = window.next_release() if window is not None else None
        if window is None or release is None:
            return None
        if isinstance(self.timer, SystemClock):
            return max(0.0, release - window.clock())
        return self.timer.real_wait(release - window.clock())

    def reorder(self, batch: list[Item], stop: bool, now: float) -> list[Item]:
        """Through the reorder window: inputs (and the engine's Ticks) wait there until
        the window after they were made has passed, then go in the order they were made;
        what is not an input (device alerts, refused commands, resend requests, hole-card
        keys due, TV's requests) goes at once. At a stop everything held goes (it was
        made: it is applied)."""
        window = self.window
        if window is None:
            return batch
        out: list[Item] = []
        for item in batch:
            source = self.source(item)
            if source is None:
                out.append(item)
                continue
            if isinstance(item, Tick) and id(item) in self._window_ticks:
                self._tick_waiting = item.t
            at = made(item)
            window.hold(item, source, at, now - at)
        released = window.drain() if stop else window.due()
        for item in released:
            if isinstance(item, Tick) and id(item) in self._window_ticks:
                self._tick_waiting = None
        return out + released

    def drain(self) -> list[Item]:
        """Everything held (made, never to be applied: the table stopped)."""
        return self.window.drain() if self.window is not None else []

    def source(self, item: Item) -> str | None:
        """Which source an input came from (its order is kept); None: not an input."""
        if isinstance(item, FromRoom):
            return "room" if isinstance(item.item, Command) else None
        if isinstance(item, TagIn | TagOut):
            return self._sources.get(item.antenna, "reader")
        if isinstance(item, ButtonPress):
            return "gpio"
        if isinstance(item, Device):
            return item.name
        if isinstance(item, Command):
            return "room"
        if isinstance(item, Tick):
            return "timer"
        if isinstance(item, DeviceAlert | RefusedCommand | ResendRequest | ReleaseDue):
            return None
        if isinstance(item, HoleRequest):
            return None
        return "badge"
