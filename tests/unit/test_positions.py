"""Button and blinds: dead button (rule 32), heads-up (rule 34), new players (rules 8, 10)."""

from __future__ import annotations

from controller.engine.positions import (
    Positions,
    fresh_positions,
    next_positions,
    waits_for_button,
)
from tests.engine_helpers import ev, events_of, new_engine, run, seat_all


def test_fresh_positions_blinds_follow_button() -> None:
    pos = fresh_positions(9, [1, 3, 5, 9], 9)
    assert (pos.button, pos.small_blind, pos.big_blind) == (9, 1, 3)


def test_rule_32_dead_button_big_blind_always_moves_one_player() -> None:
    prev = Positions(button=2, sb_position=3, small_blind=3, big_blind=4, heads_up=False)
    # The small blind (seat 3) busted: big blind moves on to 5, seat 4 posts the small
    # blind and the button goes to the empty seat 3 (dead button).
    pos = next_positions(prev, [2, 4, 5, 6], 9)
    assert (pos.button, pos.small_blind, pos.big_blind) == (3, 4, 5)


def test_rule_32_dead_small_blind_when_big_blind_busted() -> None:
    prev = Positions(button=2, sb_position=3, small_blind=3, big_blind=4, heads_up=False)
    pos = next_positions(prev, [2, 3, 5, 6], 9)  # seat 4 (last BB) is gone
    assert pos.big_blind == 5
    assert pos.sb_position == 4 and pos.small_blind is None  # dead small blind
    assert pos.button == 3


def test_rule_34_heads_up_button_posts_small_blind() -> None:
    pos = fresh_positions(4, [4, 7], 9)
    assert (pos.button, pos.small_blind, pos.big_blind, pos.heads_up) == (4, 4, 7, True)


def test_rule_34_going_heads_up_nobody_gets_big_blind_twice() -> None:
    prev = Positions(button=1, sb_position=2, small_blind=2, big_blind=3, heads_up=False)
    pos = next_positions(prev, [1, 3], 9)  # seat 2 busted
    assert pos.big_blind == 1  # seat 3 was big blind, now it is seat 1's turn
    assert pos.button == pos.small_blind == 3


def test_rule_8_new_player_between_small_blind_and_button_waits() -> None:
    pos = Positions(button=3, sb_position=5, small_blind=5, big_blind=6, heads_up=False)
    assert waits_for_button(4, pos, 9)
    assert not waits_for_button(5, pos, 9)
    assert not waits_for_button(3, pos, 9)  # the button seat itself is dealt in
    assert not waits_for_button(7, pos, 9)


def test_rule_10_new_player_from_broken_table_dealt_in_except_between() -> None:
    engine = new_engine()
    run(
        engine,
        [
            *seat_all([1, 3, 6]),
            ev(event="command", name="button", seat=1),
            ev(event="command", name="level", small_blind=50, big_blind=100, ante=0),
        ],
    )
    first = events_of(engine.apply(ev(t=1, event="button", name="shuffler")), "hand_started")[0]
    assert (first["button"], first["small_blind_seat"], first["big_blind_seat"]) == (1, 3, 6)
    # Two players arrive. Next hand the (dead) button is seat 3 and the small blind seat 6,
    # so seat 5 is between them and waits; seat 7 is dealt in and may take the big blind.
    run(
        engine,
        [
            ev(t=2, event="command", name="seat", seat=5, player="New", stack=5000),
            ev(t=2, event="command", name="seat", seat=7, player="Big", stack=5000),
        ],
    )
    second = events_of(engine.apply(ev(t=3, event="button", name="shuffler")), "hand_started")[0]
    assert second["big_blind_seat"] == 7  # the newcomer in seat 7 may take the big blind
    assert second["button"] == 3 and second["small_blind_seat"] == 6
    assert 7 in second["seats"] and 5 not in second["seats"]
    third = events_of(engine.apply(ev(t=4, event="button", name="shuffler")), "hand_started")[0]
    assert third["button"] == 6 and 5 in third["seats"]  # the button passed: seat 5 plays
