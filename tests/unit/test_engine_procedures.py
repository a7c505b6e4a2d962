"""Engine: lamps and prompts of the procedures, badges, floor authority, holds, room commands."""

from __future__ import annotations

from typing import Any

import pytest

from controller.engine.engine import Staffer
from kernel.inputs import Badge, Device
from tests.engine_helpers import Table, ev, events_of

HOLE = {1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"], 4: ["7h", "2c"]}
MARIA = Staffer("04A1B2C3D4E5F6", "Maria Rossi", "dealer")
LUCA = Staffer("04B2C3D4E5F607", "Luca Bianchi", "dealer")
GIULIA = Staffer("04F1E2D3C4B5A6", "Giulia Ferrari", "floor")


def table(**kw: Any) -> Table:
    t = Table(seats=(1, 2, 3, 4), button=4, **kw)
    for m in (MARIA, LUCA, GIULIA):
        t.engine.staff[m.uid] = m
    return t


def dealt(t: Table) -> Table:
    """Hand started, blinds posted (seats 1 and 2), every hole card dealt."""
    t.shuffle()
    t.push(1, 25, 25)
    t.push(2, 100)
    t.deal(HOLE)
    return t


def flop_ready(t: Table) -> Table:
    dealt(t)
    t.push(3, 100)
    t.push(4, 100)
    t.push(1, 50)
    t.button("check")
    return t


def badge(t: Table, who: Staffer, removed: bool = False) -> None:
    t.do(Badge(t=t.step(), uid=who.uid, removed=removed))


def alerts_of(t: Table, kind: str) -> list[dict[str, Any]]:
    return [a for a in t.alerts() if a["type"] == kind]


# ---------------------------------------------------------------- lamps and prompts


def test_rule_39_four_card_flop_lights_floor_and_pending_lamps_until_resolved() -> None:
    t = flop_ready(table())
    assert t.engine.lamps()["pending"] is False and t.engine.lamps()["floor"] is False
    t.board("Td", "5s", "4c", "Kc", burn="2d")
    lamps = t.engine.lamps()
    assert lamps["pending"] and lamps["floor"]
    prompt = alerts_of(t, "procedure_required")[-1]
    assert prompt["rule"] == "39" and "floor picks one at random" in prompt["message"]
    assert t.engine.wants_draw() is None  # not before the floor is at the table
    badge(t, GIULIA)
    assert t.engine.wants_draw() == ("four_card_flop", 4)
    t.do(ev(t=t.step(), event="command", name="draw", purpose="four_card_flop", pick=1, of=4))
    assert events_of(t.out, "burn_drawn")[-1]["card"] == "5s"
    assert t.engine.wants_draw() is None
    t.do(
        ev(t=t.step(), event="tag_out", antenna="board", card="5s"),
        ev(t=t.step(), event="tag_in", antenna="burn", card="5s"),
    )
    assert t.state["board"] == ["Td", "4c", "Kc"]
    assert t.engine.lamps()["floor"] is False  # resolved: the floor has ruled
    assert t.engine.lamps()["pending"] is True  # verified until the turn
    for _ in range(4):
        t.button("check")
    t.board("Qh")
    assert t.engine.lamps() | {"pending": False} == t.engine.lamps()
    done = events_of(t.out, "procedure_completed")[-1]
    assert (done["procedure"], done["burn"], done["flop"]) == (
        "four_card_flop",
        "5s",
        ["Td", "4c", "Kc"],
    )


def test_rule_39_burn_before_the_floor_rules_is_a_procedure_violation() -> None:
    t = flop_ready(table())
    t.board("Td", "5s", "4c", "Kc", burn="2d")
    t.do(
        ev(t=t.step(), event="tag_out", antenna="board", card="Kc"),
        ev(t=t.step(), event="tag_in", antenna="burn", card="Kc"),
    )
    violation = events_of(t.out, "procedure_violation")[-1]
    assert violation["rule"] == "39" and "floor selects" in violation["expected"]


def test_rule_39_four_card_flop_holds_the_table_until_the_remedy_is_verified() -> None:
    """A check and a bet during the hold are refused, with what must happen first; nothing
    reaches the pot; once one of the four is burned with the floor there, betting goes on."""
    t = flop_ready(table())
    pots, acted = t.state["pots"], len(t.actions())
    t.board("Td", "5s", "4c", "Kc", burn="2d")
    assert t.state["held"] == ["four_card_flop"]
    assert t.engine.deadline() is None
    t.button("check")
    t.push(1, 100)
    refused = alerts_of(t, "action_refused")
    assert [(a["action"], a["seat"], a["rule"]) for a in refused] == [
        ("check", 1, "39"),
        ("push", 1, "39"),
    ]
    assert "floor must come to the table (badge) and pick the burn" in refused[0]["message"]
    assert len(t.actions()) == acted
    assert (t.state["pots"], t.state["to_act"], t.state["seats"]["1"]["bet"]) == (pots, 1, 0)
    badge(t, GIULIA)
    t.do(ev(t=t.step(), event="command", name="draw", purpose="four_card_flop", pick=3, of=4))
    t.button("check")
    assert "move Kc to the burn" in alerts_of(t, "action_refused")[-1]["message"]
    t.do(ev(t=t.step(), event="tag_out", antenna="bet1", chip="x00007", value=100))
    t.do(
        ev(t=t.step(), event="tag_out", antenna="board", card="Kc"),
        ev(t=t.step(), event="tag_in", antenna="burn", card="Kc"),
    )
    assert t.state["held"] == []
    assert alerts_of(t, "table_released")[-1]["rule"] == "39"
    t.button("check")
    assert t.actions()[-1] == (1, "check", 0, None)


def test_rule_39_burn_without_the_floor_keeps_the_table_held_until_the_floor_comes() -> None:
    t = flop_ready(table())
    t.board("Td", "5s", "4c", "Kc", burn="2d")
    t.do(
        ev(t=t.step(), event="tag_out", antenna="board", card="Kc"),
        ev(t=t.step(), event="tag_in", antenna="burn", card="Kc"),
    )
    assert events_of(t.out, "procedure_violation")[-1]["rule"] == "39"
    assert t.state["held"] == ["four_card_flop"]
    t.button("check")
    assert "floor must come to the table" in alerts_of(t, "action_refused")[-1]["message"]
    assert t.engine.lamps()["floor"]
    badge(t, GIULIA)
    assert t.state["held"] == [] and not t.engine.lamps()["floor"]
    t.button("check")
    assert t.actions()[-1] == (1, "check", 0, None)


def test_rule_39_floor_ruling_releases_the_hold() -> None:
    t = flop_ready(table())
    t.board("Td", "5s", "4c", "Kc", burn="2d")
    t.do(
        ev(t=t.step(), event="tag_out", antenna="board", card="Kc"),
        ev(t=t.step(), event="tag_in", antenna="muck", card="Kc"),
    )
    badge(t, GIULIA)
    t.button("floor")
    ruling = events_of(t.out, "floor_ruling")[-1]
    assert (ruling["released"], ruling["closed"]) == (["four_card_flop"], ["four_card_flop"])
    assert t.state["held"] == [] and t.state["board"] == ["Td", "5s", "4c"]


def test_draw_without_a_pending_four_card_flop_is_refused() -> None:
    t = flop_ready(table())
    out = t.do(
        ev(
            t=t.step(),
            event="command",
            name="draw",
            purpose="four_card_flop",
            pick=0,
            of=4,
            id="r1",
        )
    )
    reply = next(m.payload for m in out if m.topic == "replies")
    assert reply["ok"] is False and "no pending draw" in reply["error"]


def test_rule_35D_misdeal_refused_lights_the_floor_lamp_until_the_floor_comes() -> None:
    t = table()
    dealt(t)
    t.push(3, 100)
    t.push(4, 100)
    t.button("misdeal")
    assert alerts_of(t, "misdeal_refused")[-1]["rule"] == "35D"
    assert t.engine.lamps()["floor"] is True
    badge(t, GIULIA)
    assert t.engine.lamps()["floor"] is False
    assert events_of(t.out, "floor_arrived")[-1]["floor"] == {
        "uid": GIULIA.uid,
        "name": "Giulia Ferrari",
    }


def test_rule_35D_floor_authority_lapses_after_five_minutes() -> None:
    t = table()
    badge(t, GIULIA)
    dealt(t)
    t.push(3, 100)
    t.push(4, 100)
    t.do(ev(t=t.step(301.0), event="tick"))
    t.button("misdeal")
    assert not events_of(t.out, "misdeal")
    assert alerts_of(t, "misdeal_refused")


def test_rule_35C_misdeal_returns_chips_of_voided_actions_and_keeps_the_blinds() -> None:
    t = table()
    dealt(t)
    t.fold(3)
    t.button("misdeal")
    misdeal = events_of(t.out, "misdeal")[-1]
    assert (misdeal["reason"], misdeal["rule"]) == ("declared", "35A")
    assert t.stacks() == {1: 9950, 2: 9900, 3: 10_000, 4: 10_000}
    assert t.state["seats"]["3"]["status"] == "active"  # the fold is void: dealt in again
    assert t.engine.lamps()["pending"] is True


# ---------------------------------------------------------------- badges


def test_dealer_badge_changes_the_dealer_and_starts_the_hand_once() -> None:
    t = table()
    badge(t, MARIA)
    changed = events_of(t.out, "dealer_changed")[-1]
    assert changed["dealer"] == {"uid": MARIA.uid, "name": "Maria Rossi"}
    assert changed["previous"] is None
    started = events_of(t.out, "hand_started")
    assert len(started) == 1 and started[0]["trigger"] == "dealer_push"
    assert started[0]["dealer"] == changed["dealer"]
    t.shuffle()  # the shuffler's button for the same hand: no second start
    assert len(events_of(t.out, "hand_started")) == 1
    assert alerts_of(t, "hand_already_started")
    badge(t, MARIA)  # the same dealer again: nothing new
    assert alerts_of(t, "badge_repeat") and len(events_of(t.out, "dealer_changed")) == 1


def test_dealer_push_while_a_hand_is_dealt_changes_the_dealer_only() -> None:
    t = table()
    dealt(t)
    badge(t, LUCA)
    assert events_of(t.out, "dealer_changed")[-1]["dealer"]["name"] == "Luca Bianchi"
    assert len(events_of(t.out, "hand_started")) == 1
    assert t.state["dealer"] == {"uid": LUCA.uid, "name": "Luca Bianchi"}


def test_unknown_badge_is_refused_with_an_alert() -> None:
    t = table()
    t.do(Badge(t=t.step(), uid="04000000000BAD"))
    refused = alerts_of(t, "badge_unknown")[-1]
    assert refused["uid"] == "04000000000BAD"
    assert not events_of(t.out, "dealer_changed") and t.state["hand"] is None


def test_floor_badge_removed_ends_the_floor_authority() -> None:
    t = table()
    badge(t, GIULIA)
    assert t.engine.floor_present()
    badge(t, GIULIA, removed=True)
    assert not t.engine.floor_present() and t.state["floor"] is None


# ---------------------------------------------------------------- holds and commands


def test_reader_offline_holds_the_table_and_no_push_settles_by_time() -> None:
    t = table()
    t.shuffle()
    t.push(1, 25, 25)
    t.do(Device(t=t.step(), name="chip_reader", state="offline"))
    assert alerts_of(t, "reader_offline")[-1]["severity"] == "critical"
    assert t.state["held"] == ["chip_reader"]
    t.do(ev(t=t.step(), event="tag_in", antenna="bet2", chip="z1", value=100))
    assert t.engine.deadline() is None  # not read as settled while a board is away
    t.do(Device(t=t.step(), name="chip_reader", state="online"))
    assert alerts_of(t, "reader_online") and t.state["held"] == []
    assert t.engine.deadline() is not None


def test_pause_holds_new_hands_until_resume() -> None:
    t = table()
    out = t.do(ev(t=t.step(), event="command", name="pause", reason="break", id="p1"))
    assert next(m.payload for m in out if m.topic == "replies")["ok"] is True
    assert events_of(t.out, "table_paused")[-1]["reason"] == "break"
    t.shuffle()
    assert alerts_of(t, "table_held") and t.state["hand"] is None
    out = t.do(ev(t=t.step(), event="command", name="pause", id="p2"))
    assert next(m.payload for m in out if m.topic == "replies")["ok"] is False
    t.do(ev(t=t.step(), event="command", name="resume"))
    t.shuffle()
    assert t.state["hand"] == 1


def test_rule_71_penalty_in_rounds_kills_the_hand_after_the_deal_each_hand() -> None:
    t = table()
    out = t.do(ev(t=t.step(), event="command", name="penalty", seat=3, rounds=1, id="x"))
    assert next(m.payload for m in out if m.topic == "replies")["ok"] is True
    assert events_of(t.out, "penalty_given")[-1]["hands"] == 4  # 71-A: one hand per player
    dealt(t)
    killed = events_of(t.out, "hand_killed")[-1]
    assert (killed["seat"], killed["rule"]) == (3, "71C")
    assert t.state["seats"]["3"]["penalty"] == 4 and t.state["to_act"] == 4


def test_rule_30_player_away_is_dealt_in_and_the_hand_killed() -> None:
    t = table()
    t.do(ev(t=t.step(), event="command", name="away", seat=4, away=True))
    dealt(t)
    assert events_of(t.out, "hand_killed")[-1]["rule"] == "30"


@pytest.mark.parametrize(
    ("command", "error"),
    [
        ({"name": "seat", "seat": 1, "player": "X", "stack": 5}, "taken"),
        ({"name": "unseat", "seat": 7}, "empty"),
        ({"name": "penalty", "seat": 8, "hands": 1}, "empty"),
        ({"name": "resume"}, "not paused"),
        ({"name": "staff", "uid": "0499", "remove": True}, "no staff badge"),
    ],
)
def test_impossible_commands_get_an_error_reply_and_change_nothing(
    command: dict[str, Any], error: str
) -> None:
    t = table()
    before = t.engine.snapshot()
    out = t.do(ev(t=t.step(), event="command", id="req-9", **command))
    reply = next(m.payload for m in out if m.topic == "replies")
    assert reply["id"] == "req-9" and reply["ok"] is False and error in reply["error"]
    after = t.engine.snapshot()
    assert {k: v for k, v in after.items() if k != "t"} == {
        k: v for k, v in before.items() if k != "t"
    }


def test_staff_command_adds_and_removes_a_badge_the_engine_then_knows() -> None:
    t = table()
    uid = "04ABCDEF000001"
    t.do(ev(t=t.step(), event="command", name="staff", uid=uid, person="Nuovo", role="floor"))
    t.do(Badge(t=t.step(), uid=uid))
    assert events_of(t.out, "floor_arrived")[-1]["floor"] == {"uid": uid, "name": "Nuovo"}
    assert [m.uid for m in t.engine.staff_members()].count(uid) == 1
    t.do(ev(t=t.step(), event="command", name="staff", uid=uid, remove=True))
    t.do(Badge(t=t.step(), uid=uid))
    assert alerts_of(t, "badge_unknown")


def test_chips_left_in_a_zone_before_the_hand_count_only_as_a_forced_bet() -> None:
    """Blinds set out before the shuffler are posted; other chips (a pot pushed onto a
    winner's bet zone, say) are no bet of the new hand."""
    t = table()
    t.do(
        ev(t=t.step(), event="tag_in", antenna="bet1", chip="e1", value=50),
        ev(t=t.step(), event="tag_in", antenna="bet3", chip="e2", value=500),
    )
    t.shuffle()
    t.do(ev(t=t.step(2.0), event="tick"))
    posted = [(e["seat"], e["amount"]) for e in events_of(t.out, "posted")]
    assert posted == [(1, 50)]
    assert alerts_of(t, "chips_before_hand")[-1]["seat"] == 3
    assert t.stacks()[3] == 10_000
