"""Writes the money-rule scenario traces (TDA 2019 17-A, 20, 48, 51-B; the house rake, split
units, undercalls and showdown order; a chip read in two places).

Run from the repository root: `python -m tests.scenarios.build_money`, then
`python -m tests.scenarios.build_money --expected` to replay them into their
`.expected.jsonl` files (read those before committing them). The `rule_*` and `profile_*`
traces are checked by `tests/scenarios/test_dealing_scenarios.py` against their `# expect:`
lines (a `profile_*` one must fail under tda-2019); every trace's output byte for byte by
`tests/scenarios/test_replay.py`.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from tests.scenarios.build_dealing import FLOP, HERE, HOLE, ROOT, Trace

HOLE3 = {1: ["2h", "3h"], 2: ["4d", "5d"], 3: ["6c", "7c"]}  # three seats, the button on 3
CHIP_TRACES = ("chip_read_in_two_bet_zones_counted_once",)


def _three_seats(title: str, **kw: Any) -> Trace:
    """A trace with three players, the button on seat 3."""
    return Trace(title, players=3, button=3, **kw)


def _raise_to_300_then_undercall(t: Trace) -> Trace:
    """Seat 3 raises to 300 over the big blind; the button puts out 100 silently."""
    return t.shuffler().blinds().deal(HOLE).push(3, 100, 100, 100).push(4, 100)


def _blinds_finish_preflop(t: Trace) -> Trace:
    """The small blind and the big blind call the 300 (the button has acted)."""
    return t.push(1, 100, 100, 50).push(2, 100, 100).street(FLOP, "2d")


def _limit_blinds_raise_four_times(t: Trace) -> Trace:
    """Fixed limit, three seats: the button folds; the blinds raise each other four times."""
    t.shuffler().blinds().deal(HOLE3).fold(3)
    for seat, chips in ((1, (100, 50)), (2, (100, 100)), (1, (100, 100)), (2, (100, 100))):
        t.press("raise").push(seat, *chips)
    return t


def _pot_pushed(t: Trace) -> Trace:
    """At the showdown the dealer pushes the pot (a chip leaves the pot antenna)."""
    return t.add(event="tag_out", antenna="pot", chip="pot0", value=1)


def _checked_down_split(t: Trace) -> Trace:
    """Three seats, the button on 3: the small blind folds its 50, the big blind and the
    button check it down on a royal flush board and split 250."""
    t.shuffler().blinds().deal(HOLE3).push(3, 100).fold(1).press("check")
    t.street(["As", "Ks", "Qs"], "2c").checks(2).street(["Js"], "3c").checks(2)
    return _pot_pushed(t.street(["Ts"], "4c").checks(2))


def _turn_bet_river_checked(t: Trace) -> Trace:
    """Three seats: seat 2 bets the turn and is called twice, the river is checked."""
    t.shuffler().blinds().deal(HOLE3).push(3, 100).push(1, 50).press("check")
    t.street(["Ah", "Kc", "9d"], "2c").checks(3).street(["8s"], "3c").press("check")
    return t.push(2, 100).push(3, 100).push(1, 100).street(["Qd"], "4c").checks(3)


def _raked_hand(t: Trace) -> Trace:
    """400 pre-flop, 300 bet and called on the flop, checked down: seat 3's nines win 1000."""
    t.shuffler().blinds().deal(HOLE).preflop_calls().street(FLOP, "2d").checks(2)
    t.push(3, 100, 100, 100).push(4, 100, 100, 100).fold(1).fold(2)
    t.street(["8h"], "3c").checks(2).street(["Jh"], "4d").checks(2)
    return _pot_pushed(t)


def build() -> None:
    """Write every money-rule trace."""
    undercall = "Rule 51-B: in blind games the posted big blind is the pre-flop opener; "
    t = Trace(
        undercall + "the button's undercall of a raise, multi-way, is the floor's discretion. "
        "The floor lets it fold: the 100 put out are forfeited to the pot."
    )
    t.expect(type="floor_needed", seat=4, rule="51-B", choices=["full_call", "fold"])
    t.expect(type="action", seat=4, action="fold", rule="51-B", forfeited=100)
    _blinds_finish_preflop(_raise_to_300_then_undercall(t).fold(4))
    t.write("rule_51B_preflop_undercall_of_a_raise_the_floor_allows_the_fold")

    # The button completes the call: a full call the floor ruled (Venezia), or one the
    # house's text makes mandatory (Campione).
    completed = {
        "rule_51B_venezia_art_30A_preflop_undercall_the_floor_rules_a_full_call": (
            "Venezia art. 30A is rule 51-B: the big blind is the pre-flop opener, an undercall "
            "of a raise multi-way goes to the floor. The floor rules a full call: the rest "
            "comes out.",
            "venezia",
            [
                {"type": "floor_needed", "seat": 4, "rule": "51-B", "profile_rule": "art. 30A"},
                {"type": "action", "seat": 4, "action": "call", "amount": 300, "rule": None},
            ],
        ),
        "profile_campione_dead_money_undercall_is_completed": (
            'Campione, "Dead Money": an insufficient bet must be completed to a call; the '
            "floor is offered no fold. The rest of the call comes out and is no new push.",
            "campione",
            [
                {"type": "action", "seat": 4, "action": "call", "amount": 300, "rule": "51-B"}
                | {"owed": 200},
                {"type": "action", "seat": 1, "action": "call", "amount": 300},
            ],
        ),
    }
    for name, (title, profile, expects) in completed.items():
        t = Trace(title, profile=profile)
        for expect in expects:
            t.expect(**expect)
        _blinds_finish_preflop(_raise_to_300_then_undercall(t).push(4, 100, 100)).write(name)

    t = _three_seats(
        "Rule 48: in fixed limit the cap (a bet and three raises) holds even heads-up in the "
        "hand, until the event is down to two players: the fourth raise is a call.",
        game="flhe",
    )
    t.expect(type="action", seat=2, action="call", amount=400, rule="48", change=100)
    _limit_blinds_raise_four_times(t).write("rule_48_limit_cap_holds_heads_up_in_the_hand")

    t = _three_seats(
        "Rule 48: once the room says the event is down to two players (`level` with "
        "`event_heads_up`), the cap is lifted: the fourth raise stands.",
        game="flhe",
    )
    t.cmd("level", small_blind=50, big_blind=100, ante=0, event_heads_up=True)
    t.expect(type="action", seat=2, action="raise", amount=500)
    _limit_blinds_raise_four_times(t).write("rule_48_limit_cap_lifted_once_the_event_is_heads_up")

    t = _three_seats(
        "Casinos Austria art. 12: in limit games three raises per round, no cap once only two "
        "players are left in the hand: the fourth raise stands.",
        profile="casinos-austria",
        game="flhe",
    )
    t.expect(type="action", seat=2, action="raise", amount=500)
    _limit_blinds_raise_four_times(t).write(
        "profile_casinos_austria_limit_cap_lifted_heads_up_in_the_hand"
    )

    t = _three_seats(
        "Rule 20 / Casinos Austria art. 32: a split pot is divided only down to the blind "
        "(50); the odd unit goes to the first winner left of the button. TDA splits 125/125.",
        profile="casinos-austria",
    )
    t.expect(type="pot_awarded", shares={"2": 150, "3": 100}, rule="20-A")
    _checked_down_split(t).write("profile_casinos_austria_split_pot_divided_down_to_the_blind")

    t = _three_seats(
        "Rule 17-A / Casinos Austria art. 14: the last to bet or raise shows first, even when "
        "the river was checked (TDA: the first seat left of the button).",
        profile="casinos-austria",
    )
    t.expect(type="showdown", order=[2, 3, 1], rule="17-A")
    _turn_bet_river_checked(t).write(
        "profile_casinos_austria_showdown_the_hands_last_aggressor_first"
    )

    t = Trace(
        'Campione, "Rake": 5% of a pot that saw a flop, capped at 25, taken from the main pot; '
        "the winner's share is net of it, and the hand's rake is on hand_completed.",
        profile="campione",
    )
    t.expect(type="pot_awarded", amount=1000, rake=25, shares={"3": 975}, house_rule="rake")
    t.expect(type="hand_completed", rake=25)
    _raked_hand(t).write("profile_campione_rake_taken_after_the_flop")

    t = Trace(
        'Campione, "Rake": no flop, no drop. Seat 3 raises, everyone folds: no rake.',
        profile="campione",
    )
    t.expect(type="pot_awarded", amount=250, rake=0, shares={"3": 250})
    t.shuffler().blinds().deal(HOLE).push(3, 100, 100, 100).fold(4).fold(1).fold(2)
    t.write("profile_campione_rake_no_flop_no_drop")

    t = Trace(
        "A chip read in a second bet zone before it left the first is counted once, where it "
        "was first read; the dealer is told (chip_at_two_antennas). Once it leaves the first "
        "zone it counts where it is still read: seat 3 called with it, then it slid on to seat "
        "4's zone and became seat 4's call."
    )
    t.shuffler().blinds().deal(HOLE)
    t.add(0.05, event="tag_in", antenna="bet3", chip="c9999", value=100).add(1.1, event="tick")
    t.add(0.05, event="tag_in", antenna="bet4", chip="c9999", value=100).add(1.1, event="tick")
    t.add(0.05, event="tag_out", antenna="bet3", chip="c9999", value=100).add(1.1, event="tick")
    t.push(1, 50).press("check").street(FLOP, "2d")
    t.write(CHIP_TRACES[0])


def expected() -> None:
    """Replay the traces of this builder into their .expected.jsonl (build_dealing's replay
    covers the rule_ and profile_ ones; the chip trace here)."""
    from tests.scenarios import build_dealing

    build_dealing.expected()
    for name in CHIP_TRACES:
        trace = HERE / f"{name}.jsonl"
        args: list[Any] = [sys.executable, "-m", "tablectl.cli", "replay", str(trace)]
        args += ["--config", str(ROOT / "examples" / "sim-table.toml")]
        out = subprocess.run(args, capture_output=True, check=True, cwd=ROOT).stdout
        trace.with_name(f"{name}.expected.jsonl").write_bytes(out)


if __name__ == "__main__":
    if "--expected" in sys.argv:
        expected()
    else:
        build()
