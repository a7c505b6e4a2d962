"""The money rules in the engine: undercalls (TDA 2019 51-B), the limit raise cap (48), chips
read in two places at once, the house rake (Campione "Rake") and split-pot units (rule 20,
Casinos Austria art. 32)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

from controller.engine.checkpoint import checkpoint, restore
from controller.phh import HandMessages, build_phh, split_hands
from controller.phh_judge import judge
from controller.rules.betting import house_raise_cap
from controller.rules.chips import facing_opening_bet, undercall_ruling
from controller.rules.pots import Pot, division_unit, split_pot, take_rake
from kernel.inputs import Event
from tablectl.cli import main
from tests.engine_helpers import Table, ev, new_engine, run

HOLE4 = {1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"], 4: ["7h", "2c"]}


def _preflop(profile: str = "tda-2019", **kw: Any) -> Table:
    """Four players, the button on seat 4: seat 1 posts the small blind, seat 2 the big."""
    table = Table(seats=(1, 2, 3, 4), button=4, profile=profile, **kw)
    table.shuffle()
    table.push(1, 50)
    table.push(2, 100)
    table.deal(HOLE4)
    return table


def _on_the_flop(profile: str = "tda-2019") -> Table:
    """Everyone calls the big blind, the big blind checks: 400 in the pot, the flop dealt."""
    table = _preflop(profile)
    table.push(3, 100)
    table.push(4, 100)
    table.push(1, 50)
    table.button("check")
    table.board("Td", "5s", "4c", burn="2d")
    return table


def _floor_needed(table: Table) -> list[dict[str, Any]]:
    return [a for a in table.alerts() if a["type"] == "floor_needed"]


def test_rule_51B_preflop_undercall_of_a_raise_multiway_is_the_floors_discretion() -> None:
    table = _preflop()
    table.push(3, 100, 100, 100)  # seat 3 raises to 300 over the big blind, the opener
    table.push(4, 100)  # seat 4 puts out 100 silently: an undercall of the raise
    (alert,) = _floor_needed(table)
    assert alert["seat"] == 4 and alert["rule"] == "51-B"
    assert alert["choices"] == ["full_call", "fold"]
    assert "full call (add 200)" in alert["message"] and "fold" in alert["message"]
    # Nothing is recorded yet: seat 4 is still to act and the floor lamp is lit.
    assert [a[0] for a in table.actions()] == [3]
    assert table.state["to_act"] == 4 and table.engine.lamps()["floor"]


def test_rule_51B_the_floor_rules_a_full_call_the_player_adds_the_rest() -> None:
    table = _preflop()
    table.push(3, 100, 100, 100)
    table.push(4, 100)
    table.push(4, 100, 100)  # the floor rules a full call: the rest of the call comes out
    assert table.actions()[-1] == (4, "call", 300, None)
    assert table.stacks()[4] == 10_000 - 300
    assert not table.engine.lamps()["floor"]


def test_rule_51B_the_floor_allows_the_fold_the_undercall_is_forfeited() -> None:
    table = _preflop()
    table.push(3, 100, 100, 100)
    table.push(4, 100)
    table.fold(4)  # the floor lets seat 4 fold: its 100 stay in the pot
    last = table.events("action")[-1]
    assert (last["seat"], last["action"], last["rule"], last["forfeited"]) == (
        4,
        "fold",
        "51-B",
        100,
    )
    assert table.stacks()[4] == 10_000 - 100
    assert (
        sum(p["amount"] for p in table.state["pots"])
        + sum(s["bet"] for s in table.state["seats"].values())
        == 50 + 100 + 300 + 100
    )
    assert not table.engine.lamps()["floor"]


def test_rule_51B_preflop_undercall_of_the_big_blind_is_a_full_call() -> None:
    table = _preflop()
    table.push(3, 25, 25)  # 50 facing the big blind: the posted big blind is the opener
    assert _floor_needed(table) == []
    assert table.actions()[-1] == (3, "call", 100, "51-B")
    assert table.events("action")[-1]["owed"] == 50


def test_rule_51B_postflop_undercall_of_the_opening_bet_is_a_full_call() -> None:
    table = _on_the_flop()
    table.push(1, 500)  # seat 1 opens for 500 (rule 51 example 2)
    table.push(2, 100)  # seat 2 silently puts out 100
    assert _floor_needed(table) == []
    assert table.actions()[-1] == (2, "call", 500, "51-B")


def test_rule_51B_postflop_undercall_of_a_raise_multiway_is_the_floors_discretion() -> None:
    table = _on_the_flop()
    table.push(1, 100)  # seat 1 opens for 100 (rule 51 example 1)
    table.push(2, 100, 100, 100, 100)  # seat 2 raises to 400
    table.push(3, 100)  # seat 3 puts out 100: not the opener, multi-way
    (alert,) = _floor_needed(table)
    assert alert["seat"] == 3 and alert["choices"] == ["full_call", "fold"]


def test_rule_51B_heads_up_undercall_of_a_raise_is_a_full_call() -> None:
    table = Table(seats=(1, 2), button=1)
    table.shuffle()
    table.push(1, 50)
    table.push(2, 100)
    table.deal({1: HOLE4[1], 2: HOLE4[2]})
    table.push(1, 100, 100, 50)  # the button (small blind) raises to 300
    table.push(2, 100)  # the big blind puts out 100 more: heads-up, a full call
    assert _floor_needed(table) == []
    assert table.actions()[-1] == (2, "call", 300, "51-B")


def test_rule_51B_venezia_art_30A_rules_the_same() -> None:
    table = _preflop("venezia")
    table.push(3, 100, 100, 100)
    table.push(4, 100)
    (alert,) = _floor_needed(table)
    assert alert["rule"] == "51-B" and alert["profile_rule"] == "art. 30A"


def test_rule_51B_campione_dead_money_an_undercall_is_always_completed() -> None:
    table = _preflop("campione")
    table.push(3, 100, 100, 100)
    table.push(4, 100)
    assert _floor_needed(table) == []
    last = table.events("action")[-1]
    assert (last["seat"], last["action"], last["amount"], last["owed"]) == (4, "call", 300, 200)
    assert last["profile_rule"] == 'sez. "Dead Money"'
    table.push(4, 100, 100)  # the rest of the call comes out: it pays what is owed
    assert table.events("out_of_turn") == []
    assert table.state["to_act"] == 1 and table.stacks()[4] == 10_000 - 300


def _limit_heads_up_in_hand(profile: str = "tda-2019", *, event_heads_up: bool = False) -> Table:
    """Fixed limit, three players: the button folds, the blinds raise each other four times."""
    table = Table(seats=(1, 2, 3), button=3, game="flhe", profile=profile)
    if event_heads_up:
        table.do(*_level_event_heads_up(table))
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal({s: HOLE4[s] for s in (1, 2, 3)})
    table.fold(3)
    for seat, chips in ((1, (100, 50)), (2, (100, 100)), (1, (100, 100)), (2, (100, 100))):
        table.button("raise")
        table.push(seat, *chips)
    return table


def _level_event_heads_up(table: Table) -> list[Event]:
    """The room's `level` command saying the event is down to two players (rule 48)."""
    level = {"small_blind": 50, "big_blind": 100, "ante": 0, "event_heads_up": True}
    return [ev(t=table.step(), event="command", name="level", **level)]


def test_rule_48_the_cap_holds_heads_up_in_the_hand() -> None:
    table = _limit_heads_up_in_hand()
    last = table.events("action")[-1]
    assert (last["seat"], last["action"], last["amount"], last["rule"]) == (2, "call", 400, "48")
    assert last["change"] == 100


def test_rule_48_casinos_austria_art_12_lifts_the_cap_heads_up_in_the_hand() -> None:
    table = _limit_heads_up_in_hand("casinos-austria")
    last = table.events("action")[-1]
    assert (last["seat"], last["action"], last["amount"]) == (2, "raise", 500)


def test_rule_48_the_cap_is_lifted_once_the_room_says_the_event_is_heads_up() -> None:
    table = _limit_heads_up_in_hand(event_heads_up=True)
    last = table.events("action")[-1]
    assert (last["seat"], last["action"], last["amount"]) == (2, "raise", 500)
    assert table.state["level"]["event_heads_up"] is True


ROYAL = ["As", "Ks", "Qs", "Js", "Ts"]


def _three_seats_called(profile: str) -> Table:
    """Three players, the button on seat 3: blinds posted, cards dealt, the button calls."""
    table = Table(seats=(1, 2, 3), button=3, profile=profile)
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal({1: ["2h", "3h"], 2: ["4d", "5d"], 3: ["6c", "7c"]})
    table.push(3, 100)
    return table  # the board plays: every live hand ties


def _split_pot(profile: str) -> Table:
    """Three players, the button on seat 3: the small blind folds its 50 pre-flop, the big
    blind and the button check it down on a royal flush board and split 250."""
    table = _three_seats_called(profile)
    table.fold(1)
    table.button("check")
    table.board(*ROYAL[:3], burn="2c")
    table.button("check")
    table.button("check")
    table.board(ROYAL[3], burn="3c")
    table.button("check")
    table.button("check")
    table.board(ROYAL[4], burn="4c")
    table.button("check")
    table.button("check")
    table.push_pot()
    return table


def test_rule_20_tda_splits_down_to_the_smallest_chip() -> None:
    (pot,) = _split_pot("tda-2019").events("pot_awarded")
    assert pot["shares"] == {"2": 125, "3": 125}
    assert "rake" not in pot


def test_rule_20_casinos_austria_art_32_divides_only_down_to_the_blind() -> None:
    (pot,) = _split_pot("casinos-austria").events("pot_awarded")
    # 250 in units of the small blind (50): two each, the odd unit to seat 2, the first
    # winner left of the button.
    assert pot["shares"] == {"2": 150, "3": 100}
    assert (pot["rule"], pot["profile_rule"]) == ("20-A", "art. 32")


def _campione_hand(*, fold_preflop: bool = False) -> Table:
    if fold_preflop:
        table = _preflop("campione")
        table.push(3, 100, 100, 100)
        table.fold(4)
        table.fold(1)
        table.fold(2)
        return table
    table = _on_the_flop("campione")  # 400 in the pot
    table.button("check")
    table.button("check")
    table.push(3, 100, 100, 100)  # 300 on the flop, called by the button only
    table.push(4, 100, 100, 100)
    table.fold(1)
    table.fold(2)
    for card, burn in (("8h", "3c"), ("Jh", "4d")):
        table.board(card, burn=burn)
        table.button("check")
        table.button("check")
    table.push_pot()
    table.shuffle()  # the next hand: hand 1 is completed
    return table


def test_campione_rake_is_taken_from_a_pot_that_saw_a_flop() -> None:
    table = _campione_hand()
    (pot,) = table.events("pot_awarded")
    # 1000 in the pot: 5% of 1000 is 50, capped at 25 (Campione "Rake").
    assert (pot["amount"], pot["rake"], pot["winners"]) == (1000, 25, [3])
    assert pot["shares"] == {"3": 975}
    completed = table.events("hand_completed")[0]
    assert completed["rake"] == 25
    assert completed["stacks"]["3"] == 10_000 - 400 + 975
    assert sum(completed["stacks"].values()) == 4 * 10_000 - 25


def test_campione_rake_no_flop_no_drop() -> None:
    table = _campione_hand(fold_preflop=True)
    (pot,) = table.events("pot_awarded")
    assert pot["rake"] == 0 and pot["shares"] == {"3": 250}  # the raise uncalled
    assert table.state["rake"] == 0


def test_campione_state_carries_the_hands_rake() -> None:
    table = _preflop("campione")
    assert table.state["rake"] == 0
    plain = _preflop()
    assert "rake" not in plain.state


def test_campione_rake_comes_from_the_main_pot_then_the_side_pots() -> None:
    pots = [Pot(15, (1, 2, 3)), Pot(500, (2, 3))]
    assert take_rake(pots, 25, main_pot_first=True) == [15, 10]
    assert take_rake(pots, 10, main_pot_first=True) == [10, 0]
    assert take_rake(pots, 0, main_pot_first=True) == [0, 0]


def test_rule_20_division_unit_by_house_text() -> None:
    assert division_unit("smallest_chip", smallest_chip=5, small_blind=50, big_blind=100) == 5
    assert division_unit("blind_or_ante", smallest_chip=5, small_blind=50, big_blind=100) == 50
    assert division_unit("blind_or_ante", smallest_chip=5, small_blind=0, big_blind=100) == 100
    # Casinos Austria art. 32: every odd unit to the first winner left of the button.
    assert split_pot(350, {1, 2, 3}, [1, 2, 3], 50) == {1: 150, 2: 100, 3: 100}
    assert split_pot(350, {1, 2, 3}, [1, 2, 3], 50, rest_to_first=True) == {1: 150, 2: 100, 3: 100}
    assert split_pot(400, {1, 2, 3}, [1, 2, 3], 50) == {1: 150, 2: 150, 3: 100}
    assert split_pot(400, {1, 2, 3}, [1, 2, 3], 50, rest_to_first=True) == {1: 200, 2: 100, 3: 100}


def _chip(table: Table, kind: str, antenna: str, chip: str, value: int) -> list[Any]:
    return table.do(ev(t=table.step(0.02), event=kind, antenna=antenna, chip=chip, value=value))


def test_chip_read_in_a_second_bet_zone_is_counted_once_and_the_dealer_told() -> None:
    table = _preflop()
    _chip(table, "tag_in", "bet3", "c777", 500)
    _chip(table, "tag_in", "bet4", "c777", 500)  # the same tag in the next zone, not left bet3
    table.do(ev(t=table.step(1.0), event="tick"))
    (alert,) = [a for a in table.alerts() if a["type"] == "chip_at_two_antennas"]
    assert alert["chip"] == "c777" and alert["antennas"] == ["bet3", "bet4"]
    assert "bet3" in alert["message"] and "bet4" in alert["message"]
    assert alert["counted_at"] == "bet3"
    # Counted once: seat 3's single 500 chip is a call (rule 44); nothing from seat 4.
    assert [(a[0], a[1], a[2]) for a in table.actions()] == [(3, "call", 100)]
    assert table.state["seats"]["4"]["bet"] == 0


def test_chip_leaving_the_first_zone_counts_where_it_is_still_read() -> None:
    table = _preflop()
    _chip(table, "tag_in", "bet3", "c777", 100)
    table.do(ev(t=table.step(1.0), event="tick"))  # seat 3 called with it
    _chip(table, "tag_in", "bet4", "c777", 100)  # slid on into seat 4's zone: not counted
    table.do(ev(t=table.step(1.0), event="tick"))
    assert [a[:3] for a in table.actions()] == [(3, "call", 100)]
    _chip(table, "tag_out", "bet3", "c777", 100)  # it left seat 3's zone: it is in seat 4's
    table.do(ev(t=table.step(1.0), event="tick"))
    assert [a[:3] for a in table.actions()] == [(3, "call", 100), (4, "call", 100)]


def test_chip_in_a_bet_zone_and_the_pot_is_counted_once() -> None:
    table = _preflop()
    _chip(table, "tag_in", "pot", "c900", 100)
    _chip(table, "tag_in", "bet3", "c900", 100)  # still read at the pot
    table.do(ev(t=table.step(1.0), event="tick"))
    assert [a["antennas"] for a in table.alerts() if a["type"] == "chip_at_two_antennas"] == [
        ["pot", "bet3"]
    ]
    assert table.actions() == []
    _chip(table, "tag_out", "bet3", "c900", 100)  # the second reading leaves: nothing changes
    table.do(ev(t=table.step(1.0), event="tick"))
    assert table.actions() == []


def test_rule_51B_a_forfeited_undercall_keeps_the_phh_starting_stacks() -> None:
    table = _preflop()
    table.push(3, 100, 100, 100)
    table.push(4, 100)
    table.fold(4)  # forfeits 100
    table.fold(1)
    table.fold(2)  # seat 3 wins uncontested
    table.shuffle()  # hand 1 completed
    events = [e for e in table.events() if e["hand"] == 1]
    phh = build_phh(HandMessages("t01", 1, events))
    assert phh.problem is None and phh.text is not None
    assert "starting_stacks = [10000, 10000, 10000, 10000]" in phh.text
    assert "undercall forfeited (rule 51-B): seat 4, 100" in phh.text


def _turn_bet_river_checked(profile: str) -> dict[str, Any]:
    """Three players, the button on seat 3: seat 2 bets the turn, the river is checked."""
    table = _three_seats_called(profile)
    table.push(1, 50)
    table.button("check")
    table.board("Ah", "Kc", "9d", burn="2c")
    for _ in range(3):
        table.button("check")
    table.board("8s", burn="3c")
    table.button("check")
    table.push(2, 100)
    table.push(3, 100)
    table.push(1, 100)
    table.board("Qd", burn="4c")
    for _ in range(3):
        table.button("check")
    (showdown,) = table.events("showdown")
    return showdown


def test_rule_17A_tda_no_bet_on_the_river_the_first_seat_left_of_the_button_shows() -> None:
    assert _turn_bet_river_checked("tda-2019")["order"] == [1, 2, 3]


def test_rule_17A_casinos_austria_art_14_the_hands_last_aggressor_shows_first() -> None:
    showdown = _turn_bet_river_checked("casinos-austria")
    assert showdown["order"] == [2, 3, 1]
    assert (showdown["rule"], showdown["profile_rule"]) == ("17-A", "art. 14 (Showdown (1))")


def test_rule_51B_facing_the_opening_bet_preflop_means_facing_the_big_blind() -> None:
    assert facing_opening_bet(0, preflop=True)  # the posted big blind is the opener
    assert not facing_opening_bet(1, preflop=True)  # a raise over it
    assert facing_opening_bet(1, preflop=False)  # after the flop the first bet opens
    assert not facing_opening_bet(2, preflop=False)
    assert undercall_ruling(heads_up=False, facing_opening_bet=False) == "td"
    assert undercall_ruling(heads_up=False, facing_opening_bet=False, always_full_call=True) == (
        "full_call"
    )


def test_rule_48_house_raise_cap_until_the_event_is_heads_up() -> None:
    assert house_raise_cap(house_cap=None, event_heads_up=False) == 3
    assert house_raise_cap(house_cap=4, event_heads_up=False) == 4
    assert house_raise_cap(house_cap=3, event_heads_up=True) is None


def test_chip_read_in_two_places_between_hands_survives_a_checkpoint() -> None:
    table = Table(seats=(1, 2, 3), button=3)
    _chip(table, "tag_in", "bet1", "c500", 25)  # the small blind put out before the hand
    _chip(table, "tag_in", "bet2", "c500", 25)  # and read in the next zone too
    state = checkpoint(table.engine)
    assert state["chips"] == {"at": {"c500": ["bet1", "bet2"]}, "values": {"c500": 25}}
    restored = new_engine(9)
    restore(restored, state)
    assert checkpoint(restored) == state
    left = [ev(t=table.step(), event="tag_out", antenna="bet1", chip="c500", value=25)]
    assert [m.payload for m in run(restored, left)] == [m.payload for m in table.do(*left)]
    # It left seat 1's zone: it counts in seat 2's, where it is still read, in both engines.
    for engine in (restored, table.engine):
        assert {s: z for s, z in engine.early_chips.items() if z} == {2: {"c500": 25}}
    start = [ev(t=table.step(), event="button", name="shuffler")]
    assert [m.payload for m in run(restored, start)] == [m.payload for m in table.do(*start)]


def test_rule_48_replay_game_option_plays_fixed_limit_and_refuses_an_unknown_game() -> None:
    root = Path(__file__).resolve().parents[2]
    trace = root / "tests" / "scenarios" / "rule_48_limit_cap_holds_heads_up_in_the_hand.jsonl"
    config = root / "examples" / "sim-table.toml"
    for game, code in (("flhe", 0), ("xx", 2)):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            got = main(["replay", str(trace), "--config", str(config), "--game", game])
        assert got == code
    assert "'xx' is not one of nlhe, plhe, flhe" in err.getvalue()


# -- a hand leaving the pot with an uncalled bet (rules 58, 15-B, 65-A) ---------------------


def _chips_on_table(table: Table) -> int:
    """Every chip of the hand's players: stacks plus what is in front or in the middle."""
    return sum(table.stacks().values()) + sum(p["amount"] for p in table.state.get("pots", []))


def _play_down_from_the_flop(table: Table, *seats: int) -> None:
    """The seats still in check the flop, turn and river; the dealer pushes the pot."""
    table.board("Td", "5s", "4c", burn="2d")
    for _ in seats:
        table.button("check")
    table.board("8h", burn="3d")
    for _ in seats:
        table.button("check")
    table.board("2s", burn="6d")
    for _ in seats:
        table.button("check")
    table.push_pot()


def test_rule_58_binding_oot_fold_returns_uncalled_bet() -> None:
    table = _preflop()
    table.push(3, 100, 100, 100)  # seat 3 raises to 300 over the big blind
    table.fold(3)  # and mucks before seat 4 acts: a binding fold out of turn (58)
    (back,) = table.events("uncalled_bet_returned")
    assert (back["seat"], back["amount"]) == (3, 200)  # the 100 the big blind matched stays
    assert table.stacks()[3] == 10_000 - 100
    # Nobody is made to call the withdrawn raise: seat 4 faces the big blind.
    assert table.state["to_act"] == 4
    table.push(4, 100)
    table.push(1, 50)
    table.button("check")
    assert [a[1] for a in table.actions()] == ["raise", "call", "call", "check"]
    _play_down_from_the_flop(table, 1, 2, 4)
    (pot,) = table.events("pot_awarded")
    assert pot["amount"] == 400 and table.events("hand_completed")
    assert sum(table.stacks().values()) == 40_000


def test_rule_15B_river_bettor_discarding_before_the_others_act_gets_the_bet_back() -> None:
    table = _on_the_flop()
    for _ in range(4):
        table.button("check")
    table.board("8h", burn="3d")
    for _ in range(4):
        table.button("check")
    table.board("2s", burn="6d")
    table.push(1, 100, 100)  # seat 1 bets 200 on the river
    table.fold(1)  # and throws its cards away before anyone acts
    (back,) = table.events("uncalled_bet_returned")
    assert (back["seat"], back["amount"], back["rule"]) == (1, 200, "15-B")
    assert table.stacks()[1] == 10_000 - 100
    assert table.state["to_act"] == 2
    for _ in range(3):
        table.button("check")
    table.push_pot()
    (pot,) = table.events("pot_awarded")
    assert pot["amount"] == 400 and pot["winners"] == [3]  # the nines
    assert sum(table.stacks().values()) == 40_000


def test_rule_65A_killed_raisers_uncalled_raise_returned_partly_called_part_stays() -> None:
    table = Table(seats=(1, 2, 3, 4), button=4, stacks={1: 10_000, 2: 10_000, 3: 10_000, 4: 200})
    table.shuffle()
    table.push(1, 50)
    table.push(2, 100)
    table.deal(HOLE4)
    table.push(3, 100, 100, 100, 100, 100)  # seat 3 raises to 500
    table.push(4, 100, 100)  # seat 4 calls all-in for 200
    table.fold(3)  # the dealer kills seat 3's hand by mistake (65-A): it reaches the muck
    (back,) = table.events("uncalled_bet_returned")
    assert (back["seat"], back["amount"]) == (3, 300)  # the 200 seat 4 called stays in
    assert table.state["to_act"] == 1  # the small blind faces 200, not 500
    table.push(1, 100, 50)
    table.push(2, 100)
    _play_down_from_the_flop(table, 1, 2)
    awarded = table.events("pot_awarded")
    assert sum(p["amount"] for p in awarded) == 800
    assert sum(table.stacks().values()) == 30_200


def test_rule_58_heads_up_raiser_folding_out_of_turn_gets_the_raise_back() -> None:
    table = Table(seats=(1, 2), button=1)
    table.shuffle()
    table.push(1, 50)
    table.push(2, 100)
    table.deal({1: ["Ah", "Kh"], 2: ["Qd", "Jd"]})
    table.push(1, 100, 100, 50)  # the button (small blind) raises to 300
    table.fold(1)  # and mucks before the big blind acts
    assert table.stacks() == {1: 9_900, 2: 10_100}
    assert table.events("hand_completed")


# -- chips pulled back, then a fold (rules 46, 51-B) ---------------------------------------


def _pull(table: Table, seat: int, chip: str, value: int) -> None:
    table.do(ev(t=table.step(), event="tag_out", antenna=f"bet{seat}", chip=chip, value=value))


def test_rule_51B_undercall_partly_pulled_back_then_folded_forfeits_only_what_is_left() -> None:
    table = _preflop()
    table.push(3, 100, 100, 100, 100, 100, 100)  # seat 3 raises to 600
    table.push(4, 100, 100)  # seat 4 undercalls with 200: the floor's discretion
    _pull(table, 4, f"x{table.serial:05d}", 100)  # takes one chip back
    table.do(ev(t=table.step(2.0), event="tick"))
    table.fold(4)
    last = table.events("action")[-1]
    assert (last["seat"], last["action"], last["forfeited"]) == (4, "fold", 100)
    assert table.stacks()[4] == 10_000 - 100


def test_rule_51B_undercall_wholly_pulled_back_then_folded_loses_nothing() -> None:
    table = _preflop()
    table.push(3, 100, 100, 100, 100, 100, 100)
    table.push(4, 100, 100)
    _pull(table, 4, f"x{table.serial:05d}", 100)
    _pull(table, 4, f"x{table.serial - 1:05d}", 100)
    table.fold(4)
    assert table.stacks()[4] == 10_000
    assert "forfeited" not in table.events("action")[-1]


def test_rule_46B_prior_bet_pulled_back_then_folded_loses_only_the_bet() -> None:
    table = _preflop()
    table.push(3, 100, 100, 100)  # raise to 300
    table.push(4, 100, 100, 100)
    table.push(1, 100, 100, 50)
    _pull(table, 2, "x00002", 100)  # the big blind takes its posted chip back
    table.fold(2)
    assert table.stacks()[2] == 10_000 - 100  # the blind, nothing more
    assert table.actions()[-1] == (2, "fold", 100, None)


# -- rule 55: check declared facing a bet -----------------------------------------------


def test_rule_55_check_declared_facing_a_bet_may_call_never_raise() -> None:
    table = _on_the_flop()
    table.push(1, 100, 100)  # seat 1 bets 200
    table.button("check")  # seat 2 declares check facing the bet
    (refused,) = [a for a in table.alerts() if a["type"] == "check_refused"]
    assert refused["rule"] == "55" and "call or fold" in refused["message"]
    table.push(2, 100, 100, 100, 100, 100, 100)  # then puts out 600: held to a call
    last = table.events("action")[-1]
    assert (last["seat"], last["action"], last["amount"], last["rule"]) == (2, "call", 200, "55")
    assert last["change"] == 400
    assert table.stacks()[2] == 10_000 - 100 - 200


def test_rule_55_check_declared_facing_a_bet_may_fold() -> None:
    table = _on_the_flop()
    table.push(1, 100, 100)
    table.button("check")
    table.fold(2)
    assert table.actions()[-1] == (2, "fold", 0, None)
    assert table.state["to_act"] == 3


def test_rule_55_the_all_in_button_after_a_declared_check_is_a_call() -> None:
    table = _on_the_flop()
    table.push(1, 100, 100)
    table.button("check")
    table.button("allin", seat=2)
    table.push(2, 100, 100, 100)
    last = table.events("action")[-1]
    assert (last["seat"], last["action"], last["amount"]) == (2, "call", 200)


def test_campione_rake_a_main_pot_the_rake_takes_whole_still_gets_its_pot_awarded() -> None:
    table = Table(
        seats=(1, 2, 3),
        button=3,
        blinds=(5, 10, 0),
        stacks={1: 5, 2: 1_000, 3: 1_000},
        profile="campione",
    )
    table.shuffle()
    table.push(1, 5)  # the small blind is all-in
    table.push(2, 10)
    table.deal({1: ["Ah", "As"], 2: ["Qd", "Jd"], 3: ["9s", "9c"]})
    table.push(3, 10)
    table.button("check")
    table.board("Td", "5s", "4c", burn="2d")
    table.push(2, 100, 50)  # 150 bet and called on the flop
    table.push(3, 100, 50)
    for card, burn in (("8h", "3c"), ("2s", "4d")):
        table.board(card, burn=burn)
        table.button("check")
        table.button("check")
    table.push_pot()
    pots = sorted(table.events("pot_awarded"), key=lambda p: p["pot"])
    # 325 in all: 320 * 5% = 16, from the main pot (15, all of it) then the side pot (1).
    assert [(p["pot"], p["amount"], p["rake"]) for p in pots] == [(0, 15, 15), (1, 310, 1)]
    assert pots[0]["winners"] == [1] and pots[0]["shares"] == {"1": 0}
    completed = table.events("hand_completed")[0]
    assert sum(p["rake"] for p in pots) == completed["rake"] == 16
    assert sum(completed["stacks"].values()) == 2_005 - 16


def test_rule_13C_best_hand_swept_into_the_muck_at_showdown_calls_the_floor() -> None:
    table = _on_the_flop()
    for card, burn in ((None, None), ("8h", "3d"), ("2s", "6d")):
        if card is not None:
            table.board(card, burn=burn)
        for _ in range(4):
            table.button("check")
    table.fold(3)  # the nines, the best hand, go to the muck at showdown (no all-in)
    (alert,) = [a for a in table.alerts() if a.get("rule") == "13-C"]
    assert alert["type"] == "floor_needed" and alert["severity"] == "critical"
    assert alert["seat"] == 3
    assert table.engine.lamps()["floor"]


def test_rule_13B_a_losing_hand_mucked_at_showdown_calls_no_one() -> None:
    table = _on_the_flop()
    for card, burn in ((None, None), ("8h", "3d"), ("2s", "6d")):
        if card is not None:
            table.board(card, burn=burn)
        for _ in range(4):
            table.button("check")
    table.fold(2)
    assert not [a for a in table.alerts() if a.get("rule") == "13-C"]


# -- tda-2015: its raise methods (2015 rule 42) and last chips (2015 rules 43, 46) ---------


def test_tda_2015_rule_46_last_chips_under_half_a_raise_are_a_call() -> None:
    # 2015 rule 46 gives every multiple-chip push facing a bet to the 50% standard (2015
    # 43): no exception for a player's last chips (2019 45-B2 makes them an all-in).
    stacks = {1: 10_000, 2: 10_000, 3: 10_000, 4: 350}
    for profile, expected in (("tda-2019", ("allin", 350)), ("tda-2015", ("call", 300))):
        table = Table(seats=(1, 2, 3, 4), button=4, stacks=stacks, profile=profile)
        table.shuffle()
        table.push(1, 50)
        table.push(2, 100)
        table.deal(HOLE4)
        table.push(3, 100, 100, 100)  # raise to 300
        table.push(4, 100, 100, 100, 50)  # seat 4's last 350: 50 over, under half of 200
        last = table.events("action")[-1]
        assert (last["action"], last["amount"]) == expected, profile


def test_tda_2015_rule_42C_raise_declared_then_two_motions() -> None:
    # 2015 42-C: "raise" declared, the exact call in one motion, the raise in a second one.
    for profile, total in (("tda-2019", 400), ("tda-2015", 900)):
        table = _on_the_flop(profile)
        table.push(1, 200)  # seat 1 bets 200
        table.button("raise", seat=2)  # seat 2 declares raise
        table.push(2, 100, 100)  # first motion: the call
        table.push(2, 500, 100, 100)  # second motion: the raise
        raised = [a for a in table.events("action") if a["seat"] == 2][1]
        assert (raised["action"], raised["amount"]) == ("raise", total), profile


# -- campione pauses ("Gestione pause") ----------------------------------------------------


def _fold_to_big_blind(table: Table, *pushes: tuple[int, ...]) -> dict[str, Any]:
    """One hand folded to the big blind; `pushes` are put out before the cards."""
    table.shuffle()
    started = table.events("hand_started")[-1]
    sb, bb = started["small_blind_seat"], started["big_blind_seat"]
    table.push(sb, 50)
    table.push(bb, 100)
    for push in pushes:
        table.push(*push)
    table.deal({s: HOLE4[s] for s in started["seats"]})
    for seat in sorted(started["seats"], key=lambda s: (s <= bb, s))[:-1]:
        table.fold(seat)
    for seat in started["seats"]:  # the cards are collected for the next hand
        antenna = f"seat{seat}" if seat == bb else "muck"
        for card in HOLE4[seat]:
            table.do(ev(t=table.step(0.01), event="tag_out", antenna=antenna, card=card))
    return started


def _away(table: Table, seat: int, away: bool) -> None:
    table.do(ev(t=table.step(), event="command", name="away", seat=seat, away=away))


def test_campione_pause_keeps_the_seat_deals_out_and_missed_blinds_are_paid_back() -> None:
    table = Table(seats=(1, 2, 3, 4), button=4, profile="campione")
    _away(table, 3, True)
    for _ in range(3):  # the blinds pass seat 3 while it is on its break
        assert 3 not in _fold_to_big_blind(table)["seats"]
        assert table.state["seats"]["3"]["player"] == "P3"  # the seat is kept
    assert table.stacks()[3] == 10_000
    _away(table, 3, False)
    started = _fold_to_big_blind(table, (3, 100, 50))  # back: the missed 50 and 100, dead
    assert 3 in started["seats"]
    (posted,) = [e for e in table.events("posted") if e["seat"] == 3]
    assert (posted["ante"], posted["missed_blinds"], posted["house_rule"]) == (150, 150, "pauses")
    assert table.stacks()[3] == 10_000 - 150
    assert sum(table.stacks().values()) == 40_000  # the big blind won the dead money
    assert table.events("hand_completed")[-1]["hand"] == 4
    last = list(split_hands([(m.topic, m.payload) for m in table.out]))[-1]
    phh = build_phh(last)
    assert phh.text is not None
    judge(phh.text, phh.finishing_stacks)  # the missed blinds replay as dead money (antes)


def test_rule_30_tda_2019_away_is_dealt_in_and_the_hand_killed() -> None:
    table = Table(seats=(1, 2, 3, 4), button=4)
    _away(table, 3, True)
    table.shuffle()
    assert 3 in table.events("hand_started")[-1]["seats"]
