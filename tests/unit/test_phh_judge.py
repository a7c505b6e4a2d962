"""The strict pokerkit judge (controller/phh_judge.py): it fails where it should, its named
allowances hold on both sides, and it passes the random hands of tests/phh_hands.py."""

from __future__ import annotations

import pytest

from controller.phh import build_phh, split_hands
from controller.phh_judge import ODD_CHIPS_20A, RAKE, PhhJudgement, hand_figures, judge
from tests.oracle import seat_of
from tests.phh_hands import generate_cases, run_engine

HEADS_UP = """variant = "NT"
antes = [0, 0]
blinds_or_straddles = [50, 100]
min_bet = 100
starting_stacks = [1000, 1000]
actions = [{actions}]
"""
DEAL = '"d dh p1 AhAs", "d dh p2 7c2d"'


def _file(*actions: str) -> str:
    return HEADS_UP.format(actions=", ".join([DEAL, *(f'"{a}"' for a in actions)]))


def test_a_refused_action_fails() -> None:
    with pytest.raises(PhhJudgement, match="refuses action 3"):
        judge(_file("p2 cbr 150"), [1000, 1000])  # a raise below the minimum


def test_a_hand_left_unfinished_fails() -> None:
    with pytest.raises(PhhJudgement, match="not over"):
        judge(_file("p2 cc"), [1000, 1000])


def test_different_final_stacks_fail() -> None:
    with pytest.raises(PhhJudgement, match="final stacks"):
        judge(_file("p2 f"), [1000, 1000])


def test_the_written_fold_replays_exactly() -> None:
    assert judge(_file("p2 f"), [1050, 950]).allowances == ()


def test_wrong_starting_stacks_fail() -> None:
    with pytest.raises(PhhJudgement, match="starting stacks"):
        judge(_file("p2 f"), [1050, 950], starting=[2000, 1000])


def test_the_rake_allowance_takes_exactly_the_rake() -> None:
    assert judge(_file("p2 f"), [1040, 950], rake=10).allowances == (RAKE,)
    with pytest.raises(PhhJudgement):
        judge(_file("p2 f"), [1030, 950], rake=10)  # more than the rake went


def test_the_odd_chip_allowance_needs_the_same_total() -> None:
    assert judge(_file("p2 f"), [1049, 951], odd_chips=1).allowances == (ODD_CHIPS_20A,)
    with pytest.raises(PhhJudgement):
        judge(_file("p2 f"), [1049, 950], odd_chips=1)
    with pytest.raises(PhhJudgement):
        judge(_file("p2 f"), [1048, 952], odd_chips=1)  # more than the odd chips moved


@pytest.mark.parametrize("seed", [7, 11])
def test_random_hands_replay_strictly_in_pokerkit(seed: int) -> None:
    for case in generate_cases(seed, 40):
        _engine, messages = run_engine(case)
        (hand,) = split_hands([(m.topic, m.payload) for m in messages])
        phh = build_phh(hand)
        assert phh.text is not None, phh.problem
        odd, rake = hand_figures(hand.events)
        starting = [case.hand.starting_stacks[p] for p in range(case.hand.players)]
        by_seat = dict(zip([seat_of(p) for p in range(case.hand.players)], starting, strict=True))
        judge(
            phh.text,
            phh.finishing_stacks,
            starting=[by_seat[s] for s in phh.seats],
            odd_chips=odd,
            rake=rake,
        )
