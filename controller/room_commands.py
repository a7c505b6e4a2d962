"""Room commands from the broker: checked, rate-limited, retained ones refused, answered.

A refusal gets its reply (and alert) in the loop; `resend` is answered from the journal."""

from __future__ import annotations

import itertools
import logging
import secrets
from collections.abc import Callable

from controller.commands import (
    CommandError,
    CommandRateLimit,
    RetainedCommands,
    command_label,
    parse_resend,
    parse_room_command,
)
from controller.hooks import Effect, Table
from controller.items import FromRoom, RefusedCommand
from controller.resend import RESEND, ResendRequest, answer_resend
from kernel.inputs import Command
from kernel.messages import Message

log = logging.getLogger("tablectl.daemon")


class RoomCommands:
    """The table's `cmd/<name>` topics: what goes to the loop, and what is answered there
    without reaching the engine (a refusal, a resend)."""

    def __init__(self, table: Table) -> None:
        self.table = table
        self.limit = CommandRateLimit()  # room commands and resend (their rate)
        self.retained = RetainedCommands()  # commands the broker kept: refused
        self._request_ids = itertools.count(1)
        self._run_id = secrets.token_hex(4)  # no clock: a Pi may boot with a wrong one
        table.register_event_handler("take:RefusedCommand", self.answer_refused)
        table.register_event_handler("take:ResendRequest", self.answer_resend)

    def next_request_id(self) -> str:
        """A request id for a room command that came without one: unique across restarts
        too (the engine applies a request id once), as it names this run at random."""
        return f"auto-{self._run_id}-{next(self._request_ids)}"

    def submit(
        self,
        name: str,
        payload: bytes,
        ack: Callable[[], None] | None = None,
        *,
        retained: bool = False,
    ) -> None:
        """A room command from MQTT `cmd/<name>` (thread-safe): queued if valid, else
        answered as refused.

        A valid command is journaled and applied by the loop, and the engine answers it on
        `replies`; a malformed one changes nothing and gets an `ok: false` reply plus a
        `command_malformed` alert (controller/commands.py says what is malformed), and so
        does one that came `retained` (kept by the broker: never applied; its alert is
        `command_retained`). `ack` (the broker's PUBACK) is called once the command or its
        refusal is journaled.
        """
        if retained:
            self._refuse_retained(name, payload, ack)
            return
        item: Command | RefusedCommand | ResendRequest
        try:
            if name == RESEND:  # answered from the journal by the loop (controller/resend.py)
                item = parse_resend(payload)
            else:
                now = self.table.now()
                item = parse_room_command(name, payload, t=now, next_id=self.next_request_id)
        except CommandError as exc:
            item = RefusedCommand(command_label(name), exc.request_id, str(exc))
        except Exception as exc:  # never let a payload take the MQTT thread down
            log.exception("room command %r could not be checked", name)
            error = f"internal error: {type(exc).__name__}"
            item = RefusedCommand(command_label(name), None, error)
        item = self._rate_limited(name, item)
        self.table.queue.put(item if ack is None else FromRoom(item, ack))

    def _rate_limited(
        self, name: str, item: Command | RefusedCommand | ResendRequest
    ) -> Command | RefusedCommand | ResendRequest:
        """`item`, or its refusal when room commands (or `resend`) come too fast
        (controller/commands.py, CommandRateLimit): one alert a minute, a reply each."""
        cost = item.to_seq - item.from_seq + 1 if isinstance(item, ResendRequest) else 1
        refusal = self.limit.admit(name, cost)
        if refusal is None:
            return item
        rid = item.request_id if isinstance(item, RefusedCommand | ResendRequest) else None
        if isinstance(item, Command) and isinstance(item.args.get("id"), str):
            rid = item.args["id"]
        return RefusedCommand(
            command_label(name),
            rid,
            refusal.error,
            alert="commands_rate_limited" if refusal.alert else None,
            details=(("refused", refusal.refused), ("resend", name == RESEND)),
        )

    def _refuse_retained(self, name: str, payload: bytes, ack: Callable[[], None] | None) -> None:
        """A command that came with the retain flag: the broker keeps it (published with
        retain, now or before) and would send it to every new subscription, so it is never
        applied: refused, a reply each, one `command_retained` alert a minute
        (controller/commands.py, RetainedCommands). An empty one clears a retained command:
        not a command, acknowledged and nothing more."""
        refusal = self.retained.refuse(payload)
        if refusal is None:
            log.info("a retained command on cmd/%s was cleared", command_label(name))
            if ack is not None:
                ack()
            return
        item = self._rate_limited(
            name,
            RefusedCommand(
                command_label(name),
                refusal.request_id,
                refusal.error,
                alert="command_retained" if refusal.alert else None,
                details=(("refused", refusal.refused), ("retained", True)),
            ),
        )
        self.table.queue.put(item if ack is None else FromRoom(item, ack))

    def answer_refused(self, item: RefusedCommand, effects: list[Effect]) -> list[Message]:
        """A refused command: its `ok: false` reply, and its alert if it has one."""
        notices = self.table.notices
        text = f"command {item.name!r} refused: {item.error}"
        details = {"command": item.name, "id": item.request_id, **dict(item.details)}
        out = [notices.refusal(item.name, item.request_id, item.error)]
        if item.alert is not None:
            if item.alert in ("commands_rate_limited", "command_retained"):
                text = f"{dict(item.details)['refused']} room command(s) refused: {item.error}"
            out.append(notices.alert(item.alert, text, details, "warning"))
        return self.table.record("daemon", out)

    def answer_resend(self, item: ResendRequest, effects: list[Effect]) -> list[Message]:
        """Events again as journaled; the reply journaled (controller/resend.py)."""
        table = self.table
        answer = answer_resend(item, table.config, t=table.now(), last_seq=table.engine.seq)
        return [*answer.events, *table.record("daemon", [answer.reply])]
