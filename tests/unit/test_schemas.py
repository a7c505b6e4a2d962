"""The JSON Schemas of the MQTT payloads: valid schemas, good examples pass, bad ones fail."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from controller.schema import SCHEMA_FILES, SchemaError, load_schema, validate, validate_payload
from kernel.messages import ALERTS, EVENTS, HOLECARDS, STATE, STATUS, Message

jsonschema = pytest.importorskip("jsonschema")


def base_event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "seq": 7, "hand": 12, "t": 31.5, "table": "t01", **fields}


GOOD_EVENTS = [
    base_event(
        "hand_started", button=9, small_blind=100, big_blind=200, ante=0, trigger="shuffler"
    ),
    base_event("board_dealt", street="flop", cards=["As", "Kd", "7c"]),
    base_event("board_dealt", street="river", cards=["2h"]),
    base_event("action", seat=3, action="raise", amount=600, rule=None),
    base_event("action", seat=4, action="call", amount=600, rule="43"),
    base_event("misdeal", reason="two boxed cards", rule="35A-2"),
    base_event("four_card_flop", cards=["As", "Kd", "7c", "2h"], rule="39"),
    base_event("premature_card", street="turn", cards=["Qs"], rule="RP-5B"),
    base_event("pot_awarded", pot=0, amount=1200, winners=[3, 4], shares={"3": 600, "4": 600}),
    base_event("hand_completed", stacks={"3": 20600, "4": 19400}),
    {**base_event("hand_completed", stacks={}), "hand": None, "extra_field": {"new": 1}},
    base_event(
        "dealer_changed", dealer={"uid": "04A1B2C3D4E5F6", "name": "Maria Rossi"}, previous=None
    ),
    base_event("table_resumed"),  # new types may be added
]

BAD_EVENTS = {
    "missing seq": {
        k: v for k, v in base_event("misdeal", reason="x", rule="35A-2").items() if k != "seq"
    },
    "seq zero": base_event("misdeal", reason="x", rule="35A-2") | {"seq": 0},
    "seq not int": base_event("misdeal", reason="x", rule="35A-2") | {"seq": 1.5},
    "no table": {k: v for k, v in base_event("hand_completed", stacks={}).items() if k != "table"},
    "hand_started without trigger": base_event(
        "hand_started", button=9, small_blind=100, big_blind=200, ante=0
    ),
    "board street preflop": base_event("board_dealt", street="preflop", cards=["As"]),
    "bad card": base_event("board_dealt", street="turn", cards=["1s"]),
    "lowercase rank": base_event("board_dealt", street="turn", cards=["ks"]),
    "unknown action": base_event("action", seat=3, action="limp", amount=1, rule=None),
    "action without rule": base_event("action", seat=3, action="call", amount=200),
    "negative amount": base_event("action", seat=3, action="bet", amount=-5, rule=None),
    "hole card on an action": base_event(
        "action", seat=3, action="fold", amount=0, rule=None, cards=["As", "Kd"]
    ),
    "hole card in a new field": base_event(
        "action", seat=3, action="fold", amount=0, rule=None, mucked={"3": ["As", "Kd"]}
    ),
    "four card flop with three": base_event("four_card_flop", cards=["As", "Kd", "7c"], rule="39"),
    "pot without winners": base_event("pot_awarded", pot=0, amount=1, winners=[], shares={}),
    "stacks bad seat": base_event("hand_completed", stacks={"seat3": 100}),
}

GOOD_STATE: dict[str, Any] = {
    "table": "t01",
    "room": "r1",
    "seq": 42,
    "t": 88.25,
    "hand": 12,
    "street": "turn",
    "button": 9,
    "level": {"small_blind": 100, "big_blind": 200, "ante": 25},
    "board": ["As", "Kd", "7c", "2h"],
    "pots": [{"amount": 1200, "eligible": [3, 4]}, {"amount": 300, "eligible": [4]}],
    "to_act": 4,
    "seats": {
        "1": {"player": None, "stack": 0, "bet": 0, "status": "empty", "cards": 0},
        "3": {
            "player": "Alice",
            "stack": 0,
            "bet": 0,
            "status": "allin",
            "cards": 2,
            "shown": ["Qs", "Qh"],
        },
        "4": {"player": "Bob", "stack": 18800, "bet": 400, "status": "active", "cards": 2},
    },
}


def bad_state(**changes: Any) -> dict[str, Any]:
    state = copy.deepcopy(GOOD_STATE)
    for path, value in changes.items():
        target = state
        *parents, last = path.split("__")
        for p in parents:
            target = target[p]
        if value is ...:
            del target[last]
        else:
            target[last] = value
    return state


BAD_STATES = {
    "face-down cards listed": bad_state(seats__4__cards=["As", "Kd"]),
    "hole cards in an extra seat field": bad_state(seats__4__hole=["As", "Kd"]),
    "hole cards at top level": bad_state(holecards={"4": ["As", "Kd"]}),
    "bad shown card": bad_state(seats__3__shown=["Qx"]),
    "unknown seat status": bad_state(seats__4__status="sitting"),
    "seat key not a seat": bad_state(
        seats__x={"player": None, "stack": 0, "bet": 0, "status": "empty", "cards": 0}
    ),
    "missing seq": bad_state(seq=...),
    "missing level ante": bad_state(level__ante=...),
    "unknown street": bad_state(street="fourth"),
    "board of six": bad_state(board=["As", "Kd", "7c", "2h", "3d", "4d"]),
}

GOOD_STATUS = {"state": "online", "table": "t01", "room": "r1", "version": "0.1.0", "t": 1.7e9}
GOOD_HOLECARDS = {"table": "t01", "hand": 12, "seat": 3, "cards": ["As", "Kd"], "t": 2.5}
GOOD_ALERT = {
    "table": "t01",
    "type": "floor_called",
    "severity": "warning",
    "message": "floor called to seat 3",
    "hand": 12,
    "t": 9.0,
    "seat": 3,
}


def test_every_schema_is_a_valid_draft_2020_12_schema() -> None:
    for name in SCHEMA_FILES:
        schema = load_schema(name)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("payload", GOOD_EVENTS, ids=lambda p: p["type"])
def test_good_events_validate(payload: dict[str, Any]) -> None:
    validate(Message(EVENTS, payload))


@pytest.mark.parametrize("payload", BAD_EVENTS.values(), ids=BAD_EVENTS.keys())
def test_bad_events_fail(payload: dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        validate(Message(EVENTS, payload))


def test_good_state_status_holecards_alerts_validate() -> None:
    validate(Message(STATE, GOOD_STATE, retain=True))
    validate(
        Message(
            STATE, bad_state(hand=None, street=None, to_act=None, board=[], pots=[]), retain=True
        )
    )
    validate(Message(STATUS, GOOD_STATUS, retain=True))
    validate(Message(STATUS, GOOD_STATUS | {"state": "offline"}, retain=True))
    validate(Message(HOLECARDS, GOOD_HOLECARDS))
    validate(Message(ALERTS, GOOD_ALERT))
    validate(Message(ALERTS, GOOD_ALERT | {"hand": None, "severity": "critical"}))


@pytest.mark.parametrize("payload", BAD_STATES.values(), ids=BAD_STATES.keys())
def test_bad_states_fail(payload: dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        validate(Message(STATE, payload, retain=True))


@pytest.mark.parametrize(
    ("topic", "payload"),
    [
        (STATUS, GOOD_STATUS | {"state": "away"}),
        (STATUS, {k: v for k, v in GOOD_STATUS.items() if k != "version"}),
        (HOLECARDS, GOOD_HOLECARDS | {"cards": ["AK"]}),
        (HOLECARDS, GOOD_HOLECARDS | {"hand": None}),
        (HOLECARDS, {k: v for k, v in GOOD_HOLECARDS.items() if k != "seat"}),
        (ALERTS, GOOD_ALERT | {"severity": "fatal"}),
        (ALERTS, GOOD_ALERT | {"cards": ["As"]}),
        (ALERTS, {k: v for k, v in GOOD_ALERT.items() if k != "message"}),
    ],
)
def test_bad_other_payloads_fail(topic: str, payload: dict[str, Any]) -> None:
    with pytest.raises(SchemaError):
        validate(Message(topic, payload, retain=topic == STATUS))


def test_qos_and_retain_are_checked_per_topic() -> None:
    with pytest.raises(SchemaError, match="retain"):
        validate(Message(HOLECARDS, GOOD_HOLECARDS, retain=True))
    with pytest.raises(SchemaError, match="retain"):
        validate(Message(STATE, GOOD_STATE, retain=False))
    with pytest.raises(SchemaError, match="qos"):
        validate(Message(EVENTS, GOOD_EVENTS[0], qos=0))
    with pytest.raises(SchemaError, match="unknown topic"):
        validate(Message("chat", {}))


def test_commands() -> None:
    seat = {"name": "seat", "seat": 3, "player": "Alice", "stack": 20000}
    validate(Message("cmd/seat", seat))
    validate(
        Message("cmd/level", {"name": "level", "small_blind": 100, "big_blind": 200, "ante": 0})
    )
    validate_payload("command.json", {"name": "button", "seat": 9})
    for bad in (
        {"name": "seat", "seat": 3, "player": "Alice"},
        seat | {"t": 0.0, "event": "command"},
        {"name": "unseat", "seat": 0},
    ):
        with pytest.raises(SchemaError):
            validate_payload("command.json", bad)
    with pytest.raises(SchemaError, match="differs"):
        validate(Message("cmd/unseat", seat))


def test_error_message_names_the_field() -> None:
    with pytest.raises(SchemaError, match=r"seats/4/cards"):
        validate(Message(STATE, BAD_STATES["face-down cards listed"], retain=True))
