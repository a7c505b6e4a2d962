"""The money test's named gaps (tests/money_known.py) recognise their hands and no others."""

from __future__ import annotations

from typing import Any

from tests.money_known import (
    DEAD_ALL_IN_BEFORE_THE_RIVER,
    DEAD_MONEY_IN_A_SIDE_POT,
    LIMIT_SHORT_ALLIN_47B,
    SHORT_BIG_BLIND,
    known_money_gap,
)


def _hand(game: str, *events: dict[str, Any]) -> list[dict[str, Any]]:
    started = {"type": "hand_started", "big_blind": 100, "game": game}
    return [started, {"type": "posted", "seat": 1, "blind": "small", "amount": 50}, *events]


def test_short_all_in_big_blind_is_named_and_a_full_one_is_not() -> None:
    short = {"type": "posted", "seat": 2, "blind": "big", "amount": 50, "allin": True}
    full = {"type": "posted", "seat": 2, "blind": "big", "amount": 100, "allin": True}
    assert known_money_gap(_hand("nlhe", short)) == SHORT_BIG_BLIND
    assert known_money_gap(_hand("nlhe", full)) is None


def test_rule_47B_limit_short_all_in_raised_after_is_named_and_nothing_else() -> None:
    bb = {"type": "posted", "seat": 2, "blind": "big", "amount": 100}
    allin = {"type": "action", "seat": 3, "action": "allin", "amount": 160}
    raised = {"type": "action", "seat": 4, "action": "raise", "amount": 260}
    called = {"type": "action", "seat": 4, "action": "call", "amount": 160}
    assert known_money_gap(_hand("flhe", bb, allin, raised)) == LIMIT_SHORT_ALLIN_47B
    allin_raise = {"type": "action", "seat": 4, "action": "allin", "amount": 260}
    assert known_money_gap(_hand("flhe", bb, allin, allin_raise)) == LIMIT_SHORT_ALLIN_47B
    assert known_money_gap(_hand("flhe", bb, allin, called)) is None
    assert known_money_gap(_hand("nlhe", bb, allin, raised)) is None


def test_rule_58_dead_all_in_before_the_river_is_named_and_a_river_or_a_return_is_not() -> None:
    allin = {"type": "action", "seat": 3, "action": "allin", "amount": 9_600}
    fold = {"type": "out_of_turn", "seat": 3, "action": "fold", "status": "binding"}
    won = {"type": "pot_awarded", "reason": "uncontested"}
    river = {"type": "board_dealt", "street": "river"}
    back = {"type": "uncalled_bet_returned", "seat": 3, "amount": 100}
    assert known_money_gap(_hand("nlhe", allin, fold, won)) == DEAD_ALL_IN_BEFORE_THE_RIVER
    assert known_money_gap(_hand("nlhe", allin, river, fold, won)) is None
    assert known_money_gap(_hand("nlhe", allin, back, fold, won)) is None
    assert known_money_gap(_hand("nlhe", allin, fold)) is None  # not uncontested


def test_rules_51B_53B_dead_money_with_side_pots_is_named_and_one_pot_is_not() -> None:
    bound = {"type": "out_of_turn", "seat": 3, "action": "call", "acts_again": True}
    fold = {"type": "action", "seat": 3, "action": "fold", "amount": 100}
    forfeit = {"type": "action", "seat": 4, "action": "fold", "forfeited": 300}
    pot = {"type": "pot_awarded", "pot": 0}
    side = {"type": "pot_awarded", "pot": 1}
    assert known_money_gap(_hand("nlhe", bound, fold, pot, side)) == DEAD_MONEY_IN_A_SIDE_POT
    assert known_money_gap(_hand("nlhe", forfeit, pot, side)) == DEAD_MONEY_IN_A_SIDE_POT
    assert known_money_gap(_hand("nlhe", bound, fold, pot)) is None
    assert known_money_gap(_hand("nlhe", fold, pot, side)) is None  # a plain fold
