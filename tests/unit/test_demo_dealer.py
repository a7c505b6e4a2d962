"""The demo dealer leaves a clean table after every hand, however it ended: no chip stays
on the pot antenna, so a day of demo hands neither grows the engine's chip positions nor,
with a table's chip set reused, reads one chip in two places."""

from __future__ import annotations

from controller.cli import DEFAULT_SIM_CONFIG, demo_events
from controller.config import load_config
from controller.replay import build_engine
from controller.trace import ButtonPress, TagIn, TagOut


def test_every_chip_leaves_the_pot_by_the_next_hand_and_a_reused_chip_set_reads_clean() -> None:
    config = load_config(DEFAULT_SIM_CONFIG)
    engine = build_engine(config)
    on_pot: set[str] = set()
    hands = 0
    problems: list[str] = []
    for event in demo_events(config, 150, seed=5, chip_set=600):  # wraps every ~12 hands
        if isinstance(event, ButtonPress) and event.name == "shuffler":
            if on_pot:
                problems.append(f"hand {hands}: left on the pot {sorted(on_pot)}")
            hands += 1
        if isinstance(event, TagIn) and event.antenna == "pot" and event.chip:
            on_pot.add(event.chip)
        elif isinstance(event, TagOut) and event.antenna == "pot" and event.chip:
            on_pot.discard(event.chip)
        for message in engine.apply(event):
            kind = message.payload.get("type")
            if kind in ("chip_at_two_antennas", "floor_needed", "out_of_turn"):
                problems.append(f"hand {hands}: {kind}: {message.payload.get('message')}")
    assert hands == 150
    assert problems == []
