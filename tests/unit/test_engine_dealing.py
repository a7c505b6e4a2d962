"""Engine, dealing: hand start (rule 23), card positions, hole cards, board, state, alerts."""

from __future__ import annotations

import re

from kernel.inputs import TagIn
from tests.engine_helpers import Table, ev, events_of, new_engine, public_text, run, seat_all

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
    table = Table(button=3)
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal({1: ["2h", "3h"], 2: ["4h", "5h"], 3: ["6h", "7h"]})
    table.push(3, 100)
    table.push(1, 50)
    table.button("check")
    start = len(table.out)
    for cards, burn in ((("Ah", "Kh", "Qh"), "2c"), (("Jh",), "3c"), (("Th",), "4c")):
        table.board(*cards, burn=burn)
        for _ in range(3):
            table.button("check")
    out = table.out[start:]
    dealt = events_of(out, "board_dealt")
    assert [(d["street"], d["cards"]) for d in dealt] == [
        ("flop", ["Ah", "Kh", "Qh"]),
        ("turn", ["Jh"]),
        ("river", ["Th"]),
    ]
    seqs = [e["seq"] for e in events_of(table.out)]
    assert seqs == list(range(1, len(seqs) + 1))
    assert not [a for a in table.alerts() if a["type"].startswith(("procedure", "burn"))]


def test_rule_35E_foreign_card_fouls_the_deck_and_returns_every_bet() -> None:
    class Deck:
        def card_of(self, uid: str) -> str | None:
            return {"04AA": "As"}.get(uid)

    table = Table(button=3)
    table.engine.deck = Deck()
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    out = table.do(TagIn(t=table.step(), antenna="seat1", uid="04FFFFFFFF"))
    alerts = [m.payload for m in out if m.topic == "alerts"]
    assert [a["type"] for a in alerts] == ["unknown_tag", "fouled_deck"]
    assert alerts[0]["uid"] == "04FFFFFFFF"
    fouled = events_of(out, "fouled_deck")[0]
    assert (fouled["reason"], fouled["rule"]) == ("foreign_card", "35E")
    assert events_of(out, "bets_returned")[0]["refunds"] == {"1": 50, "2": 100}
    assert table.stacks() == {1: 10_000, 2: 10_000, 3: 10_000}
    assert table.state["held"] == ["fouled_deck"] and table.state["hand"] is None
    # Held until the floor releases it: no new hand.
    out = table.shuffle()
    assert [m.payload["type"] for m in out if m.topic == "alerts"] == ["table_held"]


def test_rule_35E_same_card_at_two_seats_at_once_is_a_duplicate_without_leaking_it() -> None:
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
    assert events_of(out, "fouled_deck")[0]["reason"] == "duplicate_card"
    assert not [m for m in out if m.topic == "holecards"]
    assert not CARD.search(public_text(out))


def test_card_outside_hand_alerts_and_rule_35A3_card_to_empty_seat_is_a_misdeal() -> None:
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
    misdeal = events_of(out, "misdeal")[0]
    assert (misdeal["reason"], misdeal["rule"], misdeal["seat"]) == (
        "card_to_seat_not_entitled",
        "35A-3",
        7,
    )
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
