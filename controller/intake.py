"""The drivers' side of the table loop: their inputs and alerts, dated and queued."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from controller.hooks import Effect, Table
from controller.items import DeviceAlert, Inbox
from controller.resync import Resync
from kernel.clock import Clock, SystemClock
from kernel.inputs import ButtonPress, Device, Event, TagIn, TagOut, Timed
from kernel.messages import Message


class Intake:
    """Where the devices' inputs go (controller/devices.py, InputSink; thread-safe): the
    loop's queue, through the readers' catch-up after a restart (controller/resync.py)."""

    def __init__(
        self, queue: Inbox, resync: Resync, timer: Clock, now: Callable[[], float]
    ) -> None:
        self.queue = queue
        self.resync = resync
        self.timer = timer
        self.now = now

    def made_at(self, monotonic: float) -> float:
        """Trace time of a moment of the machine's monotonic clock (a GPIO edge stamped at
        the interrupt). On a simulated or test clock, trace time now: time stands still
        while an input is in flight there (docs/architecture.md, "Time")."""
        if not isinstance(self.timer, SystemClock):
            return self.now()
        return max(0.0, round(self.now() - max(0.0, time.monotonic() - monotonic), 6))

    def real_time(self) -> bool:
        """Whether trace time is the machine's clock (the boards' reports are then dated by
        the boards' clocks; on a simulated clock when they are decoded)."""
        return isinstance(self.timer, SystemClock)

    def submit(self, event: Event) -> None:
        """Queue an input event. A button press waits behind reader moves held back by a
        catch-up (controller/resync.py)."""
        if isinstance(event, ButtonPress):
            self.resync.admit_press(event)
        else:
            self.queue.put(event)

    def submit_device(self, name: str, state: str) -> None:
        """A reader's availability changed: queued as a `Device` input.

        The loop journals it only when it differs from the journaled state, so a restart
        that finds the boards in place adds nothing, and one that finds a board gone (or
        back) records exactly that change.
        """
        self.resync.device(name, Device(t=self.now(), name=name, state=state))

    def submit_reader_event(self, name: str, event: TagIn | TagOut) -> None:
        """A reader's tag event, dated and merged as the resync says."""
        self.resync.admit(name, event)

    def submit_catch_up(self, name: str, batch: list[Timed]) -> None:
        """What a reader re-read, each move with its board's time: merged with the other
        board's by that time once both caught up (controller/resync.py)."""
        self.resync.catch_up(name, batch)

    def submit_alert(self, kind: str, message: str, details: dict[str, Any]) -> None:
        """Queue a device alert."""
        severity = "critical" if kind.endswith(("disconnected", "silent")) else "warning"
        self.queue.put(DeviceAlert(kind, message, dict(details), severity))


def install_device_alerts(table: Table) -> None:
    """A driver's alert: published (journaled first), and the devices note it once the
    batch is committed (the panel's fault lamp)."""

    def take(item: DeviceAlert, effects: list[Effect]) -> list[Message]:
        message = table.notices.alert(item.kind, item.message, item.details, item.severity)
        effects.append(functools.partial(table.devices.note_alert, item.kind, item.details))
        return table.record("daemon", [message])

    table.register_event_handler("take:DeviceAlert", take)
