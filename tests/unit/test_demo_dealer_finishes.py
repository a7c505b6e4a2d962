"""The demo dealer always finishes the hand it deals: every rule profile, every game, 210
seeds, every hand with a dealing error made on purpose (a misdeal, 35A-2; a premature flop,
RP-5A; a four-card flop, 39; folds and chips out of turn, 58, 53-A, 53-B) that the table
catches and the
dealer then puts right as the table instructs; and under casinos-austria the hands start on
the first card, as that house's do."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from controller.config import GAMES, Config, load_config
from controller.engine import Engine
from controller.replay import build_engine
from controller.rules.profiles import PROFILES
from kernel.inputs import Event
from sim.demo import demo_events
from sim.mistakes import MISTAKES
from sim.tables import DEFAULT_SIM_CONFIG

SEEDS_PER_CASE = 14  # x 5 profiles x 3 games = 210 seeds
HANDS = 4


def _config(profile: str, game: str) -> Config:
    base = load_config(DEFAULT_SIM_CONFIG)
    return dataclasses.replace(
        base, rules=dataclasses.replace(base.rules, profile=profile, game=game)
    )


def _deal(config: Config, events: list[Event] | None = None, **kwargs: object) -> Counter[str]:
    """Play the demo on an engine of `config`; the kinds of messages it published."""
    engine = build_engine(config)
    kinds: Counter[str] = Counter()
    for event in demo_events(config, **kwargs):  # type: ignore[arg-type]
        if events is not None:
            events.append(event)
        for message in engine.apply(event):
            kinds[f"{message.topic}:{message.payload.get('type')}"] += 1
            if message.topic == "events" and message.payload.get("type") == "hand_started":
                kinds[f"trigger:{message.payload.get('trigger')}"] += 1
    assert engine.hand is None  # no hand left in progress
    assert not engine.holds  # nothing holds the table for the next one
    return kinds


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_every_hand_requested_completes_with_a_dealing_error_in_each(
    profile: str, game: str
) -> None:
    config = _config(profile, game)
    seen: Counter[str] = Counter()
    for seed in range(SEEDS_PER_CASE):
        kinds = _deal(
            config,
            hands=HANDS,
            seed=seed,
            errors=sorted(MISTAKES),
            error_every=1,
            clean_start=0,
        )
        assert kinds["events:hand_completed"] == HANDS, (profile, game, seed, kinds)
        seen += kinds
    # the errors were made, the table caught them, and the dealer followed its procedures
    # (the floor called where the house gives none) without a single violation
    assert seen["events:premature_card"] > 0 and seen["events:four_card_flop"] > 0
    assert seen["events:out_of_turn"] > 0 and seen["events:floor_ruling"] > 0
    assert seen["events:skipped_hand"] > 0  # 53-B: the floor ruled, the seat acted
    assert seen["events:procedure_violation"] == 0
    if "shuffler" in PROFILES[profile].hand_start_triggers:
        assert seen["events:misdeal"] > 0
        assert seen["events:procedure_completed"] > 0
    else:  # casinos-austria: the hand starts on its first card
        assert seen["trigger:first_card"] == SEEDS_PER_CASE * HANDS


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_the_demo_as_shipped_deals_under_every_profile(profile: str) -> None:
    """The default demo (its own misdeals only): every hand dealt and completed, clean."""
    for game in GAMES:
        kinds = _deal(_config(profile, game), hands=12, seed=3)
        assert kinds["events:hand_completed"] == 12, (profile, game, kinds)
        assert kinds["events:out_of_turn"] == 0 and kinds["events:premature_card"] == 0


def test_an_unknown_dealing_error_is_refused() -> None:
    from kernel.errors import TableError

    with pytest.raises(TableError, match="no such dealing error: shuffle_twice"):
        next(demo_events(_config("tda-2019", "nlhe"), 1, 1, errors=["shuffle_twice"]))


@pytest.mark.parametrize("game", ["plhe", "flhe"])
def test_a_dealer_whose_reckoning_parts_from_the_table_follows_the_table(game: str) -> None:
    """The dealer reckons a no-limit game while the table it deals at plays `game`: its
    bets and all-ins over the limit are read otherwise (52-B, fixed sizes), the table and
    its reckoning part, and the dealer finishes each hand from the table's own state."""
    tables: list[Engine] = []
    completed = 0
    parted = 0
    for seed in range(6):
        tables.append(build_engine(_config("tda-2019", game)))
        table = tables[-1]
        for event in demo_events(_config("tda-2019", "nlhe"), 8, seed, live=lambda: tables[-1]):
            for message in table.apply(event):
                if message.topic == "events" and message.payload["type"] == "hand_completed":
                    completed += 1
                if message.topic == "alerts":
                    parted += 1
        assert table.hand is None and not table.holds
    assert completed == 6 * 8
    assert parted > 0  # the table did read the dealing otherwise
