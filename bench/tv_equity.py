"""Equity latency of the TV service, beside pokerkit.calculate_equities on the same inputs.

For 2, 6 and 9 live hands and each street (pre-flop, flop, turn, river), one seeded deal:
`broadcast.equity.compute` (exact with two or fewer board cards to come, else Monte Carlo
with 38,415 runouts: at most 0.5 points of error at 95 %) and pokerkit 0.7.7's
`calculate_equities` (Monte Carlo only, pure Python) on the same hands and board; and,
to show what the lookup tables buy, the same runouts ranked by phevaluator called once
per hand from a Python loop.

pokerkit is timed at min(our runouts, --pokerkit-cap) samples (its cost grows linearly
with the samples) and its time for our runout count is extrapolated from that; the ratio
is pokerkit's (extrapolated) time over ours. Usage:
python -m bench.tv_equity [--reps 15] [--pokerkit-reps 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.machine import machine
from broadcast.equity import Situation, compute
from broadcast.evaluator import DECK, tables

STREETS = (("pre-flop", 0), ("flop", 3), ("turn", 4), ("river", 5))
PLAYERS = (2, 6, 9)


def deal(players: int, seed: int) -> tuple[dict[int, list[str]], list[str]]:
    """Hole cards for `players` seats and a five-card board, from a seeded shuffle."""
    rng = random.Random(seed + players)
    deck = list(DECK)
    rng.shuffle(deck)
    hands = {seat: deck[2 * (seat - 1) : 2 * seat] for seat in range(1, players + 1)}
    return hands, deck[2 * players : 2 * players + 5]


def median_ms(fn: Callable[[], object], reps: int) -> float:
    """The median wall time of `reps` calls, in milliseconds."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def pokerkit_ms(hands: dict[int, list[str]], board: list[str], samples: int, reps: int) -> float:
    """pokerkit.calculate_equities on the same inputs, median ms."""
    from pokerkit import Card, Deck, StandardHighHand, calculate_equities, parse_range

    ranges = [parse_range("".join(cards)) for cards in hands.values()]
    board_cards = list(Card.parse("".join(board)))
    return median_ms(
        lambda: calculate_equities(
            ranges, board_cards, 2, 5, Deck.STANDARD, (StandardHighHand,), sample_count=samples
        ),
        reps,
    )


def loop_ms(hands: dict[int, list[str]], board: list[str], runouts: int) -> float:
    """The same runouts ranked one hand at a time by phevaluator (one call per hand)."""
    from phevaluator import evaluate_cards

    gone = {c for cards in hands.values() for c in cards} | set(board)
    pool = [c for c in DECK if c not in gone]
    need = 5 - len(board)
    rng = random.Random(0)

    def once() -> None:
        deals = (
            itertools.combinations(pool, need)
            if need <= 2
            else (rng.sample(pool, need) for _ in range(runouts))
        )
        won = dict.fromkeys(hands, 0.0)
        for runout in deals:
            full = [*board, *runout]
            ranks = {seat: evaluate_cards(*cards, *full) for seat, cards in hands.items()}
            best = min(ranks.values())
            winners = [seat for seat, rank in ranks.items() if rank == best]
            for seat in winners:
                won[seat] += 1 / len(winners)

    return median_ms(once, 3)


def run(reps: int, pk_reps: int, cap: int, seed: int) -> dict[str, Any]:
    start = time.perf_counter()
    tables()
    build = time.perf_counter() - start
    rows: list[dict[str, Any]] = []
    for players in PLAYERS:
        hands, full_board = deal(players, seed)
        for street, shown in STREETS:
            board = full_board[:shown]
            situation = Situation.of(hands, board)
            result = compute(situation)
            ours = median_ms(partial(compute, situation), reps if shown else max(reps // 2, 3))
            samples = min(result.boards, cap)
            loop = loop_ms(hands, board, result.boards)
            theirs = pokerkit_ms(hands, board, samples, pk_reps)
            equivalent = theirs * result.boards / samples
            rows.append(
                {
                    "players": players,
                    "street": street,
                    "method": result.method,
                    "runouts": result.boards,
                    "max_error_points": round(max(result.error.values()), 3),
                    "ours_ms": round(ours, 3),
                    "phevaluator_loop_ms": round(loop, 2),
                    "pokerkit_samples": samples,
                    "pokerkit_ms": round(theirs, 1),
                    "pokerkit_ms_same_runouts": round(equivalent, 1),
                    "ratio": round(equivalent / ours, 1),
                }
            )
            print(
                f"{players} hands {street:8} {result.method:11} {result.boards:6} runouts: "
                f"ours {ours:8.2f} ms | loop {loop:8.1f} ms | "
                f"pokerkit {theirs:9.1f} ms at {samples} samples, "
                f"{equivalent:10.1f} ms at {result.boards} -> x{equivalent / ours:,.0f}",
                flush=True,
            )
    return {
        "machine": machine(),
        "table_build_s": round(build, 3),
        "reps": reps,
        "pokerkit_reps": pk_reps,
        "seed": seed,
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--pokerkit-reps", type=int, default=3)
    parser.add_argument("--pokerkit-cap", type=int, default=500)
    parser.add_argument("--seed", type=int, default=16)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result = run(args.reps, args.pokerkit_reps, args.pokerkit_cap, args.seed)
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
