"""pokerkit judges every hand the demo dealer completes, as `tablectl sim` does: the hands'
messages read as the sim's view reads them (controller/phh_verdict.py HandJudge: the state
just before each hand gives its real starting stacks), every game, every profile in turn,
the demo as shipped and with a dealing error in every hand (docs/phh.md)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from rich.console import Console

from controller.config import GAMES, Config, load_config
from controller.phh_verdict import HandJudge
from controller.replay import build_engine
from controller.rules.profiles import PROFILES
from controller.simview import LiveView
from sim.demo import demo_events
from sim.mistakes import MISTAKES
from sim.tables import DEFAULT_SIM_CONFIG

SEEDS = 40
HANDS = 3


def _config(profile: str, game: str) -> Config:
    base = load_config(DEFAULT_SIM_CONFIG)
    return dataclasses.replace(
        base, rules=dataclasses.replace(base.rules, profile=profile, game=game)
    )


def _messages(config: Config, seed: int, **kwargs: Any) -> list[tuple[str, dict[str, Any]]]:
    engine = build_engine(config)
    return [
        (m.topic, m.payload)
        for event in demo_events(config, hands=HANDS, seed=seed, **kwargs)
        for m in engine.apply(event)
    ]


def judged(game: str, **kwargs: Any) -> tuple[int, list[str]]:
    """Deal SEEDS demos of `game` (the profiles in turn) and judge every completed hand:
    hands judged, the disagreements."""
    judge = HandJudge()
    disagreed = []
    profiles = sorted(PROFILES)
    for seed in range(SEEDS):
        profile = profiles[seed % len(profiles)]
        for topic, payload in _messages(_config(profile, game), seed, **kwargs):
            verdict = judge.see("t01", topic, payload)
            if verdict is not None:
                disagreed.append(f"{profile} seed {seed} hand {payload['hand']}: {verdict}")
    return judge.judged, disagreed


@pytest.mark.parametrize("game", GAMES)
def test_pokerkit_agrees_on_every_hand_of_the_demo_as_shipped(game: str) -> None:
    count, disagreed = judged(game)
    assert count == SEEDS * HANDS
    assert disagreed == []


@pytest.mark.parametrize("game", GAMES)
def test_pokerkit_agrees_on_every_demo_hand_with_a_dealing_error(game: str) -> None:
    count, disagreed = judged(game, errors=sorted(MISTAKES), error_every=1, clean_start=0)
    assert count == SEEDS * HANDS
    assert disagreed == []


def test_the_sim_view_shows_a_disagreement_on_the_hand_line_and_counts_it() -> None:
    """A hand whose hand_completed was tampered with: its line says what pokerkit found,
    the summary names it; the other hands agree."""
    config = _config("tda-2019", "nlhe")
    console = Console(record=True, width=400)
    view = LiveView(console, ["t01"], HANDS)
    view.counting = True
    for topic, payload in _messages(config, 7):
        if payload.get("type") == "hand_completed" and payload["hand"] == 2:
            payload = json.loads(json.dumps(payload))
            first, second = sorted(payload["stacks"])[:2]
            payload["stacks"][first] += 50
            payload["stacks"][second] -= 50
        view(topic, json.dumps(payload).encode())
    view.summary([], [])
    lines = console.export_text().splitlines()
    hand_lines = [line for line in lines if line.startswith("t01 hand")]
    assert len(hand_lines) == HANDS
    assert ["pokerkit:" in line for line in hand_lines] == [False, True, False]
    assert "pokerkit judged 3 hands: 2 agree; 1 disagree (hand 2)" in lines
