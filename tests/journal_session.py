"""Journal sessions shared by the unit and system tests of the journal: a six-seat table with
a segmented journal, a session of random hands with room commands, the daemon's own
journal-then-apply path without devices or broker, and the example table's config."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.journal import open_journal
from controller.replay import build_engine
from kernel.inputs import Command, Event
from kernel.messages import Message
from sim.dealer import DealerClock, TableDealer, seat_players
from sim.plans import random_hand

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sim-table.toml"


EPOCH = 1_700_000_000.0


TABLE_TOML = """
[table]
id = "t01"
room = "sim"
seats = 6

[devices.badge_reader]
backend = "none"

[journal]
directory = "journal"
max_segment_mb = 0.01
"""


def make_config(tmp_path: Path, journal: str = "") -> Config:
    path = tmp_path / "t01.toml"
    path.write_text(TABLE_TOML + journal)
    return load_config(path)


def session(config: Config, hands: int, seed: int = 3) -> list[Event]:
    """Seat six players, then random hands with room commands between some of them
    (level changes, a player leaving, a new player sitting down, a button placement)."""
    events: list[Event] = seat_players(
        [(s, f"P{s}", 5_000) for s in range(1, 6)], (50, 100, 0), button=5
    )
    shadow = build_engine(config)
    for event in events:
        shadow.apply(event)
    rng = random.Random(seed)
    dealer = TableDealer(DealerClock(0.5), settle=config.rules.settle_seconds)
    for number in range(hands):
        hand = random_hand(shadow, dealer, rng)
        between: list[Event] = []
        t = dealer.clock.t
        if number == 1:
            between = [Command(t, "level", {"small_blind": 100, "big_blind": 200, "ante": 25})]
        elif number == 2:
            between = [Command(t, "unseat", {"seat": 2})]
        elif number == 3:
            between = [Command(t, "seat", {"seat": 6, "player": "New", "stack": 4_000})]
        elif number == 5:
            between = [Command(t, "button", {"seat": 4})]
        if hand:
            # A command during the hand (rule 23: a level applies from the next hand).
            hand.insert(
                2,
                Command(
                    hand[1].t, "level", {"small_blind": 100 + number, "big_blind": 300, "ante": 0}
                ),
            )
        for event in [*hand, *between]:
            shadow.apply(event)
        events += [*hand, *between]
        dealer.clock.step(1.0)
    return events


def run_daemon(config: Config, events: list[Event]) -> tuple[Daemon, list[list[Message]]]:
    """The daemon's own journal-then-apply path (no devices, no broker), a batch per input."""
    daemon = Daemon(config, clock=lambda: EPOCH)
    daemon.journal = open_journal(config.journal, config.table.id, now=EPOCH)
    assert daemon.journal is not None
    daemon.epoch = daemon.journal.epoch
    out = [daemon.handle([event]) for event in events]
    return daemon, out


def full_run_snapshot(config: Config, events: list[Event]) -> dict[str, Any]:
    engine = build_engine(config)
    for event in events:
        engine.apply(event)
    return engine.snapshot()


def sim_config(tmp_path: Path) -> Config:
    config = load_config(EXAMPLE)
    return dataclasses.replace(
        config, journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal")
    )


def offline_daemon(config: Config) -> Daemon:
    """The daemon's journal-then-publish path alone (no devices, no broker)."""
    daemon = Daemon(config, clock=lambda: 1_700_000_000.0)
    daemon.journal = open_journal(config.journal, config.table.id, now=1_700_000_000.0)
    return daemon


SEATS = [
    Command(0.0, "seat", {"seat": 1, "player": "Alice", "stack": 20000, "id": "r1"}),
    Command(0.0, "seat", {"seat": 2, "player": "Bruno", "stack": 20000, "id": "r2"}),
]
