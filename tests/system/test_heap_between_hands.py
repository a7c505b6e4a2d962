"""The daemon hands the heap's free pages back once every hand is over, never during one."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from controller import heap
from controller.config import load_config
from controller.daemon import Daemon
from controller.journal import SegmentedJournal
from kernel.clock import ManualClock
from sim.demo import demo_events
from sim.player import ScriptPlayer
from sim.tables import DEFAULT_SIM_CONFIG
from tests.broker import Mosquitto

pytestmark = pytest.mark.skipif(not heap.available(), reason="glibc only")

HANDS = 6


def play(
    mosquitto: Mosquitto,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    max_segment_mb: float,
) -> tuple[Daemon, list[tuple[str, int, bool]]]:
    """Deal HANDS demo hands; the log of trims and rotations: (what, hand number, in a hand)."""
    config = load_config(DEFAULT_SIM_CONFIG)
    journal = dataclasses.replace(
        config.journal, path=None, directory=tmp_path / "journal", max_segment_mb=max_segment_mb
    )
    config = dataclasses.replace(config, journal=journal)
    clock = ManualClock(0.0, wall_start=1_700_000_000.0)
    daemon = Daemon(config, broker=mosquitto.broker_config(), clock=clock)
    log: list[tuple[str, int, bool]] = []

    def note(what: str) -> None:
        log.append((what, daemon.engine.hand_number, daemon.engine.hand is not None))

    trim = heap.trim

    def watched_trim() -> bool:
        note("trim")
        return trim()

    rotate = SegmentedJournal.rotate

    def watched_rotate(self: SegmentedJournal, *args: Any) -> Path:
        note("rotate")
        return rotate(self, *args)

    monkeypatch.setattr(heap, "trim", watched_trim)
    monkeypatch.setattr(SegmentedJournal, "rotate", watched_rotate)
    daemon.start()
    try:
        player = ScriptPlayer(daemon, speed=math.inf, clock=clock, devices=False)
        player.play(demo_events(config, HANDS, seed=3, chip_set=500))
        player.advance(round(daemon.now() + 5.0, 6))
        assert daemon.engine.hand_number == HANDS
        assert daemon.engine.hand is None
        played = list(log)  # a clean stop rotates once more (a checkpoint for the next start)
    finally:
        daemon.stop()
    return daemon, played


def test_heap_trimmed_once_after_every_hand_and_never_during_one(
    mosquitto: Mosquitto, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon, log = play(mosquitto, tmp_path, monkeypatch, max_segment_mb=16)
    assert not [e for e in log if e[0] == "rotate"]  # one segment holds these hands
    assert not [e for e in log if e[2]], f"trimmed during a hand: {log}"
    # once before the first hand (the start), then once after each hand
    assert [number for _, number, _ in log] == list(range(HANDS + 1))
    assert daemon.heap_trim.trims == HANDS + 1


def test_heap_trimmed_after_every_journal_rotation_too(
    mosquitto: Mosquitto, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # segments of 40 kB: the journal rotates every hand or two, between hands
    _, log = play(mosquitto, tmp_path, monkeypatch, max_segment_mb=0.04)
    rotations = [i for i, e in enumerate(log) if e[0] == "rotate"]
    assert len(rotations) >= 2, log
    assert not [e for e in log if e[2]], f"trimmed or rotated during a hand: {log}"
    for i in rotations:  # what the gzip freed goes back at once, in the same pass
        assert log[i + 1][0] == "trim", log
    hands_trimmed = {number for what, number, _ in log if what == "trim"}
    assert hands_trimmed == set(range(HANDS + 1))
