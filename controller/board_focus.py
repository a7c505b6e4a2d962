"""Where the reader boards read first: the hand's place, published to them after a commit."""

from __future__ import annotations

from collections.abc import Sequence

from controller.focus import FocusTracker
from controller.hooks import Table
from kernel.messages import STATE, Message


class BoardFocus:
    """The reader boards read first where the hand is (controller/focus.py), from the last
    state the engine published (not an input: nothing is journaled)."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.tracker = FocusTracker()
        table.register_event_handler("table:ready", self.start)
        table.register_event_handler("table:committed", self.follow)

    def start(self) -> None:
        """The devices just opened: focus from the recovered state."""
        self.table.devices.focus(self.tracker.update(self.table.engine.snapshot()).antennas)

    def follow(self, out: Sequence[Message]) -> None:
        """After a commit: focus from the last state published in it, if any."""
        for message in reversed(out):
            if message.topic == STATE:
                self.table.devices.focus(self.tracker.update(message.payload).antennas)
                return
