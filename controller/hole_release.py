"""Sealed hole cards: their keys released when due, TV's requests for missed ones answered.

Both from the journal, in the loop (controller/seal.py, controller/holeresend.py)."""

from __future__ import annotations

import logging

from controller.holeresend import HoleRequest, parse_request
from controller.holeresend import answer as answer_hole_request
from controller.hooks import Effect, Table
from controller.items import ReleaseDue
from kernel.messages import Message

log = logging.getLogger("tablectl.daemon")


class HoleRelease:
    """The loop's own `ReleaseDue` items and TV's `tvreq/<kind>` requests."""

    def __init__(self, table: Table) -> None:
        self.table = table
        table.register_event_handler("take:ReleaseDue", self.release)
        table.register_event_handler("take:HoleRequest", self.answer)

    def submit(self, kind: str, payload: bytes) -> None:
        """TV asks for hole cards it missed (`tvreq/<kind>`; thread-safe): queued for the
        loop, which answers from the journal; a malformed one is dropped."""
        try:
            self.table.queue.put(parse_request(kind, payload))
        except ValueError as exc:
            log.warning("TV request on tvreq/%s ignored: %s", kind, exc)

    def release(self, item: ReleaseDue, effects: list[Effect]) -> list[Message]:
        """Hole-card keys due: journaled, then published."""
        table = self.table
        return table.keep(table.seal.due(table.now()))

    def answer(self, item: HoleRequest, effects: list[Effect]) -> list[Message]:
        """TV: hole cards again as journaled, to TV only."""
        table = self.table
        hole = answer_hole_request(item, table.config, table.seal, t=table.now())
        return [*hole.messages, *table.record("daemon", hole.alerts)]
