"""Room commands: parse_room_command refuses every malformed kind with a clear message, and a
request id is applied once (through a daemon and a broker: tests/system/test_commands_daemon.py)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.commands import (
    MAX_PAYLOAD,
    ROOM_COMMANDS,
    UNKNOWN_COMMAND,
    CommandError,
    command_label,
    parse_room_command,
)
from controller.config import load_config
from controller.schema import SchemaError, validate
from kernel.errors import TraceError
from kernel.inputs import Command
from kernel.messages import REPLIES, STATE, Message
from tests.command_cases import IMPOSSIBLE, MALFORMED, Bad, raw

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"
STAFF = ROOT / "examples" / "staff" / "sim-staff.toml"
PREFIX = "poker/sim/t01"


def counter() -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"auto-{next(numbers)}"


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


def test_every_room_command_has_an_impossible_case_or_none_exists() -> None:
    """Each command the engine can refuse has a case here (`pause` when paused: below)."""
    covered = {name for _case, name, _fields, _error in IMPOSSIBLE} | {"pause", "hold"}
    assert sorted(ROOM_COMMANDS - covered) == []


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
