"""Room commands through the daemon and a real mosquitto: every malformed kind and every
impossible command answered on `replies`, the table left unchanged and still working."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from controller.commands import Bucket, CommandRateLimit
from controller.config import load_config
from controller.daemon import Daemon
from controller.schema import validate
from kernel.messages import ALERTS, REPLIES, STATE, Message
from tests.broker import EXAMPLE_ACL, USERS, Mosquitto, Received, Subscriber
from tests.command_cases import IMPOSSIBLE, MALFORMED, Bad, raw

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"
STAFF = ROOT / "examples" / "staff" / "sim-staff.toml"
PREFIX = "poker/sim/t01"


# ---------------------------------------------------------------- through the daemon


@dataclass
class Table:
    """A running daemon on a real broker, with the room server's subscriber."""

    broker: Mosquitto
    daemon: Daemon
    room: Subscriber
    staff_file: Path

    def send(self, name: str, payload: bytes) -> None:
        self.room.publish(f"{PREFIX}/cmd/{name}", payload)

    def replies(self) -> list[dict[str, Any]]:
        return [json.loads(m.payload) for m in self.room.messages(f"{PREFIX}/{REPLIES}")]

    def alerts(self) -> list[dict[str, Any]]:
        return [json.loads(m.payload) for m in self.room.messages(f"{PREFIX}/{ALERTS}")]

    def states(self) -> list[dict[str, Any]]:
        return [json.loads(m.payload) for m in self.room.messages(f"{PREFIX}/{STATE}")]

    def request(self, name: str, payload: bytes, timeout: float = 15.0) -> dict[str, Any]:
        """Send a command and return the next reply (commands are sent one at a time)."""
        before = len(self.replies())
        self.send(name, payload)

        def answered(msgs: list[Received]) -> bool:
            return sum(m.topic.endswith(f"/{REPLIES}") for m in msgs) > before

        assert self.room.wait_for(answered, timeout), f"no reply to cmd/{name}"
        reply = self.replies()[before]
        validate(Message(REPLIES, reply))
        return reply

    def retained_state(self) -> dict[str, Any]:
        """The retained state snapshot, as a subscriber arriving now gets it."""
        with Subscriber(self.broker, f"{PREFIX}/{STATE}", username="room") as late:
            assert late.wait_for(lambda m: len(m) >= 1, 10), "no retained state"
            message = late.messages()[0]
            assert message.retain
            state: dict[str, Any] = json.loads(message.payload)
            return state

    def staff(self) -> tuple[list[tuple[str, str, str]], bytes]:
        """The staff registry as the engine holds it, and the staff registry file's bytes."""
        members = [(m.uid, m.name, m.role) for m in self.daemon.engine.staff_members()]
        return members, self.staff_file.read_bytes()

    def everything(self) -> tuple[dict[str, Any], list[tuple[str, str, str]], bytes]:
        """What a refused command must leave unchanged: retained state and staff registry."""
        return (self.retained_state(), *self.staff())

    def wait_state(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 15.0
    ) -> bool:
        def seen(msgs: list[Received]) -> bool:
            states = [json.loads(m.payload) for m in msgs if m.topic.endswith(f"/{STATE}")]
            return bool(states) and predicate(states[-1])

        return self.room.wait_for(seen, timeout)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Table]:
    """One table for the module: Alice on seat 1, Bruno on seat 2, no hand running; its
    staff registry is a copy of the example's (a `staff` command rewrites it)."""
    workdir = tmp_path_factory.mktemp("commands")
    staff_file = workdir / "staff.toml"
    shutil.copy(STAFF, staff_file)
    config = load_config(EXAMPLE)
    config = dataclasses.replace(
        config,
        journal=dataclasses.replace(config.journal, path=workdir / "t01.journal"),
        badge=dataclasses.replace(config.badge, staff=staff_file),
    )
    # The shipped ACL, widened for the room to any cmd/ topic of t01 (as an older ACL, or a
    # bridge's `cmd/+`, would be): the table's own refusal of names it does not take is
    # what these tests check; the shipped ACL refuses them first (test_retained_commands).
    acl = workdir / "acl"
    acl.write_text(EXAMPLE_ACL.read_text() + f"\nuser room\ntopic write {PREFIX}/cmd/#\n")
    broker = Mosquitto(workdir / "mosquitto", users=USERS, acl_file=acl).start()
    daemon = Daemon(
        config, broker=broker.broker_config("table-t01", prefix=PREFIX, client_id="tablectl-t01")
    )
    # Room for every command of the module at once: the rate limit (50 at once, then 10 a
    # second) is tested on its own (test_broker_hardening), and the 52 commands of the
    # refusal test below were refused for their rate when sent too soon after the setup.
    daemon.commands.limit = CommandRateLimit(commands=Bucket(rate=10.0, burst=1000.0))
    room = Subscriber(broker, f"{PREFIX}/#", username="room")
    daemon.start()
    try:
        table = Table(broker, daemon, room, staff_file)
        table.send("seat", raw({"seat": 1, "player": "Alice", "stack": 20000, "id": "setup-1"}))
        table.send("seat", raw({"seat": 2, "player": "Bruno", "stack": 20000, "id": "setup-2"}))
        assert table.wait_state(
            lambda s: s["seats"]["1"]["player"] == "Alice" and s["seats"]["2"]["player"] == "Bruno"
        )
        yield table
    finally:
        daemon.stop()
        room.close()
        broker.stop()


def _check_refused(
    table: Table,
    name: str,
    payload: bytes,
    error: str,
    request_id: str | None,
    alert: str,
    *,
    echoed: str | None = None,
) -> None:
    before = table.everything()
    journaled = table.daemon.applied
    alerts = len(table.alerts())
    reply = table.request(name, payload)
    assert reply["ok"] is False
    assert reply["id"] == request_id
    assert reply["command"] == (name if echoed is None else echoed)
    assert reply["table"] == "t01"
    assert reply["error"] and re.search(error, reply["error"]), reply["error"]
    # ... and the floor hears of it, in an alert that is itself valid.
    assert table.room.wait_for(
        lambda _m: any(a["type"] == alert for a in table.alerts()[alerts:]), 10
    ), f"no {alert} alert"
    raised = next(a for a in table.alerts()[alerts:] if a["type"] == alert)
    validate(Message(ALERTS, raised))
    assert raised["command"] == reply["command"]
    # Nothing changed: the very same retained snapshot, staff registry and staff file.
    assert table.everything() == before
    if alert == "command_malformed":
        assert raised["id"] == request_id
        assert table.daemon.applied == journaled, "a malformed command is never journaled"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("bad", MALFORMED, ids=[b.case for b in MALFORMED])
def test_malformed_command_gets_an_error_reply_and_changes_nothing(table: Table, bad: Bad) -> None:
    _check_refused(
        table,
        bad.name,
        bad.payload,
        bad.error,
        bad.request_id,
        "command_malformed",
        echoed=bad.echoed,
    )


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("case", "name", "fields", "error"), IMPOSSIBLE, ids=[f"engine-{c[0]}" for c in IMPOSSIBLE]
)
def test_impossible_command_gets_an_error_reply_and_changes_nothing(
    table: Table, case: str, name: str, fields: dict[str, Any], error: str
) -> None:
    request_id = f"imp-{case}"
    payload = raw({"name": name, **fields, "id": request_id})
    _check_refused(table, name, payload, error, request_id, "command_rejected")


@pytest.mark.timeout(60)
def test_pause_when_paused_gets_an_error_reply_and_changes_nothing(table: Table) -> None:
    reply = table.request("pause", raw({"reason": "color up", "id": "pause-1"}))
    assert reply["ok"] is True
    try:
        assert table.wait_state(lambda s: "pause" in s["held"])
        payload = raw({"name": "pause", "reason": "again", "id": "pause-2"})
        _check_refused(table, "pause", payload, r"already paused", "pause-2", "command_rejected")
    finally:
        assert table.request("resume", raw({"id": "resume-1"}))["ok"] is True


@pytest.mark.timeout(60)
def test_unpublishable_text_is_refused_and_state_still_publishes(table: Table) -> None:
    """A lone surrogate (JSON `\\ud800`) would make every later publication fail: it is
    refused with a reply the room can read, and the table goes on publishing `state`."""
    payload = b'{"name":"seat","seat":6,"player":"Eve \\ud800","stack":900,"id":"sur-1"}'
    reply = table.request("seat", payload)
    assert (reply["ok"], reply["id"]) == (False, "sur-1")
    assert "lone surrogate" in reply["error"]
    states = len(table.states())
    reply = table.request("seat", raw({"seat": 6, "player": "Eve \u00e9", "stack": 900}))
    assert reply["ok"] is True
    assert table.wait_state(lambda s: s["seats"]["6"]["player"] == "Eve \u00e9")
    assert len(table.states()) > states
    assert table.retained_state()["seats"]["6"]["player"] == "Eve \u00e9"
    assert table.request("unseat", raw({"seat": 6}))["ok"] is True


@pytest.mark.timeout(60)
def test_the_table_keeps_working_after_refused_commands(table: Table) -> None:
    before = len(table.replies())
    for bad in MALFORMED:
        table.send(bad.name, bad.payload)
    table.send("stack", raw({"name": "stack", "seat": 2, "stack": 15000, "id": "ok-1"}))

    def answered(_msgs: list[Received]) -> bool:
        return any(r["id"] == "ok-1" for r in table.replies()[before:])

    assert table.room.wait_for(answered, 20), "no reply to the valid command"
    replies = table.replies()[before:]
    # Every refused command was answered, in order, before the valid one.
    assert [r["ok"] for r in replies] == [False] * len(MALFORMED) + [True]
    assert [r["id"] for r in replies[:-1]] == [b.request_id for b in MALFORMED]
    reply = replies[-1]
    assert reply == reply | {"id": "ok-1", "command": "stack", "ok": True, "error": None}
    assert table.wait_state(lambda s: s["seats"]["2"]["stack"] == 15000)
    assert table.retained_state()["seats"]["2"]["stack"] == 15000


@pytest.mark.timeout(60)
def test_a_command_without_id_is_answered_under_an_automatic_id(table: Table) -> None:
    reply = table.request("seat", raw({"seat": 3, "player": "Chiara", "stack": 5000}))
    assert reply["ok"] is True and reply["error"] is None
    assert reply["command"] == "seat" and reply["id"].startswith("auto-")
    assert table.wait_state(lambda s: s["seats"]["3"]["player"] == "Chiara")
    again = table.request("unseat", raw({"seat": 3}))
    assert again["ok"] is True and again["id"].startswith("auto-")
    assert again["id"] != reply["id"]


@pytest.mark.timeout(60)
def test_a_command_left_retained_is_not_applied_when_the_table_connects(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """A command left retained on the broker would be applied at every new subscription: the
    table refuses that copy (an ok:false reply saying why), nothing changes, and a live
    command is applied."""
    prefix = "poker/retained/t01"
    config = load_config(EXAMPLE)
    config = dataclasses.replace(
        config, journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal")
    )
    room = Subscriber(mosquitto, f"{prefix}/#")
    stale = {"seat": 7, "player": "Zed", "stack": 500, "id": "left-behind"}
    room.publish(f"{prefix}/cmd/seat", raw(stale), retain=True)
    daemon = Daemon(config, broker=mosquitto.broker_config(prefix=prefix, client_id="t-retained"))
    daemon.start()
    try:
        assert room.wait_for(lambda ms: any(m.topic.endswith("/replies") for m in ms), 15)
        room.publish(f"{prefix}/cmd/pause", raw({"id": "live"}))
        assert room.wait_for(lambda ms: len(room.messages(f"{prefix}/replies")) >= 2, 15)
        replies = [json.loads(m.payload) for m in room.messages(f"{prefix}/replies")]
        assert [(r["id"], r["ok"]) for r in replies] == [("left-behind", False), ("live", True)]
        assert replies[0]["error"].startswith("retained:")
        assert daemon.engine.seats[7].player is None
    finally:
        daemon.stop()
        room.publish(f"{prefix}/cmd/seat", b"", retain=True)  # clear it
        room.close()
