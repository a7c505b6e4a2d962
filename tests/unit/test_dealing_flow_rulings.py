"""The dealing flow's rulings at engine level: a seat dealt out after substantial
action (35-D with 38), the re-deal as an exact re-play (35-C), skipped players (53-B) and
alert texts that never name a card not yet public."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controller.notices import Notices
from tests.card_leaks import leaks
from tests.engine_helpers import Table, ev
from tests.hand_finisher import finish_hand

SCENARIOS = Path(__file__).resolve().parents[1] / "scenarios"

HOLE6 = {1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"], 4: ["7h", "2c"], 5: ["5h", "6d"]}
HOLE6[6] = ["Tc", "Th"]


def _six(button: int = 6) -> Table:
    t = Table(seats=(1, 2, 3, 4, 5, 6), button=button)
    t.shuffle()
    t.push(1, 50)
    t.push(2, 100)
    return t


def _types(t: Table) -> list[tuple[str, str]]:
    return [(m.topic, m.payload.get("type", "")) for m in t.out if m.topic != "state"]


# ------------------------------------------------------------------ 35-D with 38


def test_rule_38_seat_dealt_out_found_after_substantial_action_is_dead_and_play_goes_on() -> None:
    t = _six()
    t.deal({s: c for s, c in HOLE6.items() if s != 4})
    t.push(3, 100)
    t.push(4, 100)  # the cardless seat puts in a call: substantial action (36)
    refused = [a for a in t.alerts() if a["type"] == "misdeal_refused"]
    assert [(a["reason"], a["rule"]) for a in refused] == [("seat_dealt_out", "35D")]
    killed = t.events("hand_killed")
    assert [(k["seat"], k["rule"]) for k in killed] == [(4, "38")]
    assert not t.events("misdeal")
    # The action passes the dead hand; its chips stay in the pot.
    assert t.state["to_act"] == 5
    assert t.state["seats"]["4"]["status"] == "folded"
    t.push(5, 100)
    t.push(6, 100)
    t.push(1, 50)
    t.button("check")
    t.board("Td", "5s", "4c", burn="2d")
    flop = t.events("board_dealt")
    assert [f["street"] for f in flop] == ["flop"]
    betting = t.engine.betting
    assert betting is not None and betting.contrib[4] == 100
    assert all(4 not in p.eligible for p in betting.pots())
    assert finish_hand(t.engine, []) is not None
    assert t.engine.hand is None


def test_rule_38_seat_dealt_out_does_not_hold_the_action_of_the_others() -> None:
    # Seat 5 is dealt out; seats 3 and 4 call (substantial action): seat 5 is dead at once,
    # so the action is on seat 6 and no push is held as out of turn.
    t = _six()
    t.deal({s: c for s, c in HOLE6.items() if s != 5})
    t.push(3, 100)
    t.push(4, 100)
    assert [(k["seat"], k["rule"]) for k in t.events("hand_killed")] == [(5, "38")]
    assert t.state["to_act"] == 6
    t.push(6, 100)
    assert not [e for e in t.events("out_of_turn")]
    assert t.events("action")[-1]["seat"] == 6


def test_rule_35A4_seat_dealt_out_before_substantial_action_is_still_a_misdeal() -> None:
    t = _six()
    t.deal({s: c for s, c in HOLE6.items() if s != 4})
    t.push(3, 100)
    t.button("check")  # the cardless seat's turn: the deal ends at it (35A-4)
    assert [m["reason"] for m in t.events("misdeal")] == ["seat_dealt_out"]
    assert not t.events("hand_killed")


def test_rule_37_button_dealt_out_after_substantial_action_may_still_be_given_its_cards() -> None:
    t = _six()
    t.deal({s: c for s, c in HOLE6.items() if s != 6})
    t.push(3, 100)
    t.push(4, 100)
    t.push(5, 100)
    assert not t.events("hand_killed")
    assert any(a.get("procedure") == "button_short" for a in t.alerts())
    t.do(ev(t=t.step(), event="tag_in", antenna="seat6", card="Tc"))
    t.do(ev(t=t.step(), event="tag_in", antenna="seat6", card="Th"))
    t.push(6, 100)
    assert not t.events("hand_killed")
    assert t.events("action")[-1]["seat"] == 6


# ------------------------------------------------------------------ 35-C


def _misdeal_then_pushes() -> Table:
    t = Table(seats=(1, 2, 3, 4), button=4)
    t.shuffle()
    t.push(1, 50)
    t.push(2, 100)
    t.deal({1: ["Ah"], 2: ["Qd"], 3: ["9s"]})
    t.button("misdeal")
    t.push(3, 300)  # while the cards are being collected
    t.push(4, 100, 200)
    return t


def test_rule_35C_chips_pushed_before_the_redeal_are_no_action() -> None:
    t = _misdeal_then_pushes()
    assert [e["seat"] for e in t.events("action")] == []
    alerts = [a for a in t.alerts() if a["type"] == "chips_before_redeal"]
    assert [(a["seat"], a["rule"]) for a in alerts] == [(3, "35C"), (4, "35C")]
    for card, seat in (("Ah", 1), ("Qd", 2), ("9s", 3)):
        t.do(ev(t=t.step(), event="tag_out", antenna=f"seat{seat}", card=card))
    t.deal({1: ["As", "Ks"], 2: ["Qc", "Jc"], 3: ["8s", "8c"], 4: ["6h", "3d"]})
    # The re-dealt hand starts from the blinds exactly as before: nothing carried in.
    seats = t.state["seats"]
    assert {s: (seats[str(s)]["stack"], seats[str(s)]["bet"]) for s in (1, 2, 3, 4)} == {
        1: (9950, 50),
        2: (9900, 100),
        3: (10000, 0),
        4: (10000, 0),
    }
    assert t.state["to_act"] == 3
    assert not t.state["substantial_action"]
    t.push(3, 100)
    assert t.actions()[-1] == (3, "call", 100, None)


def test_rule_35C_chips_set_aside_leave_the_zone_without_an_action() -> None:
    t = _misdeal_then_pushes()
    chips = [
        m.payload
        for m in t.out
        if m.topic == "state" and m.payload["seats"]["3"]["bet"]  # never a bet of seat 3
    ]
    assert chips == []
    t.do(ev(t=t.step(), event="tag_out", antenna="bet3", chip="x00003", value=300))
    assert not t.events("action") and not t.events("out_of_turn")


def test_rule_35C_a_blind_still_owed_after_a_misdeal_is_posted() -> None:
    t = Table(seats=(1, 2, 3), button=3)
    t.shuffle()
    t.push(1, 50)
    t.deal({1: ["Ah"]})
    t.button("misdeal")
    t.push(2, 100)  # the big blind, owed since before the misdeal
    assert [(e["seat"], e["amount"]) for e in t.events("posted")] == [(1, 50), (2, 100)]
    assert not [a for a in t.alerts() if a["type"] == "chips_before_redeal"]


# ------------------------------------------------------------------ alert texts


def _pairs(t: Table) -> list[tuple[str, dict[str, Any]]]:
    return [(m.topic, m.payload) for m in t.out]


def _dealt_three() -> Table:
    t = Table(seats=(1, 2, 3), button=3)
    t.shuffle()
    t.push(1, 50)
    t.push(2, 100)
    t.deal({1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"]})
    return t


def test_alert_texts_name_no_card_that_is_not_public_in_any_scenario() -> None:
    found: list[str] = []
    for path in sorted(SCENARIOS.glob("*.expected.jsonl")):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line]
        pairs = [(m["topic"], m["payload"]) for m in lines]
        found += [f"{path.name}: {leak}" for leak in leaks(pairs)]
    assert found == []


def test_rule_39_a_stub_card_burned_during_a_four_card_flop_is_not_named() -> None:
    t = _dealt_three()
    t.push(3, 100)
    t.push(1, 50)
    t.button("check")
    t.board("Td", "5s", "4c", "3h", burn="2d")
    assert t.events("four_card_flop")
    t.do(ev(t=t.step(), event="tag_in", antenna="burn", card="8d"))  # from the stub
    got = [e["got"] for e in t.events("procedure_violation")]
    assert got and all("8d" not in g for g in got)
    assert "a card, not one of" in got[0]
    assert leaks(_pairs(t)) == []


def test_an_engine_error_text_names_no_hole_card() -> None:
    t = _dealt_three()
    notices = Notices("t01", t.engine, lambda: 1.0)
    said = notices.alert("input_error", "duplicate card: Ah; board Td")
    assert said.payload["message"] == "duplicate card: a card; board a card"
    refused = notices.refusal("seat", "r1", "refused: Kh")
    assert refused.payload["error"] == "refused: a card"
    t.push(3, 100)
    t.push(1, 50)
    t.button("check")
    t.board("Td", "5s", "4c", burn="2d")
    assert notices.alert("input_error", "board Td").payload["message"] == "board Td"


def test_a_hole_card_moved_onto_the_board_holds_the_pot_without_an_engine_error() -> None:
    # Seat 1's Ah slides onto the board: the card is public now, but seat 1's hand and the
    # board hold it twice. The pot is not paid on a guess, and nothing raises.
    t = _dealt_three()
    t.push(3, 100)
    t.push(1, 50)
    t.button("check")
    t.board(burn="2d")
    t.do(ev(t=t.step(), event="tag_out", antenna="seat1", card="Ah"))
    t.do(ev(t=t.step(), event="tag_in", antenna="board", card="Ah"))
    t.board("5s", "4c")
    for turn, burn in (("8h", "3s"), ("7d", "3c"), (None, None)):
        for _ in range(3):
            t.button("check")
        if turn is not None:
            t.board(turn, burn=burn)
    t.push_pot()
    held = [a for a in t.alerts() if a["type"] == "hand_unreadable"]
    assert held and held[-1]["seats"] == [1]
    assert t.engine.hand is not None  # the pot is held, not awarded
    assert leaks(_pairs(t)) == []


# ------------------------------------------------------------------ stuck states (liveness)

FLOOR = "04F1E2D3C4B5A6"


def _with_floor(t: Table) -> Table:
    t.do(ev(event="command", name="staff", uid=FLOOR, person="Floor", role="floor"))
    return t


def test_rule_1_a_floor_ruling_while_a_misdeal_is_collected_leaves_the_board_empty() -> None:
    t = _with_floor(Table(seats=(1, 2, 3), button=3, profile="casinos-austria"))
    t.push(1, 50)
    t.push(2, 100)
    t.deal({1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"]})
    t.button("misdeal")
    t.board("Td", "5s", "4c", "3h")  # on the board while the cards are collected
    t.do(ev(t=t.step(), event="badge", uid=FLOOR))
    t.button("floor")
    hand = t.engine.hand
    assert hand is not None and hand.board == []
    for card, where in [(c, f"seat{s}") for s, cs in t.hole.items() for c in cs] + [
        (c, "board") for c in ("Td", "5s", "4c", "3h")
    ]:
        t.do(ev(t=t.step(), event="tag_out", antenna=where, card=card))
    t.deal({1: ["As", "Ks"], 2: ["Qc", "Jc"], 3: ["8s", "8c"]})
    t.push(3, 100)
    t.push(1, 50)
    t.button("check")
    t.board("7d", "6d", "2c", burn="2d")
    assert [(e["street"], e["cards"]) for e in t.events("board_dealt")] == [
        ("flop", ["7d", "6d", "2c"])
    ]


def test_rule_1_the_board_the_floor_lets_stand_moves_the_betting_on() -> None:
    # Heads-up all-in: a four-card flop; the floor rules with the four cards left on the board.
    t = _with_floor(Table(seats=(1, 2), button=1, stacks=1_000))
    t.shuffle()
    t.push(1, 50)
    t.push(2, 100)
    t.deal({2: ["Ah", "Kh"], 1: ["Qd", "Jd"]})
    t.button("allin", seat=1)
    t.push(1, 950)
    t.push(2, 900)
    t.board("Td", "5s", "4c", burn="2d")
    t.board("3h")
    assert t.events("four_card_flop")
    t.do(ev(t=t.step(), event="badge", uid=FLOOR))
    t.button("floor")
    t.board("9h", burn="2c")  # the river: not a premature card
    assert not [e for e in t.events("premature_card")]
    assert [e["street"] for e in t.events("board_dealt")][-1] == "river"
    t.push_pot()
    assert t.events("hand_completed")


def test_rule_1_a_board_the_floor_lets_stand_is_announced_street_by_street() -> None:
    # Three-handed, no all-in: a four-card flop; the floor lets the four cards stand, so the
    # fourth is the turn. The turn opens when the flop's betting ends, and is announced then
    # (once), so the room, TV and a hand history see the street its betting is on.
    t = _with_floor(Table(seats=(1, 2, 3), button=3, stacks=5_000))
    t.shuffle()
    t.push(1, 50)
    t.push(2, 100)
    t.deal({1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"]})
    t.push(3, 100)
    t.push(1, 50)
    t.button("check")  # the big blind checks: the flop comes
    t.board("Td", "5s", "4c", burn="2d")
    t.board("Kc")
    assert t.events("four_card_flop")
    t.do(ev(t=t.step(), event="badge", uid=FLOOR))
    t.button("floor")  # the ruling: the board stands as it lies
    flop_over = len(t.events())
    for _ in range(3):
        t.button("check")
    dealt = [(e["street"], e["cards"], e["board"]) for e in t.events("board_dealt")]
    assert dealt == [
        ("flop", ["Td", "5s", "4c"], ["Td", "5s", "4c"]),
        ("turn", ["Kc"], ["Td", "5s", "4c", "Kc"]),
    ]
    turn = next(i for i, e in enumerate(t.events()) if e.get("street") == "turn")
    assert turn >= flop_over and not [
        e for e in t.events()[turn:] if e["type"] == "action" and e["action"] != "check"
    ]
    for _ in range(3):
        t.button("check")  # the turn's betting
    t.board("9h", burn="2c")  # the river, in turn
    assert [e["street"] for e in t.events("board_dealt")] == ["flop", "turn", "river"]
    assert not t.events("premature_card")


# ------------------------------------------------------------------ 53-B


def _skipped_seat_4() -> Table:
    """Addendum example 1 (100-200): seat 3 makes it 600; seat 5 calls out of turn, seat 6
    folds out of turn while seat 4 is to act."""
    t = Table(seats=(1, 2, 3, 4, 5, 6), button=6, blinds=(100, 200, 0))
    t.shuffle()
    t.push(1, 100)
    t.push(2, 200)
    t.deal(HOLE6)
    t.push(3, 200, 200, 200)
    t.push(5, 200, 200, 200)
    return t


def test_rule_53B_one_action_out_of_turn_is_only_backed_up() -> None:
    t = _skipped_seat_4()
    assert not t.events("skipped_hand")
    assert [(e["seat"], e["status"], e["rule"]) for e in t.events("out_of_turn")] == [
        (5, "held", "53-A")
    ]


def test_rule_53B_substantial_action_out_of_turn_binds_and_calls_the_floor() -> None:
    t = _skipped_seat_4()
    t.fold(6)
    [skipped] = t.events("skipped_hand")
    assert (skipped["seat"], skipped["oot_seats"], skipped["rule"]) == (4, [5, 6], "53-B")
    assert skipped["options"] == ["hand_dead", "non_aggressive_only", "all_options"]
    assert t.engine.lamps()["floor"]
    assert t.state["to_act"] == 4  # the action backs up to the skipped seat
    assert [p["procedure"] for p in t.state["procedures"]] == ["skipped_hand"]
    t.push(4, 200, 200, 200)  # the skipped seat calls: the out-of-turn call stands
    last = t.events("out_of_turn")[-1]
    assert (last["seat"], last["status"], last["rule"]) == (5, "binding", "53-B")
    assert t.actions()[-2:] == [(4, "call", 600, None), (5, "call", 600, None)]


def test_rule_53B_the_skipped_seat_raising_keeps_the_binding_chips_in_and_oot_acts_again() -> None:
    t = _skipped_seat_4()
    t.fold(6)
    _with_floor(t)
    t.do(ev(t=t.step(), event="badge", uid=FLOOR))  # the floor is here
    t.push(4, 500, 500, 500)  # the floor let the skipped seat raise: to 1500
    last = t.events("out_of_turn")[-1]
    assert (last["seat"], last["status"], last["rule"]) == (5, "binding", "53-B")
    assert last["acts_again"] and last["amount"] == 600
    assert t.state["to_act"] == 5  # seat 5 acts again facing 1500, its 600 staying in
    assert t.stacks()[5] == 10_000 - 600
    t.fold(5)  # it folds: the 600 stay in the pot
    assert t.stacks()[5] == 10_000 - 600
    assert t.state["to_act"] == 1


def test_rule_53B_the_oot_seat_acting_again_calls_the_rest() -> None:
    t = _skipped_seat_4()
    t.fold(6)
    t.push(4, 500, 500, 500)
    t.push(5, 500, 400)  # 900 more: a call of 1500
    assert t.actions()[-1] == (5, "call", 1500, None)
    assert t.stacks()[5] == 10_000 - 1500


def test_rule_53B_the_floor_ruling_closes_the_skipped_hand() -> None:
    t = _skipped_seat_4()
    t.fold(6)
    _with_floor(t)
    t.do(ev(t=t.step(), event="badge", uid=FLOOR))
    t.button("floor")
    assert t.events("floor_ruling")[-1]["closed"] == ["skipped_hand"]
    assert not t.engine.lamps()["floor"]
    t.fold(4)  # the floor ruled the hand dead: the dealer mucks it
    assert t.state["seats"]["4"]["status"] == "folded"


def test_rule_RP5A_a_premature_flop_card_is_named_only_by_its_event() -> None:
    # casinos-austria has no procedure: the floor is called at the first card; the card is
    # named once the premature flop's event names its cards (public, face up).
    t = _with_floor(Table(seats=(1, 2, 3), button=3, profile="casinos-austria"))
    t.push(1, 50)
    t.push(2, 100)
    t.deal({1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"]})
    t.board("3d", burn="2d")
    said = [a["message"] for a in t.alerts() if a["type"] == "premature_card"]
    assert said == ["premature flop card: the house rules give no procedure; floor called"]
    t.do(ev(t=t.step(), event="badge", uid=FLOOR))
    assert [e["cards"] for e in t.events("premature_card")] == [["3d"]]
    assert leaks(_pairs(t)) == []
