"""The boards' focus from the engine's published state (controller/focus.py): a whole hand
replayed through the engine, and the states that must leave every antenna in turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.config import load_config
from controller.focus import EVERYWHERE, FocusTracker, deal_order
from controller.replay import build_engine
from controller.trace import load_trace
from kernel.messages import STATE

ROOT = Path(__file__).resolve().parents[2]
CONFIG = load_config(ROOT / "examples" / "sim-table.toml")


def focus_through(trace: str) -> list[tuple[float, str, list[str]]]:
    """Every published state of a scenario through the engine, and the focus after it."""
    engine = build_engine(CONFIG)
    tracker = FocusTracker()
    out = []
    for event in load_trace(ROOT / "tests" / "scenarios" / trace):
        for message in engine.apply(event):
            if message.topic == STATE:
                focus = tracker.update(message.payload)
                out.append((message.payload["t"], focus.why, sorted(focus.antennas)))
    return out


def test_a_hand_dealt_to_the_river_moves_the_focus_with_it() -> None:
    seen = focus_through("deal_one_hand.jsonl")
    at = {t: (why, names) for t, why, names in seen}
    assert at[0.0] == ("between hands", [])  # seating, the level: every antenna in turn
    # the shuffler: the first two seats left of the button (3), the blinds' zones
    assert at[1.0] == ("deal", ["bet1", "bet2", "seat1", "seat2"])
    assert at[1.5] == ("deal", ["bet1", "bet2", "bet3", "seat2", "seat3"])
    assert at[1.6] == ("deal", ["bet1", "bet2", "bet3", "seat1", "seat3"])  # second round
    assert at[1.9] == ("deal", ["bet1", "bet2", "bet3", "seat3"])  # the last card
    # betting: the seat to act, its zone, the muck (a fold)
    assert at[2.0] == ("betting", ["bet3", "muck", "seat3"])
    assert at[2.4] == ("betting", ["bet1", "muck", "seat1"])
    # the round closed: the flop is due, the bets are gathered into the pot
    assert at[2.6] == ("street", ["bet1", "bet2", "bet3", "board", "burn"])
    assert at[3.4] == ("betting", ["bet1", "muck", "seat1"])  # flop dealt: gathered
    # checked round: no chips, but the last actor's zone (a call would close it too)
    assert at[3.7] == ("street", ["bet3", "board", "burn"])
    assert at[5.5] == ("end of hand", ["bet3", "muck", "pot", "seat1", "seat2", "seat3"])
    assert at[6.0] == ("between hands", [])  # the pot pushed: the hand is over
    assert at[10.0] == ("deal", ["bet1", "bet2", "bet3", "seat2", "seat3"])  # button 1 now


def state(**fields: Any) -> dict[str, Any]:
    seats = {
        str(n): {"player": f"P{n}", "stack": 1000, "bet": 0, "status": "active", "cards": 2}
        for n in (1, 2, 3, 4)
    }
    base: dict[str, Any] = {
        "hand": 7,
        "street": "flop",
        "button": 4,
        "board": ["Ah", "Kd", "2c"],
        "to_act": 2,
        "held": [],
        "procedures": [],
        "level": {"small_blind": 50, "big_blind": 100, "ante": 0},
        "seats": seats,
    }
    base.update(fields)
    return base


def test_a_held_table_or_a_procedure_reads_every_antenna_in_turn() -> None:
    tracker = FocusTracker()
    assert tracker.update(state()).antennas == {"seat2", "muck", "bet2"}
    held = tracker.update(state(held=["chip_reader"]))
    assert held.antennas == frozenset() and held.why == "held"
    misdeal = {"procedure": "misdeal", "rule": "35A-2", "instruction": "...", "stage": "x"}
    proc = tracker.update(state(procedures=[misdeal]))
    assert proc.antennas == frozenset() and proc.why == "procedure"
    assert tracker.update(state(hand=None)) == EVERYWHERE


def test_the_chips_of_a_closed_round_stay_in_focus_until_the_next_street() -> None:
    tracker = FocusTracker()
    betting = state()
    betting["seats"]["1"]["bet"] = 300
    betting["seats"]["2"]["bet"] = 300
    tracker.update(betting)
    closed = tracker.update(state(to_act=None))  # the engine reads no bet any more
    assert closed.why == "street"
    assert closed.antennas == {"burn", "board", "bet1", "bet2"}
    turn = tracker.update(state(street="turn", board=["Ah", "Kd", "2c", "9s"], to_act=1))
    assert turn.antennas == {"seat1", "muck", "bet1"}


def test_a_call_that_closes_the_round_has_its_chips_gathered_too() -> None:
    """The last call settles and closes the round in one input: the state never shows its
    bet, yet the dealer gathers it with the others."""
    tracker = FocusTracker()
    betting = state(to_act=3)
    betting["seats"]["1"]["bet"] = 400
    tracker.update(betting)
    closed = tracker.update(state(to_act=None))
    assert closed.antennas == {"burn", "board", "bet1", "bet3"}


def test_one_player_left_or_the_river_closed_is_the_end_of_the_hand() -> None:
    tracker = FocusTracker()
    folded = state(to_act=None)
    for n in ("1", "2", "3"):
        folded["seats"][n]["status"] = "folded"
        folded["seats"][n]["cards"] = 0
    end = tracker.update(folded)
    assert end.why == "end of hand" and end.antennas == {"pot", "muck", "seat4"}
    river = tracker.update(state(street="river", to_act=None))
    assert river.antennas == {"pot", "muck", "seat1", "seat2", "seat3", "seat4"}


def test_antes_are_posted_in_every_zone_and_heads_up_the_button_deals_last() -> None:
    tracker = FocusTracker()
    fresh = state(street="preflop", board=[], to_act=None)
    fresh["level"]["ante"] = 25
    for seat in fresh["seats"].values():
        seat["cards"] = 0
    deal = tracker.update(fresh)
    assert deal.why == "deal"
    assert deal.antennas == {"seat1", "seat2", "bet1", "bet2", "bet3", "bet4"}
    assert deal_order([2, 7], 7) == [2, 7] and deal_order([2, 7], 2) == [7, 2]
    assert deal_order([1, 3, 5], None) == [1, 3, 5]
