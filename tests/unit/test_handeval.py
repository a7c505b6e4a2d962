"""Hand evaluator: categories, kickers (hold'em basics examples), wheel, agreement with pokerkit."""

from __future__ import annotations

import random

import pytest

from controller.rules import RuleError
from controller.rules.handeval import (
    FLUSH,
    FULL_HOUSE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    best_five,
    describe,
    evaluate,
)

DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]


def hand(text: str) -> list[str]:
    """Cards from a space-separated string."""
    return text.split()


def ev(text: str) -> tuple[int, ...]:
    return evaluate(hand(text))


@pytest.mark.parametrize(
    ("cards", "reading"),
    [
        ("As Ks Qs Js Ts 2c 3d", "royal flush"),
        ("5h 4h 3h 2h Ah Kd Kc", "straight flush, five high"),
        ("9c 9d 9h 9s Ah 2c 3d", "four of a kind, nines"),
        ("Kc Kd Kh 7s 7h 2c 3d", "full house, kings full of sevens"),
        ("Ah 9h 7h 4h 2h Kd Kc", "flush, ace high"),
        ("9c 8d 7h 6s 5h 2c 2d", "straight, nine high"),
        ("5c 4d 3h 2s Ah Kc Qd", "straight, five high"),
        ("7c 7d 7h As Kh 2c 3d", "three of a kind, sevens"),
        ("Kc Kd 7h 7s 2h 3c 9d", "two pair, kings and sevens"),
        ("Jc Jd 7h 5s 2h 3c 9d", "pair of jacks"),
        ("Ac Jd 7h 5s 2h 3c 9d", "high card, ace"),
    ],
)
def test_rule_12_dealer_reads_hand_value(cards: str, reading: str) -> None:
    assert describe(ev(cards)) == reading


def test_rule_12_category_order_flush_beats_straight_full_house_beats_flush() -> None:
    straight = ev("9c 8d 7h 6s 5h 2c 2d")
    flush = ev("Ah 9h 7h 4h 2h Kd Kc")
    full = ev("Kc Kd Kh 7s 7h 2c 3d")
    assert straight[0] == STRAIGHT and flush[0] == FLUSH and full[0] == FULL_HOUSE
    assert straight < flush < full


def test_rule_12_wheel_is_lowest_straight_and_steel_wheel_lowest_straight_flush() -> None:
    assert ev("5c 4d 3h 2s Ah Kc Qd") < ev("6c 5d 4h 3s 2h Kc Qd")
    steel = ev("5h 4h 3h 2h Ah Kd Kc")
    assert steel == (STRAIGHT_FLUSH, 5)
    assert steel < ev("6h 5h 4h 3h 2h Kd Kc")


def test_rule_12_seven_card_straight_flush_beats_higher_plain_straight() -> None:
    assert ev("8h 7h 6h 5h 4h 9c Tc") > ev("Ac Kd Qh Js Tc 2d 3d")
    assert ev("8h 7h 6h 5h 4h 9c Tc")[0] == STRAIGHT_FLUSH


def test_holdem_basics_kicker_example_1_kicker_queen_beats_jack() -> None:
    board = "Ad 2c 3h 5s 8d"
    assert ev("As Qh " + board) > ev("Ac Jh " + board)


def test_holdem_basics_kicker_example_2_same_best_five_splits() -> None:
    board = "Ah 8d 2c 3h 3s"
    assert ev("As 7h " + board) == ev("Ad 7c " + board)


def test_holdem_basics_kicker_example_3_board_kicker_splits() -> None:
    board = "Ah 3d 3c Kh 9s"
    assert ev("As Qh " + board) == ev("Ad Jc " + board)


def test_holdem_basics_kicker_example_4_ten_eight_beats_ten_seven() -> None:
    board = "Ah Kd Jc 5h 6s"
    assert ev("Ts 8h " + board) > ev("Td 7c " + board)


def test_holdem_basics_kicker_example_5_ten_four_splits_with_ten_two() -> None:
    board = "Ah Kd Jc 5h 6s"
    assert ev("Ts 2h " + board) == ev("Td 4c " + board)


def test_rule_12_best_five_lists_the_hand_most_significant_first() -> None:
    assert best_five(hand("As 2d 3h 4c 5s Kd Kh")) == ("5s", "4c", "3h", "2d", "As")
    assert best_five(hand("Kc Kd Kh 7s 7h 7c 2d")) == ("Kc", "Kd", "Kh", "7s", "7h")
    assert best_five(hand("Ah 9h 7h 4h 2h 3h Kc")) == ("Ah", "9h", "7h", "4h", "3h")


def test_evaluator_rejects_bad_and_duplicate_cards() -> None:
    with pytest.raises(RuleError):
        ev("As As 2c 3d 4h")
    with pytest.raises(RuleError):
        ev("Xs 2c 3d 4h 5h")
    with pytest.raises(RuleError):
        ev("As 2c 3d 4h")
    with pytest.raises(RuleError):  # hold'em: two hole cards and five on the board at most
        ev("As Ks 2c 3d 4h 5h 6h 7h")


def test_evaluator_orders_like_pokerkit_on_seeded_random_hands() -> None:
    from pokerkit import StandardHighHand

    rng = random.Random(20190917)
    for _ in range(3000):
        cards = rng.sample(DECK, 9)
        a = cards[:7]
        b = cards[:2] + cards[4:9]
        ours = (evaluate(a) > evaluate(b)) - (evaluate(a) < evaluate(b))
        pa = StandardHighHand.from_game("".join(a[:2]), "".join(a[2:]))
        pb = StandardHighHand.from_game("".join(b[:2]), "".join(b[2:]))
        theirs = (pa > pb) - (pa < pb)
        assert ours == theirs, (a, b)
        assert evaluate(list(best_five(a))) == evaluate(a)


def test_rule_12_best_five_of_a_straight_is_five_cards_even_with_a_lower_sixth_in_line() -> None:
    assert best_five(hand("9c 8d 7h 6s 5h 4c Kd")) == ("9c", "8d", "7h", "6s", "5h")
    assert best_five(hand("9h 8h 7h 6h 5h 4h Kd")) == ("9h", "8h", "7h", "6h", "5h")


def test_rule_12_three_pairs_play_the_third_pair_as_the_two_pair_kicker() -> None:
    # Board Kc Qh Qs 9d 2h: a hand holding Kd 9c has three pairs; the nines play as kicker.
    three_pairs = ev("Kd 9c Kc Qh Qs 9d 2h")
    assert three_pairs == (2, 13, 12, 9)
    assert three_pairs == ev("Kd 8c Kc Qh Qs 9d 2h")  # kings and queens, nine kicker: split
    assert three_pairs > ev("Ks 8c Kc Qh Qd 7d 2h")
    assert best_five(hand("Kd 9c Kc Qh Qs 9d 2h")) == ("Kd", "Kc", "Qh", "Qs", "9c")
    assert ev("Kd 9c Kc Qh Qs 9d") == (2, 13, 12, 9)  # on the turn: no single card left
