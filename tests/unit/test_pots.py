"""Pots: uncalled bets, side pots (rule 21), dead money, odd chips (rule 20-A), awards."""

from __future__ import annotations

import pytest

from controller.rules import RuleError
from controller.rules.handeval import evaluate
from controller.rules.pots import Pot, award, build_pots, split_pot, uncalled


def hand(text: str) -> list[str]:
    """Cards from a space-separated string."""
    return text.split()


def test_rule_15b_uncalled_part_of_largest_bet_returns_to_its_owner() -> None:
    assert uncalled({1: 1000, 2: 400, 3: 400}, live={1, 2, 3}) == (1, 600)
    assert uncalled({1: 400, 2: 400}, live={1, 2}) is None
    assert uncalled({}, live=()) is None


def test_rule_15b_uncalled_bet_returned_even_if_owner_folded_or_killed() -> None:
    assert uncalled({1: 100, 2: 300, 3: 50}, live={1, 3}) == (2, 200)


def test_uncalled_everyone_folds_to_big_blind_returns_blind_excess() -> None:
    assert uncalled({1: 50, 2: 100}, live={2}) == (2, 50)


def test_rule_21_three_way_all_in_two_side_pots() -> None:
    contributions = {1: 300, 2: 700, 3: 1000, 4: 1000}
    pots = build_pots(contributions, live={1, 2, 3, 4})
    assert pots == [
        Pot(1200, (1, 2, 3, 4)),
        Pot(1200, (2, 3, 4)),
        Pot(600, (3, 4)),
    ]
    assert sum(p.amount for p in pots) == sum(contributions.values())


def test_rule_21_folded_chips_are_dead_money_in_pots_they_reach() -> None:
    # Seat 4 put in 500 then folded: it funds the main and first side pot only.
    contributions = {1: 300, 2: 700, 3: 700, 4: 500}
    pots = build_pots(contributions, live={1, 2, 3})
    assert pots == [Pot(1200, (1, 2, 3)), Pot(1000, (2, 3))]


def test_rule_21_folded_chips_above_top_live_level_go_to_last_pot() -> None:
    # Seat 3 bet 200 and folded to seat 4's raise; seat 1 all-in for 50.
    contributions = {1: 50, 3: 200, 4: 200}
    pots = build_pots(contributions, live={1, 4})
    assert pots == [Pot(150, (1, 4)), Pot(300, (4,))]


def test_rule_21_side_pot_no_live_hand_reaches_goes_to_the_last_hand_to_leave_it() -> None:
    # Seat 1 all in for 150; seats 2 and 3 put in 400 each, then seat 3 left, then seat 2:
    # the all-in hand wins 150 from each rival, the rest was seat 2's alone.
    contributions = {1: 150, 2: 400, 3: 400}
    assert build_pots(contributions, live={1}, gone=[3, 2], reach=150) == [
        Pot(450, (1,)),
        Pot(500, (2,)),
    ]
    # Left the other way round: seat 3 had it last.
    assert build_pots(contributions, live={1}, gone=[2, 3], reach=150) == [
        Pot(450, (1,)),
        Pot(500, (3,)),
    ]
    # Layers: seat 3 (600) left first, seat 2 (400) last: seat 2 holds the layer up to 400,
    # the rest of seat 3's chips are its own layer.
    contributions = {1: 150, 2: 400, 3: 600}
    assert build_pots(contributions, live={1}, gone=[3, 2], reach=150) == [
        Pot(450, (1,)),
        Pot(500, (2,)),
        Pot(200, (3,)),
    ]
    # No reach given: the last pot's, as before.
    assert build_pots(contributions, live={1}) == [Pot(1150, (1,))]


def test_table_stakes_a_hand_wins_from_each_rival_no_more_than_it_could_have_put_in() -> None:
    # The button (50 chips, nothing in yet) wins when both blinds fold out of turn: 50 from
    # each; the big blind's other 50 are its own again.
    assert build_pots({1: 0, 2: 50, 3: 100}, live={1}, gone=[2, 3], reach=50) == [
        Pot(100, (1,)),
        Pot(50, (3,)),
    ]
    # A live hand with chips behind enough to match: a dead blind is all its (rule 30).
    assert build_pots({1: 100, 2: 50}, live={2}, gone=[1], reach=10_000) == [Pot(150, (2,))]
    # Chips between the top live level and its reach are the live hands' last pot.
    assert build_pots({1: 100, 2: 300, 3: 500}, live={1}, gone=[2, 3], reach=400) == [
        Pot(800, (1,)),
        Pot(100, (3,)),
    ]


def test_rule_21_dead_money_goes_to_main_pot() -> None:
    pots = build_pots({1: 100, 2: 100}, live={1, 2}, dead=25)
    assert pots == [Pot(225, (1, 2))]


def test_rule_20a_odd_chip_goes_to_first_winner_left_of_button() -> None:
    order = [4, 5, 1, 2, 3]  # button on seat 3
    assert split_pot(101, {1, 5}, order) == {5: 51, 1: 50}
    assert split_pot(100, {3, 4, 5}, order) == {4: 34, 5: 33, 3: 33}


def test_rule_20_odd_chips_broken_to_smallest_denomination_in_play() -> None:
    order = [2, 3, 1]
    # 1025 with 25-chips smallest: 41 units of 25 -> 21 and 20 units.
    assert split_pot(1025, {1, 3}, order, odd_unit=25) == {3: 525, 1: 500}
    # Three ways 1000 in 100s: 10 units -> 4, 3, 3.
    assert split_pot(1000, {1, 2, 3}, order, odd_unit=100) == {2: 400, 3: 300, 1: 300}
    # An indivisible remainder below the unit goes to the first winner too.
    assert split_pot(1010, {1, 3}, order, odd_unit=25) == {3: 510, 1: 500}


def test_rule_20a_split_pot_rejects_unknown_winner() -> None:
    with pytest.raises(RuleError):
        split_pot(100, {7}, [1, 2])


def test_rule_21_each_side_pot_awarded_separately_side_pot_first() -> None:
    contributions = {1: 300, 2: 700, 3: 1000}
    pots = build_pots(contributions, live={1, 2, 3})
    hands = {
        1: evaluate(hand("As Ad Ah Kc Kd 2s 3c")),  # full house: best
        2: evaluate(hand("Qs Qd 7h 8c 9d 2s 3c")),  # pair of queens: second
        3: evaluate(hand("Js Td 7h 8c 4d 2s 3c")),  # high card
    }
    awards = award(pots, hands, [1, 2, 3])
    assert [a.pot_index for a in awards] == [2, 1, 0]
    assert awards[0].winners == (3,) and awards[0].amount == 300
    assert awards[1].winners == (2,) and dict(awards[1].shares) == {2: 800}
    assert awards[2].winners == (1,) and dict(awards[2].shares) == {1: 900}


def test_rule_20a_award_split_with_odd_chip_left_of_button() -> None:
    pots = [Pot(301, (2, 5, 8))]
    tie = evaluate(hand("As Kd Qh Jc 9d 2s 3c"))
    hands = {2: tie, 5: evaluate(hand("2d 4h 7c 8s Th 3d 5c")), 8: tie}
    order = [6, 7, 8, 9, 1, 2, 3, 4, 5]  # button on seat 5
    (result,) = award(pots, hands, order)
    assert result.winners == (8, 2)
    assert dict(result.shares) == {8: 151, 2: 150}


def test_rule_17b_uncontested_pot_needs_no_hand() -> None:
    (result,) = award([Pot(500, (4,))], {}, [1, 2, 3, 4])
    assert dict(result.shares) == {4: 500}
