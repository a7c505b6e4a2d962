"""pokerkit judges every hand a scenario trace completes: its PHH replayed strictly
(controller/phh_judge.py), to the engine's final stacks, from the real starting stacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.config import load_config, with_game
from controller.journal import read_trace_file
from controller.phh import build_phh, split_hands
from controller.phh_judge import hand_figures, judge
from controller.replay import build_engine, drive_segments
from tablectl.cli import trace_headers
from tests.money_judge import starting_stacks
from tests.scenarios.test_replay import CONFIG, TRACES


def judged_hands(trace: Path) -> list[str]:
    """Replay the trace, export every completed hand and have pokerkit judge it; the
    hands judged, with the allowances they used (a void hand is named with its reason)."""
    headers = trace_headers(trace)
    config = load_config(CONFIG, profile_override=headers.get("profile"))
    config = with_game(config, headers.get("game"))
    engine = build_engine(config)
    messages = [
        (m.topic, m.payload)
        for step in drive_segments(engine, [read_trace_file(trace)])
        for m in step.clear
    ]
    out = []
    for hand in split_hands(messages):
        phh = build_phh(hand)
        if phh.text is None:
            out.append(f"hand {hand.hand}: not written ({phh.problem})")
            continue
        start = starting_stacks(messages, hand.hand)
        odd, rake = hand_figures(hand.events)
        verdict = judge(
            phh.text,
            phh.finishing_stacks,
            starting=[start[s] for s in phh.seats],
            odd_chips=odd,
            rake=rake,
        )
        out.append(f"hand {hand.hand}: judged {', '.join(verdict.allowances) or 'exactly'}")
    return out


@pytest.mark.parametrize("trace", TRACES, ids=[p.stem for p in TRACES])
def test_pokerkit_replays_every_completed_hand_strictly(trace: Path) -> None:
    judged_hands(trace)
