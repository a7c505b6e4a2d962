"""The demo dealer leaves a clean table after every hand, however it ended: no chip stays
on the pot antenna, so a day of demo hands neither grows the engine's chip positions nor,
with a table's chip set reused, reads one chip in two places."""

from __future__ import annotations

from controller.config import load_config
from controller.replay import build_engine
from kernel.inputs import ButtonPress, TagIn, TagOut
from sim.demo import demo_events
from sim.tables import DEFAULT_SIM_CONFIG


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
        chip = getattr(event, "uid", None) or getattr(event, "chip", None)
        if isinstance(event, TagIn) and event.antenna == "pot" and chip:
            on_pot.add(chip)
        elif isinstance(event, TagOut) and event.antenna == "pot" and chip:
            on_pot.discard(chip)
        for message in engine.apply(event):
            kind = message.payload.get("type")
            if kind in ("chip_at_two_antennas", "floor_needed", "out_of_turn"):
                problems.append(f"hand {hands}: {kind}: {message.payload.get('message')}")
    assert hands == 150
    assert problems == []


def test_the_demo_is_a_cash_game_on_the_tables_chip_set_with_dealing_errors_put_right() -> None:
    """400 hands: players rebuy and leave (the game never ends by itself), every chip is a
    registered tag from the rack (never two places at once, never short), and the
    misdeals the dealer makes on purpose are each re-dealt."""
    from kernel.inputs import Command
    from sim import demo as simdemo

    config = load_config(DEFAULT_SIM_CONFIG)
    engine = build_engine(config)
    registered = {uid for uid, _ in engine.chips.items()} if engine.chips else set()
    racks: list[simdemo.ChipRack] = []
    made = simdemo.ChipRack.__init__

    def watch(self: simdemo.ChipRack, *args: object) -> None:
        made(self, *args)  # type: ignore[arg-type]
        racks.append(self)

    simdemo.ChipRack.__init__ = watch  # type: ignore[method-assign]
    try:
        commands: list[str] = []
        kinds: list[str] = []
        for event in demo_events(config, 400, seed=6):
            if isinstance(event, Command):
                commands.append(event.name)
            if isinstance(event, TagIn | TagOut) and event.antenna.startswith(("bet", "pot")):
                assert event.uid in registered and event.chip is None
            for message in engine.apply(event):
                if message.topic in ("alerts", "events"):
                    kinds.append(str(message.payload.get("type")))
    finally:
        simdemo.ChipRack.__init__ = made  # type: ignore[method-assign]
    assert kinds.count("hand_completed") == 400
    assert commands.count("stack") > 50 and commands.count("unseat") > 5  # rebuys, leavers
    assert racks[0].minted == 0  # the chip set was never short
    misdeals = kinds.count("misdeal")
    assert misdeals >= 5 and kinds.count("procedure_completed") == misdeals  # all re-dealt
    unexpected = set(kinds) - {
        "hand_started", "posted", "declared", "action", "board_dealt", "showdown",
        "hands_tabled", "pot_awarded", "hand_completed", "uncalled_bet_returned", "misdeal",
        "procedure_required", "procedure_completed", "dealer_changed", "hand_mucked",
    }  # fmt: skip
    assert unexpected == set()
    assert sum(1 for s in engine.seats.values() if s.player is not None) == 9
