"""Seats, balancing, breaking and the final table against the rule texts: TDA 2019 rules 7, 8-A,
10 (and its addendum's 2-step process), 11-A, 11-C, 11-D, RP-9; Casinò di Venezia tournament
rules art. 4, 5, 6; Casinos Austria tournament rules art. 6, 22, 35, 37, 39, 40."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from controller.engine.positions import Positions
from kernel.errors import ConfigError
from room.tournament import seating
from room.tournament.house import CASINOS_AUSTRIA, TDA_2019, VENEZIA, final_table_size
from room.tournament.seating import TableSeats


def table(name: str, players: dict[int, str], pos: Positions | None, n: int = 9) -> TableSeats:
    return TableSeats(name, players, pos, n)


def full(name: str, seats: list[int]) -> dict[int, str]:
    return {s: f"{name}-{s}" for s in seats}


# A 9-seat table that just played a hand with the button on 4, blinds 5 and 6.
LAST = Positions(button=4, sb_position=5, small_blind=5, big_blind=6, heads_up=False)


def test_rule_11A_the_player_to_be_big_blind_next_moves() -> None:
    t = table("t01", full("t01", [1, 2, 3, 4, 5, 6, 7, 8, 9]), LAST)
    assert seating.mover(t, TDA_2019) == 7  # the big blind moves from 6 to 7 next hand


def test_rule_11A_big_blind_next_skips_an_empty_seat() -> None:
    t = table("t01", full("t01", [1, 2, 3, 4, 5, 6, 8, 9]), LAST)
    assert seating.mover(t, TDA_2019) == 8


def test_venezia_art_5_the_player_in_the_big_blind_moves() -> None:
    t = table("t01", full("t01", [1, 2, 3, 4, 5, 6, 7, 8, 9]), LAST)
    assert seating.mover(t, VENEZIA) == 6  # "dalla posizione di big blind"
    gone = table("t01", full("t01", [1, 2, 3, 4, 5, 7, 8, 9]), LAST)  # the big blind is out
    assert seating.mover(gone, VENEZIA) == 7


def test_casinos_austria_art_22_the_big_blind_of_the_next_hand_moves() -> None:
    t = table("t01", full("t01", [1, 2, 3, 4, 5, 6, 7, 8, 9]), LAST)
    assert seating.mover(t, CASINOS_AUSTRIA) == 7


def test_rule_11A_worst_position_is_a_single_big_blind_if_available() -> None:
    # Seats 7 and 8 empty: a newcomer in 7 is big blind on the very next hand (a single big
    # blind: seat 6 posts the small blind), the worst position there is.
    t = table("t02", full("t02", [1, 2, 3, 4, 5, 6, 9]), LAST)
    assert seating.hands_until_big_blind(t, 7) == 1
    assert seating.worst_seat(t, random.Random(0)) == 7


def test_rule_11A_worst_position_is_never_the_small_blind() -> None:
    # The last big blind (seat 6) busted: his seat is where the small blind goes next hand.
    t = table("t02", full("t02", [1, 2, 3, 4, 5, 9]), LAST)
    assert seating.hands_until_big_blind(t, 6) is None  # small blind next: never the worst
    assert seating.worst_seat(t, random.Random(0)) == 7


def test_rule_11A_worst_position_when_no_seat_is_big_blind_next() -> None:
    # Only seats 2 and 3 are empty, far from the blinds: seat 7 is big blind next, then 8, 9,
    # 1; a newcomer in either would post it fifth. The lower seat is taken (no rule says).
    t = table("t02", full("t02", [1, 4, 5, 6, 7, 8, 9]), LAST)
    ranked = {s: seating.hands_until_big_blind(t, s) for s in t.empty()}
    assert ranked == {2: 5, 3: 5}
    assert seating.worst_seat(t, random.Random(0)) == 2


def test_rule_10_and_8A_a_newcomer_between_button_and_small_blind_waits() -> None:
    # The engine's own rule: not dealt in between the button and the small blind.
    from controller.engine.positions import waits_for_button

    nxt = Positions(button=5, sb_position=6, small_blind=6, big_blind=7, heads_up=False)
    assert not waits_for_button(5, nxt, 9)
    spread = Positions(button=2, sb_position=5, small_blind=5, big_blind=6, heads_up=False)
    assert waits_for_button(3, spread, 9) and waits_for_button(4, spread, 9)


def tables_of(counts: dict[str, int]) -> list[TableSeats]:
    return [table(n, full(n, list(range(1, c + 1))), LAST) for n, c in counts.items()]


def test_rule_11C_the_player_comes_from_the_fullest_table_in_the_predetermined_order() -> None:
    order = ["t03", "t02", "t01"]  # the break order is the predetermined order
    tables = tables_of({"t01": 9, "t02": 9, "t03": 7})
    assert seating.balance_move(tables, TDA_2019, seats_per_table=9, difference=2, order=order) == (
        "t02",
        "t03",
    )
    tables = tables_of({"t01": 8, "t02": 8, "t03": 8})
    assert (
        seating.balance_move(tables, TDA_2019, seats_per_table=9, difference=2, order=order) is None
    )


def test_rule_11D_tables_three_short_of_the_fullest_halt() -> None:
    tables = tables_of({"t01": 9, "t02": 7, "t03": 6})
    assert seating.halted(tables, TDA_2019) == ["t03"]
    assert seating.halted(tables_of({"t01": 9, "t02": 7}), TDA_2019) == []


def test_casinos_austria_has_no_halting_of_short_tables() -> None:
    assert seating.halted(tables_of({"t01": 9, "t02": 5}), CASINOS_AUSTRIA) == []


def test_venezia_art_5_balances_a_table_three_below_the_event_table_size() -> None:
    order = ["t02", "t01"]
    # TDA would balance 9 against 7; Venezia waits until a table is 3 below 9 (six players).
    assert (
        seating.balance_move(
            tables_of({"t01": 9, "t02": 7}), VENEZIA, seats_per_table=9, difference=2, order=order
        )
        is None
    )
    assert seating.balance_move(
        tables_of({"t01": 9, "t02": 7}), TDA_2019, seats_per_table=9, difference=2, order=order
    ) == ("t01", "t02")
    assert seating.balance_move(
        tables_of({"t01": 9, "t02": 6}), VENEZIA, seats_per_table=9, difference=2, order=order
    ) == ("t01", "t02")


def test_rule_10_two_step_draw_the_highest_card_takes_the_first_seat_card() -> None:
    draw = seating.two_step_draw(
        ["A", "B", "C"], [("t01", 3), ("t02", 7), ("t01", 8)], random.Random(4), "10"
    )
    by_card = sorted(draw.cards, key=lambda p: -seating.card_order(draw.cards[p]))
    assert [draw.seats[p] for p in by_card] == draw.seat_cards  # highest card, first card
    assert sorted(draw.seat_cards) == [("t01", 3), ("t01", 8), ("t02", 7)]
    assert len(set(draw.cards.values())) == 3


def test_rule_10_by_suit_a_spade_beats_a_heart_of_the_same_rank() -> None:
    assert seating.card_order("As") > seating.card_order("Ah") > seating.card_order("Kd")
    assert seating.card_order("2c") == 0


def test_rule_10_broken_table_players_go_where_the_tables_stay_balanced() -> None:
    tables = tables_of({"t01": 7, "t02": 5, "t03": 6})
    draw = seating.draw_seats(
        [f"p{i}" for i in range(6)], tables, TDA_2019, random.Random(1), two_step=True, rule="10"
    )
    got = Counter(t for t, _s in draw.seats.values())
    assert {n: c + got.get(n, 0) for n, c in {"t01": 7, "t02": 5, "t03": 6}.items()} == {
        "t01": 8,
        "t02": 8,
        "t03": 8,
    }
    assert draw.cards and draw.rule == "10"


def test_rule_7_seats_are_drawn_at_random() -> None:
    players = [f"p{i}" for i in range(18)]
    tables = [table(n, {}, None) for n in ("t01", "t02")]
    a = seating.draw_seats(players, tables, TDA_2019, random.Random(1), two_step=False, rule="7")
    b = seating.draw_seats(players, tables, TDA_2019, random.Random(2), two_step=False, rule="7")
    assert a.seats != b.seats
    assert Counter(t for t, _s in a.seats.values()) == {"t01": 9, "t02": 9}
    assert len(set(a.seats.values())) == 18


def test_rule_11C_and_casinos_austria_art_39_the_table_to_break() -> None:
    order = ["t04", "t03", "t02", "t01"]  # the highest number first (Casinos Austria art. 39)
    tables = tables_of({"t01": 6, "t02": 6, "t03": 5, "t04": 5})
    assert seating.table_to_break(tables, order, "t01", 9) == "t04"  # 22 players fit at 3
    tables = tables_of({"t01": 9, "t02": 9, "t03": 9, "t04": 1})
    assert seating.table_to_break(tables, order, "t01", 9) is None  # 28 do not


def test_rule_RP9_and_the_houses_final_table_sizes() -> None:
    assert final_table_size(TDA_2019, 9, None) == 9
    assert final_table_size(TDA_2019, 8, None) == 9
    assert final_table_size(TDA_2019, 6, None) == 7
    assert final_table_size(CASINOS_AUSTRIA, 9, None) == 10  # art. 40: a full table plus one
    assert final_table_size(CASINOS_AUSTRIA, 6, None) == 7
    assert final_table_size(CASINOS_AUSTRIA, 10, None) == 10  # never more than ten
    assert final_table_size(VENEZIA, 9, None) == 9  # art. 6: as the event says
    assert final_table_size(VENEZIA, 9, 10) == 10


def test_casinos_austria_art_37_final_table_draw_by_positions() -> None:
    # The last two tables, five players each, the button of the last hand on 4 and 2.
    a = table("t01", full("a", [1, 2, 3, 4, 5]), Positions(4, 5, 5, 1, False))
    b = table("t02", full("b", [1, 2, 3, 5, 6]), Positions(2, 3, 3, 5, False))
    draw, button = seating.final_table_draw([a, b], 10, "t01", CASINOS_AUSTRIA, random.Random(3))
    assert button == 10  # the button on the last seat
    seat = {p: s for p, (_t, s) in draw.seats.items()}
    # Next hand at t01: button 5, small blind 1, big blind 2; at t02: button 3, 5, 6.
    assert {seat["a-2"], seat["b-6"]} == {2, 3}  # big blind next: big blind and UTG
    assert {seat["a-5"], seat["b-3"]} == {10, 9}  # button next: button and cutoff
    assert {seat["a-1"], seat["b-5"]} == {1, 7}  # small blind next: seats 1 and 7
    assert sorted(seat.values()) == list(range(1, 11))


def test_rule_7_final_table_draw_is_random_with_a_random_button() -> None:
    a = table("t01", full("a", [1, 2, 3, 4]), LAST)
    b = table("t02", full("b", [1, 2, 3, 4, 5]), LAST)
    draw, button = seating.final_table_draw([a, b], 9, "t01", TDA_2019, random.Random(5))
    assert sorted(s for _t, s in draw.seats.values()) == list(range(1, 10))
    assert 1 <= button <= 9


def test_casinos_austria_art_6_one_button_seat_for_every_table() -> None:
    tables = tables_of({"t01": 9, "t02": 9, "t03": 8})
    seats = seating.button_draws(tables, CASINOS_AUSTRIA, random.Random(2))
    assert len(set(seats.values())) == 1 and set(seats) == {"t01", "t02", "t03"}
    drawn = [seating.button_draws(tables, TDA_2019, random.Random(k)) for k in range(6)]
    assert any(len(set(d.values())) > 1 for d in drawn)  # TDA: each table its own draw


@pytest.mark.parametrize("house", [TDA_2019, VENEZIA, CASINOS_AUSTRIA], ids=lambda h: h.name)
def test_rule_8A_late_seats_come_from_the_tables_with_the_fewest_players(house: object) -> None:
    tables = tables_of({"t01": 9, "t02": 7, "t03": 8})
    fewest = min(t.count for t in tables if t.empty())
    pool = [(t.table, s) for t in tables if t.count == fewest for s in t.empty()]
    assert {t for t, _s in pool} == {"t02"}


@pytest.mark.parametrize("house", [VENEZIA, CASINOS_AUSTRIA], ids=lambda h: h.name)
def test_venezia_art_3_and_venezia_art_4_and_casinos_austria_art_35_closed_table_random_draw(
    house: object,
) -> None:
    tables = tables_of({"t01": 7, "t02": 6})
    draw = seating.draw_seats(
        ["x", "y", "z"],
        tables,
        house,
        random.Random(3),
        two_step=True,
        rule="r",  # type: ignore[arg-type]
    )
    assert draw.cards == {}  # one random draw: their texts ask for no 2-step process
    assert Counter(t for t, _s in draw.seats.values()) == {"t02": 2, "t01": 1}


def test_venezia_art_6_the_final_table_has_seven_to_ten_players(tmp_path: Path) -> None:
    from tests.tournament_rig import basic

    s = basic(tmp_path, players=4, profile="venezia", extra="final_table_size = 10")
    assert s.final_table_size == 10
    with pytest.raises(ConfigError, match=r"art\. 6: a final table of 7, 8, 9 or 10"):
        basic(tmp_path, players=4, profile="venezia", extra="final_table_size = 6")
