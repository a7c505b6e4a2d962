"""Trace lines (docs/trace-format.md): each kind parses to its event and back, bad lines say why."""

from __future__ import annotations

import json
from typing import Any

import pytest

from controller.trace import event_to_dict, event_to_json, parse_event, parse_line
from kernel.errors import TraceError
from kernel.inputs import Badge, ButtonPress, Command, Device, TagIn, TagOut, Tick

GOOD: list[tuple[dict[str, Any], object]] = [
    ({"t": 6.0, "event": "tick"}, Tick(6.0)),
    ({"t": 1.5, "event": "tag_in", "antenna": "seat1", "card": "As"}, TagIn(1.5, "seat1", "As")),
    (
        {"t": 3.0, "event": "tag_out", "antenna": "bet4", "chip": "c0017", "value": 500},
        TagOut(3.0, "bet4", chip="c0017", value=500),
    ),
    ({"t": 2.0, "event": "tag_in", "antenna": "pot", "uid": "04AB"}, TagIn(2.0, "pot", uid="04AB")),
    ({"t": 1.0, "event": "button", "name": "shuffler"}, ButtonPress(1.0, "shuffler")),
    ({"t": 3.2, "event": "button", "name": "allin", "seat": 4}, ButtonPress(3.2, "allin", 4)),
    ({"t": 5.0, "event": "badge", "uid": "04A1B2C3D4E5F6"}, Badge(5.0, "04A1B2C3D4E5F6")),
    ({"t": 5.5, "event": "badge", "uid": "04a1", "removed": True}, Badge(5.5, "04A1", True)),
    (
        {"t": 7.0, "event": "device", "name": "chip_reader", "state": "offline"},
        Device(7.0, "chip_reader", "offline"),
    ),
    (
        {"t": 0.0, "event": "command", "name": "seat", "seat": 3, "player": "Alice", "stack": 2000},
        Command(0.0, "seat", {"seat": 3, "player": "Alice", "stack": 2000}),
    ),
    (
        {
            "t": 0.0,
            "event": "command",
            "name": "level",
            "small_blind": 100,
            "big_blind": 200,
            "ante": 0,
            "bb_ante": True,
            "announced": 1.5,
            "id": "r1",
        },
        Command(
            0.0,
            "level",
            {
                "small_blind": 100,
                "big_blind": 200,
                "ante": 0,
                "bb_ante": True,
                "announced": 1.5,
                "id": "r1",
            },
        ),
    ),
    (
        {
            "t": 0.0,
            "event": "command",
            "name": "staff",
            "uid": "04ab",
            "person": "Ada",
            "role": "floor",
        },
        Command(0.0, "staff", {"uid": "04AB", "person": "Ada", "role": "floor"}),
    ),
    (
        {
            "t": 0.0,
            "event": "command",
            "name": "draw",
            "purpose": "four_card_flop",
            "pick": 2,
            "of": 4,
        },
        Command(0.0, "draw", {"purpose": "four_card_flop", "pick": 2, "of": 4}),
    ),
]


@pytest.mark.parametrize(("line", "event"), GOOD, ids=[g[0]["event"] for g in GOOD])
def test_each_kind_parses_to_its_event_and_back(line: dict[str, Any], event: object) -> None:
    parsed = parse_event(line)
    assert parsed == event
    assert parse_event(event_to_dict(parsed)) == parsed
    assert parse_line(event_to_json(parsed)) == parsed


def test_command_arguments_keep_required_then_optional_order() -> None:
    """The journal writes args in this order: replays compare bytes, so the order is fixed."""
    line = {
        "id": "r9",
        "announced": 2.0,
        "ante": 0,
        "t": 1.0,
        "event": "command",
        "name": "level",
        "big_blind": 200,
        "small_blind": 100,
    }
    assert list(parse_event(line).args) == [  # type: ignore[union-attr]
        "small_blind",
        "big_blind",
        "ante",
        "announced",
        "id",
    ]


BAD: list[tuple[object, str]] = [
    ([1, 2], "a trace line must be a JSON object, got list"),
    ({"event": "tick"}, "field 't' must be a finite number, got None"),
    ({"t": -1, "event": "tick"}, "'t' must not be negative, got -1.0"),
    ({"t": 0, "event": "nope"}, "unknown event kind 'nope'"),
    ({"t": 0, "event": ["tick"]}, "unknown event kind ['tick']"),
    ({"t": 0}, "unknown event kind None"),
    ({"t": 0, "event": "tag_in", "antenna": "seat11", "card": "As"}, "unknown antenna 'seat11'"),
    ({"t": 0, "event": "tag_in", "antenna": "seat1", "card": "1x"}, "bad card name '1x'"),
    ({"t": 0, "event": "tag_in", "antenna": "bet1", "chip": "c1"}, "a chip needs its 'value'"),
    (
        {"t": 0, "event": "tag_out", "antenna": "bet1", "chip": "c1", "value": 0},
        "chip value must be positive, got 0",
    ),
    (
        {"t": 0, "event": "tag_in", "antenna": "seat1", "card": "As", "uid": "04"},
        "exactly one of 'card', 'chip' or 'uid'",
    ),
    ({"t": 0, "event": "button", "name": "eject"}, "unknown button 'eject'"),
    ({"t": 0, "event": "button", "name": "allin"}, "field 'seat' must be an integer, got None"),
    ({"t": 0, "event": "badge", "uid": "zz"}, "badge uid must be hex digits, got 'zz'"),
    ({"t": 0, "event": "badge", "uid": "04", "removed": 1}, "'removed' must be true or false"),
    ({"t": 0, "event": "device", "name": "lamp", "state": "online"}, "unknown device 'lamp'"),
    (
        {"t": 0, "event": "device", "name": "card_reader", "state": "dead"},
        "device state must be 'offline' or 'online', got 'dead'",
    ),
    ({"t": 0, "event": "command", "name": "eject"}, "unknown command 'eject'"),
    ({"t": 0, "event": "command", "name": "unseat"}, "field 'seat' must be an integer"),
    ({"t": 0, "event": "command", "name": "unseat", "seat": 1, "vip": 1}, "has no field 'vip'"),
    (
        {"t": 0, "event": "command", "name": "away", "seat": 1, "away": "yes"},
        "field 'away' must be true or false",
    ),
    (
        {
            "t": 0,
            "event": "command",
            "name": "level",
            "small_blind": 1,
            "big_blind": 2,
            "ante": 0,
            "announced": "soon",
        },
        "field 'announced' must be a finite number",
    ),
    (
        {"t": 0, "event": "command", "name": "staff", "uid": "04", "remove": True, "role": "floor"},
        "a staff removal takes only 'uid'",
    ),
    (
        {"t": 0, "event": "command", "name": "staff", "uid": "04", "person": "Ada"},
        "a staff entry needs 'person' and 'role'",
    ),
    (
        {"t": 0, "event": "command", "name": "staff", "uid": "04", "person": "A", "role": "boss"},
        "staff role must be 'dealer' or 'floor', got 'boss'",
    ),
    (
        {"t": 0, "event": "command", "name": "penalty", "seat": 1, "hands": 1, "rounds": 1},
        "exactly one of 'hands' or 'rounds'",
    ),
    (
        {"t": 0, "event": "command", "name": "penalty", "seat": 1, "hands": 0},
        "at least one hand or one round",
    ),
    (
        {"t": 0, "event": "command", "name": "draw", "purpose": "x", "pick": 4, "of": 4},
        "draw pick 4 is not in 0..3",
    ),
]


@pytest.mark.parametrize(("line", "message"), BAD, ids=[b[1][:40] for b in BAD])
def test_a_bad_line_is_refused_saying_why(line: object, message: str) -> None:
    with pytest.raises(TraceError) as caught:
        parse_event(line)
    assert message in str(caught.value)


def test_a_line_that_is_not_json_says_where() -> None:
    with pytest.raises(TraceError, match=r"not JSON: .* at column"):
        parse_line('{"t": 0, "event": ')
    assert parse_line(json.dumps({"t": 0, "event": "tick"})) == Tick(0.0)


def test_each_input_type_has_one_home_in_kernel_inputs() -> None:
    """The input types are imported from `kernel.inputs`, never through `controller.trace`."""
    import ast
    from pathlib import Path

    import controller.trace
    import kernel.inputs

    root = Path(__file__).resolve().parents[2]
    defined = {n for n in vars(kernel.inputs) if not n.startswith("_")}
    assert not set(controller.trace.__all__) & defined
    wrong = []
    folders = ("bench", "broadcast", "controller", "drivers", "firmware_sim", "sim", "room")
    folders += ("tests",)
    for folder in folders:
        for path in (root / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom) and node.module == "controller.trace":
                    wrong += [f"{path}: {a.name}" for a in node.names if a.name in defined]
    assert wrong == []
