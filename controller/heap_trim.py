"""The C heap kept flat over a day of play: settled at start, trimmed between hands."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from controller import heap
from controller.hooks import Table
from kernel.messages import Message

log = logging.getLogger("tablectl.daemon")


class HeapTrim:
    """Once a hand is over, the heap's free pages go back to the system (controller/heap.py):
    what a hand allocated and freed must not stay resident over a day of play."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.trims = 0  # hands after which the heap's free pages went back
        self._trimmed_after = -1  # the hand number of the last of them
        table.register_event_handler("table:starting", self.settle)
        table.register_event_handler("table:committed", self.after_hand)

    def settle(self) -> None:
        """A day of play must not grow the C heap in steps."""
        heap.settle()
        if heap.available():
            allocator = heap.python_allocator()
            log.info("Python objects from %s", allocator)
            if allocator != "malloc":
                log.info("PYTHONMALLOC=malloc (the service sets it) lets the trim return them")

    def after_hand(self, out: Sequence[Message]) -> None:
        """Trim once per finished hand."""
        engine = self.table.engine
        number = engine.hand_number
        if engine.hand is not None or number == self._trimmed_after:
            return
        self._trimmed_after = number
        if heap.available():
            heap.trim()
            self.trims += 1
