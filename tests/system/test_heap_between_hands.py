"""The daemon hands the heap's free pages back once every hand is over, never during one."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from controller import heap
from controller.cli import DEFAULT_SIM_CONFIG, demo_events
from controller.clock import ManualClock
from controller.config import load_config
from controller.daemon import Daemon
from firmware_sim.player import ScriptPlayer
from tests.broker import Mosquitto

pytestmark = pytest.mark.skipif(not heap.available(), reason="glibc only")

HANDS = 6


def test_heap_trimmed_once_after_every_hand_and_never_during_one(
    mosquitto: Mosquitto, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(DEFAULT_SIM_CONFIG)
    journal = dataclasses.replace(config.journal, path=None, directory=tmp_path / "journal")
    config = dataclasses.replace(config, journal=journal)
    clock = ManualClock(0.0, wall_start=1_700_000_000.0)
    daemon = Daemon(config, broker=mosquitto.broker_config(), clock=clock)
    trims: list[tuple[int, bool]] = []  # (hand number, a hand was on) at each trim
    trim = heap.trim

    def watched() -> bool:
        trims.append((daemon.engine.hand_number, daemon.engine.hand is not None))
        return trim()

    monkeypatch.setattr(heap, "trim", watched)
    daemon.start()
    try:
        player = ScriptPlayer(daemon, speed=math.inf, clock=clock, devices=False)
        player.play(demo_events(config, HANDS, seed=3, chip_set=500))
        player.advance(round(daemon.now() + 5.0, 6))
        assert daemon.engine.hand_number == HANDS
        assert daemon.engine.hand is None
    finally:
        daemon.stop()
    assert not [t for t in trims if t[1]], f"trimmed during a hand: {trims}"
    # once before the first hand (the start), then once after each hand (a journal
    # rotation, between hands, may add one more)
    after = sorted({number for number, _ in trims})
    assert after == list(range(HANDS + 1))
    assert daemon.heap_trims == HANDS + 1
