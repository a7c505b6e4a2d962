"""The table never acts on a retained room command: refused with a reply, journaled, one
`command_retained` alert a minute (controller/commands.py, RetainedCommands; the daemon's
`commands.submit`). The same on a real broker: tests/system/test_retained_commands.py."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from controller.commands import (
    RETAINED_ERROR,
    AlertThrottle,
    Bucket,
    CommandRateLimit,
    RetainedCommands,
)
from controller.config import load_config
from controller.daemon import Daemon
from controller.items import FromRoom, RefusedCommand
from controller.journal import open_journal
from controller.schema import validate
from kernel.messages import ALERTS, REPLIES, Message

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim-table.toml"
NOW = 1_700_000_000.0


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Outbox:
    """Stands where the publisher is: keeps what the daemon publishes."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def publish(self, message: Message) -> None:
        self.messages.append(message)

    def on(self, topic: str) -> list[dict[str, Any]]:
        return [m.payload for m in self.messages if m.topic == topic]


def test_one_alert_a_minute_stands_for_the_refusals_after_it() -> None:
    clock = Clock()
    throttle = AlertThrottle(clock=clock)
    assert throttle.note() == (True, 1)
    clock.now += 10
    assert throttle.note() == (False, 1)
    assert throttle.note() == (False, 2)
    clock.now += 50
    assert throttle.note() == (True, 3)  # the two since the last alert, and this one
    assert throttle.note() == (False, 1)


def test_the_rate_limits_alert_once_a_minute_too() -> None:
    clock = Clock()
    limit = CommandRateLimit(commands=Bucket(rate=1.0, burst=1.0), clock=clock)
    assert limit.admit("seat") is None
    first, second = limit.admit("seat"), limit.admit("seat")
    assert first is not None and (first.alert, first.refused) == (True, 1)
    assert second is not None and (second.alert, second.refused) == (False, 1)
    assert "rate limited" in second.error
    clock.now += 61
    assert limit.admit("seat") is None  # refilled
    third = limit.admit("seat")
    assert third is not None and (third.alert, third.refused) == (True, 2)
    assert limit.refused == {"commands": 3, "resend": 0}


def test_a_retained_command_is_refused_with_its_id_and_an_empty_one_is_a_clearing() -> None:
    clock = Clock()
    retained = RetainedCommands(clock=clock)
    first = retained.refuse(b'{"seat": 7, "player": "Zed", "stack": 500, "id": "left-1"}')
    assert first is not None
    assert (first.request_id, first.error, first.alert, first.refused) == (
        "left-1",
        RETAINED_ERROR,
        True,
        1,
    )
    bad = retained.refuse(b"not json")  # refused all the same, without an id to echo
    assert bad is not None and (bad.request_id, bad.alert, bad.refused) == (None, False, 1)
    assert retained.refuse(b"") is None
    assert (retained.refused, retained.cleared) == (2, 1)


def _daemon(tmp_path: Path) -> tuple[Daemon, Outbox]:
    config = load_config(EXAMPLE)
    path = tmp_path / "t01.journal"
    config = dataclasses.replace(config, journal=dataclasses.replace(config.journal, path=path))
    daemon = Daemon(config, clock=lambda: NOW)
    daemon.journal = open_journal(config.journal, config.table.id, now=NOW)
    outbox = Outbox()
    daemon.publisher = outbox  # type: ignore[assignment]
    return daemon, outbox


def test_the_daemon_refuses_a_retained_command_journals_the_reply_and_alerts_once(
    tmp_path: Path,
) -> None:
    """Two retained commands (a seat and a resend): neither applied, each answered ok:false,
    the reply and the one alert journaled before the PUBACK; an empty retained message is
    acknowledged at once and queues nothing."""
    daemon, outbox = _daemon(tmp_path)
    acked: list[str] = []
    seat = {"seat": 7, "player": "Zed", "stack": 500, "id": "left-1"}
    daemon.commands.submit(
        "seat", json.dumps(seat).encode(), lambda: acked.append("left-1"), retained=True
    )
    resend = {"from_seq": 1, "to_seq": 5, "id": "left-2"}
    daemon.commands.submit(
        "resend", json.dumps(resend).encode(), lambda: acked.append("left-2"), retained=True
    )
    daemon.commands.submit("pause", b"", lambda: acked.append("clear"), retained=True)
    assert acked == ["clear"]
    items = [daemon.queue.get_nowait() for _ in range(2)]
    assert daemon.queue.empty()
    assert all(isinstance(i, FromRoom) and isinstance(i.item, RefusedCommand) for i in items)
    assert daemon.journal is not None
    daemon.handle(items)
    assert acked == ["clear", "left-1", "left-2"]
    replies = outbox.on(REPLIES)
    assert [(r["id"], r["command"], r["ok"]) for r in replies] == [
        ("left-1", "seat", False),
        ("left-2", "resend", False),
    ]
    assert all(r["error"] == RETAINED_ERROR for r in replies)
    alerts = outbox.on(ALERTS)
    assert [a["type"] for a in alerts] == ["command_retained"]
    assert alerts[0]["severity"] == "warning"
    assert alerts[0]["command"] == "seat" and alerts[0]["id"] == "left-1"
    for message in outbox.messages:
        validate(message)
    assert daemon.engine.seats[7].player is None
    assert daemon.applied == 0
    journal = "".join(p.read_text() for p in tmp_path.glob("t01.journal*"))
    assert journal.count(RETAINED_ERROR) >= 2 and "command_retained" in journal
    assert '"event":"command"' not in journal.replace(" ", "")  # never an input


def test_a_live_command_is_applied_as_before(tmp_path: Path) -> None:
    daemon, outbox = _daemon(tmp_path)
    seat = {"seat": 5, "player": "Ann", "stack": 20000, "id": "live-1"}
    daemon.commands.submit("seat", json.dumps(seat).encode(), lambda: None, retained=False)
    daemon.handle([daemon.queue.get_nowait()])
    assert [(r["id"], r["ok"]) for r in outbox.on(REPLIES)] == [("live-1", True)]
    assert daemon.engine.seats[5].player == "Ann"
    assert daemon.commands.retained.refused == 0
