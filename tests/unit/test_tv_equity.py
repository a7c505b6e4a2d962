"""The TV service's hand ranks and equities, against independent brute force."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import pytest
from phevaluator import evaluate_cards

from broadcast.equity import MC_BOARDS, MC_ERROR_POINTS, Situation, compute, round_to_total
from broadcast.evaluator import DECK, EvaluatorError, rank_arrays, rank_cards, tables
from controller.rules.handeval import evaluate

pytestmark = pytest.mark.timeout(120)


def brute_force(
    hands: dict[int, Sequence[str]], board: Sequence[str], dead: Sequence[str] = ()
) -> dict[int, float]:
    """Equity by dealing every runout and ranking with the project's own evaluator."""
    gone = {c for cards in hands.values() for c in cards} | set(board) | set(dead)
    pool = [c for c in DECK if c not in gone]
    won = dict.fromkeys(hands, 0.0)
    count = 0
    for runout in itertools.combinations(pool, 5 - len(board)):
        full = [*board, *runout]
        ranks = {seat: evaluate([*cards, *full]) for seat, cards in hands.items()}
        best = max(ranks.values())
        winners = [seat for seat, rank in ranks.items() if rank == best]
        for seat in winners:
            won[seat] += 1 / len(winners)
        count += 1
    return {seat: 100 * w / count for seat, w in won.items()}


def test_lookup_ranks_equal_phevaluator_and_order_like_handeval() -> None:
    rng = random.Random(16)
    hands = [rng.sample(DECK, rng.choice((5, 6, 7))) for _ in range(3000)]
    for cards in hands:
        assert rank_cards(cards) == evaluate_cards(*cards)
    # The order of two hands is the order the controller's own evaluator gives.
    for a, b in zip(hands[::2], hands[1::2], strict=False):
        if len(a) != len(b):
            continue
        ours = (rank_cards(a) > rank_cards(b)) - (rank_cards(a) < rank_cards(b))
        theirs = (evaluate(a) < evaluate(b)) - (evaluate(a) > evaluate(b))
        assert ours == theirs, (a, b)


def test_every_flush_and_straight_flush_is_ranked() -> None:
    import numpy as np

    royal = np.array([[DECK.index(c) for c in ("As", "Ks", "Qs", "Js", "Ts", "2d", "2h")]])
    assert int(rank_arrays(royal)[0]) == 1  # phevaluator's best rank
    wheel = ["As", "2s", "3s", "4s", "5s", "Kd", "Kh"]
    assert rank_cards(wheel) == evaluate_cards(*wheel)
    assert len(tables().keys) == 73775  # every multiset of 5, 6 and 7 ranks


def test_bad_cards_are_refused() -> None:
    with pytest.raises(EvaluatorError):
        rank_cards(["As", "As", "Kd", "Qd", "2c"])
    with pytest.raises(EvaluatorError):
        rank_cards(["Xx", "As", "Kd", "Qd", "2c"])
    with pytest.raises(EvaluatorError):
        compute(Situation.of({1: ["As", "Kd"], 2: ["As", "Qd"]}))
    with pytest.raises(EvaluatorError):
        compute(Situation.of({1: ["As", "Kd"]}))


@pytest.mark.parametrize(
    ("hands", "board"),
    [
        ({1: ["Ah", "Kh"], 2: ["Qs", "Qc"], 3: ["7d", "6d"]}, ["Kd", "8d", "3s"]),
        ({1: ["As", "3c"], 2: ["Kd", "Ks"]}, ["Ah", "3d", "Jc", "7s"]),
        ({1: ["Ts", "9s"], 2: ["Tc", "9c"], 4: ["2h", "2d"]}, ["8h", "7d", "Qc"]),
        ({1: ["As", "Kd"], 2: ["Ah", "Kc"]}, ["2s", "3s", "4s", "5s", "Qd"]),
    ],
)
def test_exact_equity_on_flop_turn_river_equals_brute_force(
    hands: dict[int, list[str]], board: list[str]
) -> None:
    result = compute(Situation.of(hands, board))
    assert result.method == "exact"
    expected = brute_force(hands, board)
    for seat, value in expected.items():
        assert result.equity[seat] == pytest.approx(value, abs=1e-9)
        assert result.error[seat] == 0.0
    assert sum(result.equity.values()) == pytest.approx(100.0)
    assert sum(result.rounded().values()) == pytest.approx(100.0, abs=1e-9)


def test_true_outs_leave_dead_cards_out_of_every_runout() -> None:
    hands = {1: ["Ah", "Kh"], 2: ["Qs", "Qc"]}
    board = ["Th", "8h", "3s", "2c"]
    live = compute(Situation.of(hands, board))
    dead = ["4h", "5h", "Qd"]  # mucked by players who folded
    true = compute(Situation.of(hands, board, dead))
    assert true.equity[1] == pytest.approx(brute_force(hands, board, dead)[1], abs=1e-9)
    assert true.equity[1] < live.equity[1]  # two of the flush cards are gone
    assert not set(dead) & set(true.outs[1])
    assert {"4h", "5h"} <= set(live.outs[1])


def test_heads_up_outs_are_the_next_cards_that_put_the_hand_behind_ahead() -> None:
    hands = {1: ["As", "3c"], 2: ["Kd", "Ks"]}
    board = ["Ah", "3d", "Jc"]
    result = compute(Situation.of(hands, board))
    gone = {*hands[1], *hands[2], *board}
    expected = [
        c
        for c in DECK
        if c not in gone and evaluate([*hands[2], *board, c]) > evaluate([*hands[1], *board, c])
    ]
    assert list(result.outs[2]) == expected == ["Kc", "Kh"]
    assert 1 not in result.outs  # the hand ahead has no outs
    multiway = compute(Situation.of({**hands, 4: ["9c", "9d"]}, board))
    assert multiway.outs == {}  # outs are shown heads-up only


def test_preflop_monte_carlo_is_within_its_stated_error_of_the_exact_equity() -> None:
    hands = {1: ["As", "Ah"], 2: ["Kd", "Kc"]}
    exact = compute(Situation.of(hands), exact=True)
    assert exact.method == "exact" and exact.boards == 1712304
    estimate = compute(Situation.of(hands))
    assert estimate.method == "monte-carlo" and estimate.boards <= MC_BOARDS
    for seat in hands:
        assert estimate.error[seat] <= MC_ERROR_POINTS
        assert abs(estimate.equity[seat] - exact.equity[seat]) <= estimate.error[seat]
    # the same situation gives the same estimate (the seed comes from the situation)
    assert compute(Situation.of(hands)).equity == estimate.equity
    # without stopping early: the worst-case count, which meets the error for any hands
    full = compute(Situation.of(hands), adaptive=False)
    assert full.boards == MC_BOARDS == 38415 and max(full.error.values()) <= MC_ERROR_POINTS
    # the stated error is a 95 % interval: over many seeds, about 19 in 20 hold the truth
    inside = 0
    for seed in range(40):
        run = compute(Situation.of(hands), seed=seed)
        inside += abs(run.equity[1] - exact.equity[1]) <= run.error[1]
    assert inside >= 34, inside


def test_nine_handed_preflop_errors_stay_under_half_a_point() -> None:
    hands = dict(
        zip(
            range(1, 10),
            [
                ["As", "Ah"],
                ["Kd", "Kc"],
                ["7h", "6h"],
                ["Qs", "Js"],
                ["9c", "9d"],
                ["2c", "3c"],
                ["Td", "Th"],
                ["8s", "8c"],
                ["5d", "4d"],
            ],
            strict=True,
        )
    )
    result = compute(Situation.of(hands))
    assert max(result.error.values()) <= MC_ERROR_POINTS
    assert sum(result.equity.values()) == pytest.approx(100.0)
    assert max(result.equity, key=lambda s: result.equity[s]) == 1  # aces lead


def test_rounding_keeps_the_total() -> None:
    values = {1: 33.333333, 2: 33.333333, 3: 33.333334}
    rounded = round_to_total(values, 100.0, 1)
    assert sum(rounded.values()) == pytest.approx(100.0)
    assert sorted(rounded.values()) == [33.3, 33.3, 33.4]
