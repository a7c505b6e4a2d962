"""Alerts and replies the daemon publishes itself (the engine makes every other message)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controller.card_names import hide_private
from controller.engine import Engine
from kernel.inputs import Command
from kernel.messages import ALERTS, REPLIES, Message


class Notices:
    """Makes the daemon's own messages: alerts for the floor, `ok: false` replies."""

    def __init__(self, table: str, engine: Engine, now: Callable[[], float]) -> None:
        self.table = table
        self.engine = engine
        self.now = now

    def alert(
        self,
        kind: str,
        text: str,
        details: dict[str, Any] | None = None,
        severity: str = "critical",
    ) -> Message:
        """An alert on `alerts`, dated now, naming the hand in progress."""
        hand = self.engine.hand
        payload: dict[str, Any] = {
            "table": self.table,
            "type": kind,
            "severity": severity,
            # An engine error's text may name a card (a hole card): only public ones stay.
            "message": hide_private(text, self.engine.public_cards()),
            "hand": hand.number if hand else None,
            "t": self.now(),
        }
        payload.update(details or {})
        return Message(ALERTS, payload)

    def refusal(self, command: str, request_id: str | None, error: str) -> Message:
        """An `ok: false` answer to a room command the engine never saw."""
        payload: dict[str, Any] = {
            "table": self.table,
            "id": request_id,
            "command": command,
            "ok": False,
            "error": hide_private(error, self.engine.public_cards()),
            "t": self.now(),
        }
        return Message(REPLIES, payload)

    def failed_reply(self, item: object, error: str) -> list[Message]:
        """The answer to a room command whose processing failed, so the room is not left
        waiting (none for another input)."""
        if isinstance(item, Command) and isinstance(item.args.get("id"), str):
            return [self.refusal(item.name, item.args["id"], error)]
        return []
