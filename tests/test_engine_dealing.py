"""Engine, dealing: hand start (rule 23), card positions, hole cards, board, state, alerts."""

from __future__ import annotations

import re

from controller.trace import TagIn
from tests.engine_helpers import ev, events_of, new_engine, public_text, run, seat_all

CARD = re.compile(r"\b[23456789TJQKA][cdhs]\b")


def _table(seats: range = range(1, 4)):  # type: ignore[no-untyped-def]
    engine = new_engine()
    run(engine, seat_all(seats))
    run(
        engine,
        [
            ev(event="command", name="level", small_blind=100, big_blind=200, ante=0),
            ev(event="command", name="button", seat=3),
        ],
    )
    return engine


def test_rule_23_shuffler_button_starts_the_hand() -> None:
    engine = _table()
    out = engine.apply(ev(t=1.0, event="button", name="shuffler"))
    started = events_of(out, "hand_started")
    assert len(started) == 1
    assert started[0]["button"] == 3
    assert started[0]["small_blind"] == 100 and started[0]["big_blind"] == 200
    assert started[0]["trigger"] == "shuffler"
    assert started[0]["seq"] == 1 and started[0]["hand"] == 1 and started[0]["t"] == 1.0
    assert engine.snapshot()["street"] == "preflop"


def test_rule_23_new_level_applies_from_next_hand() -> None:
    engine = _table()
    engine.apply(ev(t=1.0, event="button", name="shuffler"))
    engine.apply(ev(t=2.0, event="command", name="level", small_blind=200, big_blind=400, ante=50))
    assert engine.snapshot()["level"]["big_blind"] == 200  # the hand in progress keeps its level
    out = engine.apply(ev(t=3.0, event="button", name="shuffler"))
    assert events_of(out, "hand_completed")[0]["hand"] == 1
    started = events_of(out, "hand_started")[0]
    assert (started["small_blind"], started["big_blind"], started["ante"]) == (200, 400, 50)


def test_hole_cards_go_only_to_holecards_topic_the_moment_they_are_read() -> None:
    engine = _table()
    out = run(
        engine,
        [
            ev(t=1, event="button", name="shuffler"),
            ev(t=2, event="tag_in", antenna="seat1", card="As"),
        ],
    )
    hole = [m for m in out if m.topic == "holecards"]
    assert [m.payload["cards"] for m in hole] == [["As"]]
    assert hole[0].retain is False and hole[0].qos == 1
    out = engine.apply(ev(t=3, event="tag_in", antenna="seat1", card="Kd"))
    hole = [m for m in out if m.topic == "holecards"]
    assert hole[0].payload == {
        "table": "t01",
        "hand": 1,
        "seat": 1,
        "cards": ["As", "Kd"],
        "t": 3.0,
    }
    state = next(m for m in out if m.topic == "state")
    assert state.retain and state.payload["seats"]["1"]["cards"] == 2
    assert not CARD.search(public_text(out))


def test_board_dealt_flop_turn_river_in_order() -> None:
    engine = _table()
    run(engine, [ev(t=1, event="button", name="shuffler")])
    out = run(
        engine,
        [
            ev(t=2, event="tag_in", antenna="burn", card="2c"),
            ev(t=3, event="tag_in", antenna="board", card="Ah"),
            ev(t=3.1, event="tag_in", antenna="board", card="Kh"),
            ev(t=3.2, event="tag_in", antenna="board", card="Qh"),
            ev(t=4, event="tag_in", antenna="burn", card="3c"),
            ev(t=5, event="tag_in", antenna="board", card="Jh"),
            ev(t=6, event="tag_in", antenna="burn", card="4c"),
            ev(t=7, event="tag_in", antenna="board", card="Th"),
        ],
    )
    dealt = events_of(out, "board_dealt")
    assert [(d["street"], d["cards"]) for d in dealt] == [
        ("flop", ["Ah", "Kh", "Qh"]),
        ("turn", ["Jh"]),
        ("river", ["Th"]),
    ]
    seqs = [e["seq"] for e in events_of(out)]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
    assert engine.snapshot()["board"] == ["Ah", "Kh", "Qh", "Jh", "Th"]


def test_unknown_tag_raises_alert_and_changes_nothing() -> None:
    class Deck:
        def card_of(self, uid: str) -> str | None:
            return {"04AA": "As"}.get(uid)

    engine = _table()
    engine.deck = Deck()
    run(engine, [ev(t=1, event="button", name="shuffler")])
    before = engine.snapshot()
    out = engine.apply(TagIn(t=2, antenna="seat1", uid="04FFFFFFFF"))
    alerts = [m.payload for m in out if m.topic == "alerts"]
    assert [a["type"] for a in alerts] == ["unknown_tag"]
    assert alerts[0]["uid"] == "04FFFFFFFF"
    assert engine.snapshot()["seats"] == before["seats"]
    out = engine.apply(TagIn(t=3, antenna="seat1", uid="04AA"))
    assert [m.payload["cards"] for m in out if m.topic == "holecards"] == [["As"]]


def test_card_read_at_two_antennas_at_once_alerts_without_leaking_it() -> None:
    engine = _table()
    run(
        engine,
        [
            ev(t=1, event="button", name="shuffler"),
            ev(t=2, event="tag_in", antenna="seat1", card="As"),
        ],
    )
    out = engine.apply(ev(t=3, event="tag_in", antenna="seat2", card="As"))
    alerts = [m.payload for m in out if m.topic == "alerts"]
    assert alerts and alerts[0]["type"] == "card_at_two_antennas"
    assert alerts[0]["antennas"] == ["seat1", "seat2"]
    assert not [m for m in out if m.topic == "holecards"]
    assert not CARD.search(public_text(out))


def test_card_at_empty_seat_or_outside_hand_alerts() -> None:
    engine = _table(range(1, 3))
    out = engine.apply(ev(t=0.5, event="tag_in", antenna="seat1", card="As"))
    assert [m.payload["type"] for m in out if m.topic == "alerts"] == ["card_outside_hand"]
    run(
        engine,
        [
            ev(t=0.6, event="tag_out", antenna="seat1", card="As"),
            ev(t=1, event="button", name="shuffler"),
        ],
    )
    out = engine.apply(ev(t=2, event="tag_in", antenna="seat7", card="Kd"))
    assert [m.payload["type"] for m in out if m.topic == "alerts"] == ["card_to_seat_not_dealt_in"]
    assert not [m for m in out if m.topic == "holecards"]


def test_malformed_commands_are_refused_with_alert() -> None:
    engine = _table()
    out = run(
        engine,
        [
            ev(event="command", name="seat", seat=1, player="Zed", stack=100),
            ev(event="command", name="seat", seat=12, player="Zed", stack=100),
            ev(event="command", name="level", small_blind=300, big_blind=200, ante=0),
            ev(event="command", name="unseat", seat=8),
        ],
    )
    kinds = [m.payload["type"] for m in out if m.topic == "alerts"]
    assert kinds == ["command_rejected"] * 4
    assert engine.seats[1].player == "A"


def test_hand_needs_two_players() -> None:
    engine = new_engine()
    run(engine, seat_all([4]))
    out = engine.apply(ev(t=1, event="button", name="shuffler"))
    assert not events_of(out)
    assert [m.payload["type"] for m in out if m.topic == "alerts"] == ["hand_not_started"]


def test_state_is_retained_and_published_only_on_change() -> None:
    engine = _table()
    out = engine.apply(ev(t=1, event="tick"))
    assert not out
    out = engine.apply(ev(t=2, event="button", name="shuffler"))
    states = [m for m in out if m.topic == "state"]
    assert len(states) == 1 and states[0].retain and states[0].payload["hand"] == 1
    assert states[0].payload["seq"] == 1


def test_same_events_give_identical_messages() -> None:
    script = [
        *seat_all(range(1, 7)),
        ev(event="command", name="level", small_blind=50, big_blind=100, ante=0),
        ev(t=1, event="button", name="shuffler"),
        ev(t=2, event="tag_in", antenna="seat2", card="7h"),
        ev(t=3, event="tag_in", antenna="board", card="7d"),
    ]
    a = [m.to_line("p") for m in run(new_engine(), script)]
    b = [m.to_line("p") for m in run(new_engine(), script)]
    assert a == b and a
