"""The room's `hold` and `release` at the table: breaks and balancing hold a table after the
hand in progress; hand-for-hand (TDA 2019 RP-8) holds it again after every released hand and
keeps an all-in and call face down until the floor instructs (RP-8 F)."""

from __future__ import annotations

import json
import re
from typing import Any

from controller.engine.checkpoint import checkpoint, restore
from kernel.messages import Message
from tests.engine_helpers import Table, ev, new_engine

HOLE = ("9s", "9d", "Ac", "Kc")


def command(t: Table, name: str, **fields: Any) -> dict[str, Any]:
    """Apply a room command; its reply."""
    out = t.do(ev(t=t.step(), event="command", name=name, id=f"{name}-{t.step()}", **fields))
    return next(m.payload for m in out if m.topic == "replies")


def heads_up_all_in(t: Table) -> None:
    """Seat 2 (button, small blind) all-in for 3000, seat 1 calls: betting over preflop."""
    t.shuffle()
    t.push(2, 25, 25)
    t.push(1, 100)
    t.deal({1: ["9s", "9d"], 2: ["Ac", "Kc"]})
    t.hole = {1: ["9s", "9d"], 2: ["Ac", "Kc"]}
    t.button("allin", 2)
    t.push(2, 1000, 1000, 500, 100, 100, 100, 100, 25, 25)  # all-in: 3000 in all
    t.push(1, 1000, 1000, 500, 100, 100, 100, 100)  # calls: 3000 in all


def heads_up() -> Table:
    return Table(button=2, seats=(1, 2), stacks={1: 9000, 2: 3000})


def holecard_leaks(out: list[Message]) -> set[str]:
    """Hole cards named anywhere on a public topic (events, state, alerts, replies)."""
    text = "\n".join(json.dumps(m.payload) for m in out if m.topic != "holecards")
    return {c for c in HOLE if re.search(rf"(?<![0-9A-Za-z]){c}(?![0-9A-Za-z])", text)}


def test_rule_RP8_hold_takes_effect_after_the_hand_in_progress() -> None:
    t = Table(button=3)
    t.shuffle()
    assert command(t, "hold", reason="break")["ok"] is True
    assert t.events("room_hold")[-1]["reason"] == "break"
    assert t.state["hand"] == 1  # the hand goes on
    t.push(1, 25, 25)
    t.push(2, 100)
    t.deal({1: ["2c", "3c"], 2: ["4d", "5d"], 3: ["6h", "7h"]})
    t.fold(3)
    t.fold(1)
    assert t.events("hand_completed")
    t.shuffle()
    assert t.state["hand"] is None and t.state["held"] == ["room"]
    assert [a for a in t.alerts() if a["type"] == "table_held"]
    assert command(t, "release")["ok"] is True
    assert t.events("room_release")[-1]["instructed"] is False
    t.shuffle()
    assert t.state["hand"] == 2


def test_rule_RP8_hand_for_hand_holds_again_after_every_released_hand() -> None:
    t = Table(button=3)
    assert command(t, "hold", reason="hand for hand", hand_for_hand=True)["ok"] is True
    decks = (
        {1: ["2c", "3c"], 2: ["4d", "5d"], 3: ["6h", "7h"]},
        {1: ["8c", "9c"], 2: ["Td", "Jd"], 3: ["Qh", "Kh"]},
    )
    for hand, cards in zip((1, 2), decks, strict=True):
        t.shuffle()
        assert t.state["hand"] is None  # held until the room releases it
        assert command(t, "release")["ok"] is True
        t.shuffle()
        assert t.state["hand"] == hand
        reply = command(t, "release")
        assert reply["ok"] is False and "after the hand" in reply["error"]
        sb, bb = t.engine.hand.positions.small_blind, t.engine.hand.positions.big_blind
        assert sb is not None
        t.push(sb, 25, 25)
        t.push(bb, 100)
        t.deal(cards)
        for s in [s for s in (3, 1, 2) if s != bb]:
            t.fold(s)
        assert t.state["hand"] is None and t.state["held"] == ["room"]
        auto = t.events("room_hold")[-1]
        assert (auto["hand_for_hand"], auto["rule"], auto["hand"]) == (True, "RP-8", None)
    assert command(t, "release", hand_for_hand=False)["ok"] is True
    t.shuffle()
    assert t.state["hand"] == 3 and t.engine.hand_for_hand is False


def test_rule_RP8F_all_in_and_call_stays_face_down_until_the_floor_instructs() -> None:
    t = heads_up()
    command(t, "hold", reason="hand for hand", hand_for_hand=True)
    command(t, "release")
    heads_up_all_in(t)
    said = t.events("hands_face_down")
    assert [(e["seats"], e["rule"]) for e in said] == [([1, 2], "RP-8F")]
    assert not t.events("hands_tabled")
    assert "shown" not in t.state["seats"]["1"] and "shown" not in t.state["seats"]["2"]
    assert not [a for a in t.alerts() if a["severity"] in ("warning", "critical")]
    assert holecard_leaks(t.out) == set()
    # The floor instructs: the hands are tabled now (rule 16), and the dealer goes on.
    reply = command(t, "release")
    assert reply["ok"] is True
    assert t.events("room_release")[-1]["instructed"] is True
    tabled = t.events("hands_tabled")
    assert tabled[0]["showdown"] == {"1": ["9s", "9d"], "2": ["Ac", "Kc"]}
    t.board("2c", "7d", "Th", burn="3c")
    t.board("Jc", burn="4c")
    t.board("5s", burn="6c")
    t.push_pot()
    assert t.events("hand_completed")[-1]["stacks"] == {"1": 12_000, "2": 0}  # nines hold
    assert not [a for a in t.alerts() if a["type"] == "card_before_instruction"]
    assert t.state["held"] == ["room"]  # and held again after the hand (RP-8)


def test_rule_RP8F_a_board_dealt_before_the_instruction_is_a_warning_not_a_procedure() -> None:
    t = heads_up()
    command(t, "hold", hand_for_hand=True)
    command(t, "release")
    heads_up_all_in(t)
    t.board("2c", "7d", "Th", burn="3c")
    warned = [a for a in t.alerts() if a["type"] == "card_before_instruction"]
    assert [(a["severity"], a["rule"], a["street"]) for a in warned] == [
        ("warning", "RP-8F", "flop")
    ]
    assert t.state["procedures"] == []  # no dealing procedure, no floor call
    t.board("Jc", burn="4c")
    t.board("5s", burn="6c")
    t.push_pot()
    assert t.events("hand_completed")  # the hand ends as any hand does
    assert not t.events("hands_tabled")  # the winner's cards show at the award (rule 12)
    assert holecard_leaks([m for m in t.out if m.payload.get("type") != "pot_awarded"]) == set()


def test_rule_RP8F_the_hand_in_progress_at_the_announcement_is_a_hand_for_hand_hand() -> None:
    t = heads_up()
    t.shuffle()
    command(t, "hold", reason="hand for hand", hand_for_hand=True)  # "finish the current hand"
    t.push(2, 25, 25)
    t.push(1, 100)
    t.deal({1: ["9s", "9d"], 2: ["Ac", "Kc"]})
    t.hole = {1: ["9s", "9d"], 2: ["Ac", "Kc"]}
    t.button("allin", 2)
    t.push(2, 1000, 1000, 500, 100, 100, 100, 100, 25, 25)
    t.push(1, 1000, 1000, 500, 100, 100, 100, 100)
    assert t.events("hands_face_down") and not t.events("hands_tabled")


def test_release_without_a_hold_is_refused_and_pause_is_left_alone() -> None:
    t = Table(button=3)
    reply = command(t, "release")
    assert reply["ok"] is False and "not held" in reply["error"]
    command(t, "pause", reason="color up")
    command(t, "hold", reason="break")
    command(t, "release")
    assert t.state["held"] == ["pause"]  # the floor's pause stays until `resume`


def test_rule_RP8_hand_for_hand_survives_a_checkpoint() -> None:
    t = Table(button=3)
    command(t, "hold", reason="hand for hand", hand_for_hand=True)
    saved = checkpoint(t.engine)
    assert saved["hand_for_hand"] is True and saved["holds"] == {"room": "hand for hand"}
    fresh = new_engine()
    restore(fresh, saved)
    assert fresh.hand_for_hand is True and fresh.holds == {"room": "hand for hand"}
    command(t, "release", hand_for_hand=False)
    assert "hand_for_hand" not in checkpoint(t.engine)  # off: the checkpoint reads as before


def test_rule_RP8F_ending_hand_for_hand_lets_a_hand_kept_face_down_go_on() -> None:
    t = heads_up()
    command(t, "hold", hand_for_hand=True)
    command(t, "release")
    heads_up_all_in(t)
    assert t.events("hands_face_down") and not t.events("hands_tabled")
    command(t, "hold", reason="break", hand_for_hand=False)  # ended while it waits
    assert t.events("hands_tabled")[0]["rule"] == "16"
    t.board("2c", "7d", "Th", burn="3c")
    assert not [a for a in t.alerts() if a["type"] == "card_before_instruction"]
