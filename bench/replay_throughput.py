"""Replay throughput: our engine on the physical traces vs pokerkit on the action lists."""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench.machine import machine
from controller.engine import Engine
from kernel.inputs import Event
from tests.oracle import OracleHand, generate_hands, new_engine, replay_pokerkit, trace_of


def replay_traces(traces: Sequence[Sequence[Event]]) -> list[Engine]:
    """Each trace through a fresh engine (what a table does, hand after hand)."""
    engines = []
    for trace in traces:
        engine = new_engine()
        apply = engine.apply
        for event in trace:
            apply(event)
        engines.append(engine)
    return engines


def replay_actions(hands: Sequence[OracleHand]) -> list[tuple[int, ...]]:
    """Each hand through a fresh pokerkit state from its recorded cards and actions."""
    return [replay_pokerkit(hand) for hand in hands]


def timed(run: Callable[[], object], repeats: int) -> list[float]:
    """Wall-clock seconds of `repeats` runs."""
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        out.append(time.perf_counter() - start)
    return out


def profile_engine(traces: Sequence[Sequence[Event]], top: int = 10) -> str:
    """cProfile of the engine replay: the `top` functions by cumulative time."""
    profiler = cProfile.Profile()
    profiler.enable()
    replay_traces(traces)
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(top)
    return text.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20_261_122)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--profile", action="store_true", help="print the engine's top 10")
    args = parser.parse_args()

    hands = generate_hands(args.seed, args.hands)
    traces = [trace_of(hand) for hand in hands]
    # One untimed pass of each, checking they agree before anything is measured.
    engines = replay_traces(traces)
    stacks = replay_actions(hands)
    agree = sum(
        1
        for hand, engine, final in zip(hands, engines, stacks, strict=True)
        if final == hand.final_stacks
        and tuple(engine.seats[p + 1].stack for p in range(hand.players)) == final
    )
    ours = timed(lambda: replay_traces(traces), args.repeats)
    theirs = timed(lambda: replay_actions(hands), args.repeats)
    ours_rate = args.hands / statistics.median(ours)
    theirs_rate = args.hands / statistics.median(theirs)
    events = sum(len(t) for t in traces)
    actions = sum(len(h.actions) for h in hands)
    result: dict[str, Any] = {
        "hands": args.hands,
        "seed": args.seed,
        "repeats": args.repeats,
        "hands_agreeing": agree,
        "trace_events_per_hand": round(events / args.hands, 1),
        "pokerkit_actions_per_hand": round(actions / args.hands, 1),
        "engine": {
            "hands_per_s_median": round(ours_rate, 1),
            "ms_per_hand_median": round(1000 / ours_rate, 3),
            "us_per_event_median": round(1e6 * statistics.median(ours) / events, 2),
            "runs_s": [round(s, 3) for s in ours],
        },
        "pokerkit": {
            "hands_per_s_median": round(theirs_rate, 1),
            "ms_per_hand_median": round(1000 / theirs_rate, 3),
            "runs_s": [round(s, 3) for s in theirs],
        },
        "ratio_engine_over_pokerkit": round(ours_rate / theirs_rate, 3),
        "machine": machine(),
    }
    print(json.dumps(result, indent=2))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.profile:
        print(profile_engine(traces))


if __name__ == "__main__":
    main()
