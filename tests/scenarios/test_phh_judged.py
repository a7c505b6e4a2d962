"""pokerkit judges every hand a scenario trace completes: its PHH replayed strictly
(controller/phh_judge.py), to the engine's final stacks, from the real starting stacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.config import load_config, with_game
from controller.journal import read_trace_file
from controller.replay import build_engine, drive_segments
from tablectl.cli import trace_headers
from tests.money_judge import judge_completed_hands
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
    return judge_completed_hands(messages)


@pytest.mark.parametrize("trace", TRACES, ids=[p.stem for p in TRACES])
def test_pokerkit_replays_every_completed_hand_strictly(trace: Path) -> None:
    judged_hands(trace)
