"""Room commands: parse_room_command, and every malformed kind answered on `replies` by the
daemon through a real mosquitto, the table left unchanged and still working."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from controller.commands import (
    MAX_PAYLOAD,
    ROOM_COMMANDS,
    UNKNOWN_COMMAND,
    Bucket,
    CommandError,
    CommandRateLimit,
    command_label,
    parse_room_command,
)
from controller.config import load_config
from controller.daemon import Daemon
from controller.errors import TraceError
from controller.messages import ALERTS, REPLIES, STATE, Message
from controller.schema import SchemaError, validate
from controller.trace import Command
from tests.broker import EXAMPLE_ACL, USERS, Mosquitto, Received, Subscriber

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"
STAFF = ROOT / "examples" / "staff" / "sim-staff.toml"
PREFIX = "poker/sim/t01"


def counter() -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"auto-{next(numbers)}"


def raw(obj: Any) -> bytes:
    return json.dumps(obj).encode()


# ---------------------------------------------------------------- parse_room_command

VALID: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    (
        "seat",
        {"name": "seat", "seat": 3, "player": "Alice", "stack": 20000, "id": "r-1"},
        {"seat": 3, "player": "Alice", "stack": 20000, "id": "r-1"},
    ),
    (
        "seat",
        {"seat": 4, "player": "Bruno", "stack": 1, "player_id": "P-77"},
        {"seat": 4, "player": "Bruno", "stack": 1, "player_id": "P-77", "id": "auto-1"},
    ),
    ("unseat", {"name": "unseat", "seat": 3}, {"seat": 3, "id": "auto-1"}),
    (
        "level",
        {"name": "level", "small_blind": 100, "big_blind": 200, "ante": 200, "bb_ante": True},
        {"small_blind": 100, "big_blind": 200, "ante": 200, "bb_ante": True, "id": "auto-1"},
    ),
    ("button", {"name": "button", "seat": 9, "id": "b"}, {"seat": 9, "id": "b"}),
    ("stack", {"name": "stack", "seat": 2, "stack": 0}, {"seat": 2, "stack": 0, "id": "auto-1"}),
    ("pause", {"name": "pause", "reason": "color up"}, {"reason": "color up", "id": "auto-1"}),
    ("pause", {"name": "pause"}, {"id": "auto-1"}),
    (
        "hold",
        {"name": "hold", "reason": "hand for hand", "hand_for_hand": True},
        {"reason": "hand for hand", "hand_for_hand": True, "id": "auto-1"},
    ),
    ("release", {"name": "release"}, {"id": "auto-1"}),
    ("release", {"hand_for_hand": False}, {"hand_for_hand": False, "id": "auto-1"}),
    (
        "away",
        {"name": "away", "seat": 4, "away": False},
        {"seat": 4, "away": False, "id": "auto-1"},
    ),
    (
        "level",
        {"name": "level", "small_blind": 50, "big_blind": 100, "ante": 0, "announced": 12.5},
        {"small_blind": 50, "big_blind": 100, "ante": 0, "announced": 12.5, "id": "auto-1"},
    ),
    ("resume", {"name": "resume", "id": "go"}, {"id": "go"}),
    (
        "penalty",
        {"name": "penalty", "seat": 5, "hands": 3},
        {"seat": 5, "hands": 3, "id": "auto-1"},
    ),
    (
        "penalty",
        {"name": "penalty", "seat": 5, "rounds": 1},
        {"seat": 5, "rounds": 1, "id": "auto-1"},
    ),
    (
        "staff",
        {"name": "staff", "uid": "04a1b2c3", "person": "Giulia Ferrari", "role": "floor"},
        {"uid": "04A1B2C3", "person": "Giulia Ferrari", "role": "floor", "id": "auto-1"},
    ),
]


@pytest.mark.parametrize(("name", "payload", "args"), VALID, ids=[v[0] for v in VALID])
def test_valid_payloads_become_commands(
    name: str, payload: dict[str, Any], args: dict[str, Any]
) -> None:
    command = parse_room_command(name, raw(payload), t=12.5, next_id=counter())
    assert isinstance(command, Command)
    assert (command.t, command.name) == (12.5, name)
    assert command.args == args
    if "name" in payload:
        validate(Message(f"cmd/{name}", payload))  # the documented schema agrees


def test_automatic_ids_are_used_only_by_valid_commands() -> None:
    next_id = counter()
    with pytest.raises(CommandError):
        parse_room_command("seat", b'{"seat": 1}', t=0.0, next_id=next_id)
    first = parse_room_command("unseat", b'{"seat": 1}', t=0.0, next_id=next_id)
    second = parse_room_command("unseat", b'{"seat": 2}', t=0.0, next_id=next_id)
    mine = parse_room_command("unseat", b'{"seat": 3, "id": "x"}', t=0.0, next_id=next_id)
    assert [first.args["id"], second.args["id"], mine.args["id"]] == ["auto-1", "auto-2", "x"]


@dataclass(frozen=True)
class Bad:
    """A malformed room command: topic name, payload, the error, the id echoed in the reply."""

    case: str
    name: str
    payload: bytes
    error: str  # a regular expression the error message matches
    request_id: str | None
    schema_refuses: bool = True  # command.json refuses it too (when it is a JSON object)
    command: str | None = None  # the name echoed in the reply and alert (default: `name`)

    @property
    def echoed(self) -> str:
        return self.name if self.command is None else self.command


LEVEL = {"small_blind": 1, "big_blind": 2, "ante": 0}
NEW_FLOOR = {"name": "staff", "uid": "04ABCD", "role": "floor"}
BIG = raw({"name": "seat", "seat": 5, "player": "x" * MAX_PAYLOAD, "stack": 1, "id": "big"})
MALFORMED = [
    Bad("not-json", "seat", b'{"seat": 5, "id": "nj"', r"^not JSON: ", None),
    Bad("not-utf8", "seat", b'{"player": "\xff"}', r"not UTF-8", None),
    Bad("nan", "seat", b'{"seat": NaN}', r"NaN is not a JSON number", None),
    Bad("too-deep", "seat", b"[" * 4000 + b"]" * 4000, r"nested too deeply", None),
    Bad("array", "seat", b'["seat", 5]', r"must be a JSON object, got an array", None),
    Bad("string", "seat", b'"seat"', r"must be a JSON object, got a string", None),
    Bad("oversized", "seat", BIG, r"too large: \d+ bytes \(at most 8192\)", None),
    Bad("unknown-command", "shuffle", raw({"id": "u1"}), r"unknown command 'shuffle'", "u1"),
    Bad("unknown-nested", "seat/3", raw({"id": "u2"}), r"unknown command 'seat/3'", "u2"),
    Bad(
        "draw-from-room",
        "draw",
        raw({"name": "draw", "purpose": "button", "pick": 0, "of": 9, "id": "d1"}),
        r"'draw' is internal to the table",
        "d1",
    ),
    Bad(
        "name-mismatch",
        "seat",
        raw({"name": "unseat", "seat": 5, "id": "m1"}),
        r"topic says 'seat' but payload says \"unseat\"",
        "m1",
    ),
    Bad(
        "missing-field",
        "seat",
        raw({"name": "seat", "seat": 5, "player": "Eve", "id": "m2"}),
        r"needs field 'stack'",
        "m2",
    ),
    Bad(
        "wrong-type",
        "seat",
        raw({"name": "seat", "seat": "5", "player": "Eve", "stack": 100, "id": "m3"}),
        r"field 'seat' must be an integer, got a string",
        "m3",
    ),
    Bad(
        "bool-for-int",
        "stack",
        raw({"name": "stack", "seat": 1, "stack": True, "id": "m4"}),
        r"field 'stack' must be an integer, got a boolean",
        "m4",
    ),
    Bad(
        "empty-player",
        "seat",
        raw({"name": "seat", "seat": 5, "player": "", "stack": 100, "id": "m5"}),
        r"field 'player' must be a non-empty string",
        "m5",
    ),
    Bad(
        "unknown-field",
        "seat",
        raw({"name": "seat", "seat": 5, "player": "Eve", "stack": 100, "vip": True, "id": "m6"}),
        r"has no field 'vip'",
        "m6",
    ),
    Bad(
        "table-field-t",
        "button",
        raw({"name": "button", "seat": 2, "t": 99.0, "id": "m7"}),
        r"field 't' is set by the table",
        "m7",
    ),
    Bad(
        "seat-out-of-range",
        "seat",
        raw({"name": "seat", "seat": 11, "player": "Eve", "stack": 100, "id": "m8"}),
        r"field 'seat' must be in 1\.\.10, got 11",
        "m8",
    ),
    Bad(
        "negative-stack",
        "stack",
        raw({"name": "stack", "seat": 1, "stack": -5, "id": "m9"}),
        r"field 'stack' must be in 0\.\.",
        "m9",
    ),
    Bad(
        "bool-for-number",
        "level",
        raw({"name": "level", "small_blind": 1, "big_blind": 2, "ante": 0, "announced": True}),
        r"field 'announced' must be a number, got a boolean",
        None,
    ),
    Bad(
        "penalty-both",
        "penalty",
        raw({"name": "penalty", "seat": 1, "hands": 1, "rounds": 1, "id": "p1"}),
        r"exactly one of 'hands' or 'rounds'",
        "p1",
    ),
    Bad(
        "penalty-neither",
        "penalty",
        raw({"name": "penalty", "seat": 1, "id": "p2"}),
        r"exactly one of 'hands' or 'rounds'",
        "p2",
    ),
    Bad(
        "staff-bad-role",
        "staff",
        raw({"name": "staff", "uid": "04A1B2C3", "person": "X", "role": "boss", "id": "s1"}),
        r"staff role must be 'dealer' or 'floor', got 'boss'",
        "s1",
    ),
    Bad(
        "staff-bad-uid",
        "staff",
        raw({"name": "staff", "uid": "badge-7", "person": "X", "role": "dealer", "id": "s2"}),
        r"staff uid must be hex digits",
        "s2",
    ),
    Bad(
        "id-not-string",
        "button",
        raw({"name": "button", "seat": 2, "id": 17}),
        r"field 'id' must be a printable string",
        None,
    ),
    Bad(
        "id-too-long",
        "button",
        raw({"name": "button", "seat": 2, "id": "x" * 129}),
        r"field 'id' must be a printable string of 1\.\.128",
        None,
    ),
    Bad(
        "id-control-char",
        "button",
        raw({"name": "button", "seat": 2, "id": "a\nb"}),
        r"field 'id' must be a printable string",
        None,
    ),
    Bad(
        "id-card-shaped",
        "button",
        raw({"name": "button", "seat": 2, "id": "As"}),
        r"field 'id' must be a printable string .* not a card name",
        None,
    ),
    # Every kind of command, each with at least one malformed payload of its own.
    Bad(
        "unseat-seat-0",
        "unseat",
        raw({"name": "unseat", "seat": 0, "id": "us1"}),
        r"field 'seat' must be in 1\.\.10, got 0",
        "us1",
    ),
    Bad(
        "unseat-extra-field",
        "unseat",
        raw({"name": "unseat", "seat": 3, "player": "Alice", "id": "us2"}),
        r"command 'unseat' has no field 'player' \(it takes 'seat', 'id'\)",
        "us2",
    ),
    Bad(
        "unseat-huge-seat",
        "unseat",
        raw({"name": "unseat", "seat": 10**30, "id": "us3"}),
        r"field 'seat' must be in 1\.\.10, got 1000000000000",
        "us3",
    ),
    Bad(
        "button-seat-string",
        "button",
        raw({"name": "button", "seat": "nine", "id": "bt1"}),
        r"field 'seat' must be an integer, got a string",
        "bt1",
    ),
    Bad(
        "level-huge-announced",
        "level",
        raw({"name": "level", **LEVEL, "announced": 10**400, "id": "lv1"}),
        r"field 'announced' must be in 0\.\.9007199254740991, got 1000",
        "lv1",
    ),
    Bad(
        "level-infinite-announced",
        "level",
        b'{"small_blind": 1, "big_blind": 2, "ante": 0, "announced": 1e400, "id": "lv2"}',
        r"field 'announced' must be a number, got a number \(Infinity\)",
        "lv2",
    ),
    Bad(
        "pause-reason-number",
        "pause",
        raw({"name": "pause", "reason": 5, "id": "pa1"}),
        r"field 'reason' must be a non-empty string, got a number \(5\)",
        "pa1",
    ),
    Bad(
        "pause-reason-control-char",
        "pause",
        raw({"name": "pause", "reason": "color\u0007up", "id": "pa2"}),
        r"field 'reason' has a control character \(U\+0007 at position 6\)",
        "pa2",
    ),
    Bad(
        "hold-hand-for-hand-not-boolean",
        "hold",
        raw({"name": "hold", "hand_for_hand": "yes", "id": "ho1"}),
        r"field 'hand_for_hand' must be true or false, got a string",
        "ho1",
    ),
    Bad(
        "release-extra-field",
        "release",
        raw({"name": "release", "reason": "break over", "id": "rl1"}),
        r"command 'release' has no field 'reason' \(it takes 'hand_for_hand', 'id'\)",
        "rl1",
    ),
    Bad(
        "resume-extra-field",
        "resume",
        raw({"name": "resume", "reason": "break over", "id": "re1"}),
        r"command 'resume' has no field 'reason' \(it takes 'id'\)",
        "re1",
    ),
    Bad(
        "away-not-boolean",
        "away",
        raw({"name": "away", "seat": 2, "away": "yes", "id": "aw1"}),
        r"field 'away' must be true or false, got a string",
        "aw1",
    ),
    Bad(
        "away-missing-seat",
        "away",
        raw({"name": "away", "away": True, "id": "aw2"}),
        r"command 'away' needs field 'seat'",
        "aw2",
    ),
    Bad(
        "staff-missing-person",
        "staff",
        raw({"name": "staff", "uid": "04ABCDEF000002", "role": "floor", "id": "s3"}),
        r"needs 'person' and 'role'",
        "s3",
    ),
    Bad(
        "staff-blank-person",
        "staff",
        raw({"name": "staff", "uid": "04ABCDEF000002", "person": " ", "role": "floor", "id": "s4"}),
        r"field 'person' is blank",
        "s4",
    ),
    Bad(
        "staff-person-line-break",
        "staff",
        raw({**NEW_FLOOR, "person": "Eve\u2028X", "id": "s5"}),
        r"field 'person' has a control character \(U\+2028",
        "s5",
    ),
    # Text that could not be published: lone surrogates (any string, at any depth, keys
    # included), card names.
    Bad(
        "surrogate-player",
        "seat",
        raw({"name": "seat", "seat": 5, "player": "\ud800", "stack": 100, "id": "su1"}),
        r"field 'player' holds text that is not Unicode \(a lone surrogate",
        "su1",
        schema_refuses=False,
    ),
    Bad(
        "surrogate-staff-person",
        "staff",
        raw({**NEW_FLOOR, "person": "Giu\udc00lia", "id": "su2"}),
        r"field 'person' holds text that is not Unicode",
        "su2",
        schema_refuses=False,
    ),
    Bad(
        "surrogate-key",
        "pause",
        raw({"name": "pause", "\udfff": "x", "id": "su3"}),
        r'field name "\\udfff" is not Unicode text',
        "su3",
        schema_refuses=False,  # the schema never sees it: it cannot be encoded to check
    ),
    Bad(
        "surrogate-nested",
        "level",
        raw({"name": "level", **LEVEL, "x": [{"y": "\ud83d"}], "id": "su4"}),
        r"field 'x' holds text that is not Unicode",
        "su4",
        schema_refuses=False,
    ),
    Bad(
        "surrogate-id",
        "resume",
        raw({"name": "resume", "id": "r\ud800"}),
        r'field \'id\' must be a printable string .* \("r\\ud800"\)',
        None,
        schema_refuses=False,
    ),
    Bad(
        "card-shaped-player",
        "seat",
        raw({"name": "seat", "seat": 5, "player": "Kd", "stack": 100, "id": "cs1"}),
        r"field 'player' reads as a card name",
        "cs1",
    ),
    Bad(
        "card-shaped-topic",
        "As",
        raw({"id": "cs2"}),
        r"^unknown command: the topic's name \(2 characters\) is not a command name",
        "cs2",
        command=UNKNOWN_COMMAND,
    ),
]


def test_every_room_command_has_a_malformed_case() -> None:
    """A new room command fails here until it has malformed payloads of its own."""
    covered = {bad.name for bad in MALFORMED}
    assert sorted(ROOM_COMMANDS - covered) == []


def test_echoed_command_names_are_never_card_shaped_or_unprintable() -> None:
    assert [command_label(n) for n in ("seat", "seat/3", "shuffle", "x_y-2")] == [
        "seat",
        "seat/3",
        "shuffle",
        "x_y-2",
    ]
    for name in ("As", "Td", "", "SEAT", "seat\n", "s\ud800", "9", "a" * 65):
        assert command_label(name) == UNKNOWN_COMMAND


def test_no_refusal_message_holds_text_that_cannot_be_published() -> None:
    """Every error message encodes as UTF-8 (lone surrogates are escaped, never echoed)."""
    for bad in MALFORMED:
        with pytest.raises(CommandError) as caught:
            parse_room_command(bad.name, bad.payload, t=1.0, next_id=counter())
        Message(REPLIES, {"error": str(caught.value)}).payload_bytes()


def test_a_huge_integer_is_a_range_error_with_the_id_echoed() -> None:
    for digits in (20, 300, 4000):
        payload = b'{"small_blind": 1, "big_blind": 2, "ante": 0, "announced": 1%s, "id": "h"}'
        with pytest.raises(CommandError, match=r"'announced' must be in 0\.\.") as caught:
            parse_room_command("level", payload % (b"0" * digits), t=0.0, next_id=counter())
        assert caught.value.request_id == "h"
        assert len(str(caught.value)) < 200


@pytest.mark.parametrize("bad", MALFORMED, ids=[b.case for b in MALFORMED])
def test_malformed_payloads_are_refused_with_a_clear_message(bad: Bad) -> None:
    next_id = counter()
    with pytest.raises(CommandError, match=bad.error) as caught:
        parse_room_command(bad.name, bad.payload, t=1.0, next_id=next_id)
    assert isinstance(caught.value, TraceError)  # and so a TableError
    assert caught.value.request_id == bad.request_id
    assert next_id() == "auto-1", "a refused command uses up no automatic id"
    try:
        obj = json.loads(bad.payload)
    except (ValueError, RecursionError):
        return
    if isinstance(obj, dict) and bad.schema_refuses and len(bad.payload) <= MAX_PAYLOAD:
        with pytest.raises(SchemaError):
            validate(Message(f"cmd/{bad.name}", obj))


GOOD_REPLIES = [
    {"table": "t01", "id": "r-1", "command": "seat", "ok": True, "error": None, "t": 12.4},
    {"table": "t01", "id": "auto-3", "command": "unseat", "ok": False, "error": "x", "t": 0},
    {"table": "t01", "id": None, "command": "level", "ok": False, "error": "not JSON", "t": 1},
]
BAD_REPLIES = {
    "ok without id": GOOD_REPLIES[0] | {"id": None},
    "ok with an error": GOOD_REPLIES[0] | {"error": "seat taken"},
    "refused without error": GOOD_REPLIES[1] | {"error": None},
    "refused with empty error": GOOD_REPLIES[1] | {"error": ""},
    "no command": {k: v for k, v in GOOD_REPLIES[0].items() if k != "command"},
    "ok not boolean": GOOD_REPLIES[0] | {"ok": 1},
    "negative t": GOOD_REPLIES[0] | {"t": -1},
    "a card in an extra field": GOOD_REPLIES[0] | {"seat_cards": ["As", "Kd"]},
}


@pytest.mark.parametrize("payload", GOOD_REPLIES, ids=["ok", "refused", "unreadable"])
def test_good_replies_validate(payload: dict[str, Any]) -> None:
    validate(Message(REPLIES, payload))


@pytest.mark.parametrize("payload", BAD_REPLIES.values(), ids=BAD_REPLIES.keys())
def test_bad_replies_fail(payload: dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        validate(Message(REPLIES, payload))


def test_replies_are_never_retained() -> None:
    with pytest.raises(SchemaError, match="retain"):
        validate(Message(REPLIES, GOOD_REPLIES[0], retain=True))


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


@pytest.mark.system  # a real mosquitto and a started daemon
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


# Well-formed commands the engine must refuse on this table (9 seats, Alice on 1, Bruno on 2,
# not paused; the staff registry is the example's).
IMPOSSIBLE = [
    ("seat-taken", "seat", {"seat": 1, "player": "Zed", "stack": 500}, r"seat 1 is taken"),
    ("no-such-seat", "seat", {"seat": 10, "player": "Zed", "stack": 500}, r"no seat 10"),
    ("seat-no-stack", "seat", {"seat": 7, "player": "Zed", "stack": 0}, r"stack must be positive"),
    ("unseat-empty", "unseat", {"seat": 7}, r"seat 7 is empty"),
    ("big-blind-0", "level", {"small_blind": 0, "big_blind": 0, "ante": 0}, r"big_blind"),
    ("blinds-inverted", "level", {"small_blind": 400, "big_blind": 200, "ante": 0}, r"blind"),
    ("button-no-such-seat", "button", {"seat": 10}, r"no seat 10 at this table"),
    ("stack-empty-seat", "stack", {"seat": 7, "stack": 100}, r"seated player"),
    ("penalty-empty-seat", "penalty", {"seat": 7, "hands": 2}, r"seat 7 is empty"),
    ("penalty-no-such-seat", "penalty", {"seat": 10, "rounds": 1}, r"no seat 10"),
    ("away-empty-seat", "away", {"seat": 7}, r"seat 7 is empty"),
    ("resume-not-paused", "resume", {}, r"the table is not paused"),
    ("release-not-held", "release", {}, r"the table is not held by the room"),
    ("staff-remove-unknown", "staff", {"uid": "04DEADBEEF0001", "remove": True}, r"no staff"),
]


def test_every_room_command_has_an_impossible_case_or_none_exists() -> None:
    """Each command the engine can refuse has a case here (`pause` when paused: below)."""
    covered = {name for _case, name, _fields, _error in IMPOSSIBLE} | {"pause", "hold"}
    assert sorted(ROOM_COMMANDS - covered) == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("case", "name", "fields", "error"), IMPOSSIBLE, ids=[f"engine-{c[0]}" for c in IMPOSSIBLE]
)
@pytest.mark.system  # a real mosquitto and a started daemon
def test_impossible_command_gets_an_error_reply_and_changes_nothing(
    table: Table, case: str, name: str, fields: dict[str, Any], error: str
) -> None:
    request_id = f"imp-{case}"
    payload = raw({"name": name, **fields, "id": request_id})
    _check_refused(table, name, payload, error, request_id, "command_rejected")


@pytest.mark.system  # a real mosquitto and a started daemon
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


@pytest.mark.system  # a real mosquitto and a started daemon
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


@pytest.mark.system  # a real mosquitto and a started daemon
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


@pytest.mark.system  # a real mosquitto and a started daemon
@pytest.mark.timeout(60)
def test_a_command_without_id_is_answered_under_an_automatic_id(table: Table) -> None:
    reply = table.request("seat", raw({"seat": 3, "player": "Chiara", "stack": 5000}))
    assert reply["ok"] is True and reply["error"] is None
    assert reply["command"] == "seat" and reply["id"].startswith("auto-")
    assert table.wait_state(lambda s: s["seats"]["3"]["player"] == "Chiara")
    again = table.request("unseat", raw({"seat": 3}))
    assert again["ok"] is True and again["id"].startswith("auto-")
    assert again["id"] != reply["id"]


def _replies(messages: list[Message]) -> list[dict[str, Any]]:
    return [m.payload for m in messages if m.topic == REPLIES]


def test_a_request_id_is_applied_once_however_often_it_arrives() -> None:
    """The broker delivers a command again after a restart, and a room server sends it
    again when no reply came: the table applies it once and answers the repeats with the
    first answer, marked `duplicate`, whatever their content."""
    from controller.engine.checkpoint import checkpoint, restore
    from controller.replay import build_engine

    config = load_config(EXAMPLE)
    engine = build_engine(config)
    seat = {"seat": 3, "player": "Alice", "stack": 20000, "id": "r-7"}
    first = _replies(engine.apply(Command(0.0, "seat", seat)))
    assert first == [{**first[0], "ok": True, "error": None}] and "duplicate" not in first[0]
    again = engine.apply(Command(1.0, "seat", {**seat, "stack": 50000}))
    assert _replies(again) == [{**first[0], "t": 1.0, "duplicate": True}]
    assert [m for m in again if m.topic == STATE] == []  # nothing changed
    assert engine.seats[3].stack == 20000
    validate(Message(REPLIES, _replies(again)[0]))

    # A refusal is answered the same way again (it is not retried either).
    taken = {"seat": 3, "player": "Bruno", "stack": 100, "id": "r-8"}
    refused = _replies(engine.apply(Command(2.0, "seat", taken)))[0]
    assert refused["ok"] is False
    repeat = _replies(engine.apply(Command(3.0, "seat", taken)))[0]
    assert repeat == {**refused, "t": 3.0, "duplicate": True}

    # The memory survives a checkpoint (a rotation, or a restart from one).
    restored = build_engine(config)
    restore(restored, checkpoint(engine))
    assert _replies(restored.apply(Command(4.0, "seat", seat)))[0]["duplicate"] is True
    assert restored.seats[3].stack == 20000


@pytest.mark.system  # a real mosquitto and a started daemon
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
