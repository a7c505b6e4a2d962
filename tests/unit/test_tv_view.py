"""What the TV pages show, from the messages the real engine publishes (no broker here)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from broadcast.equity import compute
from broadcast.view import LeakError, TableView, assert_public
from tests.tv_helpers import (
    allin_plan,
    board_cards,
    engine_messages,
    flop_plan,
    hand_events,
    hole_cards,
    misdeal_events,
    view_messages,
)


def frames(view: TableView, messages: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for kind, payload in messages:
        view.apply(kind, payload)
        out.append(view.frame())
    return out


@pytest.mark.parametrize("plan", [flop_plan, allin_plan])
def test_preview_frames_never_hold_a_hole_card(plan: Any) -> None:
    messages = view_messages(engine_messages(hand_events(plan())))
    secret = hole_cards(messages) - board_cards(messages)
    assert len(secret) >= 6
    view = TableView("t01", secret=False)
    for frame in frames(view, messages):
        text = json.dumps(frame)
        assert not [c for c in secret if f'"{c}"' in text], frame
        assert all(s["cards"] is None and s["hand_name"] is None for s in frame["seats"])
        assert all(s["equity"] is None for s in frame["seats"])
    assert view.hand.hole == {}


def test_the_preview_refuses_hole_cards_outright() -> None:
    view = TableView("t01", secret=False)
    assert view.apply("holecards", {"table": "t01", "hand": 1, "seat": 1, "cards": ["As"]}) is False
    assert view.hand.hole == {}


def test_a_public_frame_with_a_card_is_stopped() -> None:
    frame = {"table": "t01", "board": ["As"], "seats": [{"cards": ["Kd", "Qd"]}]}
    with pytest.raises(LeakError):
        assert_public(frame)
    with pytest.raises(LeakError):
        assert_public({"table": "t01", "board": [], "banner": {"text": "x", "Kd": 1}})
    assert_public({"table": "t01", "board": ["As", "Kd"], "seats": [{"player": "Kd Smith"}]})


def test_overlay_shows_cards_equities_and_the_showdown() -> None:
    messages = view_messages(engine_messages(hand_events(allin_plan())))
    view = TableView("t01", secret=True)
    seen_equity = False
    for kind, payload in messages:
        view.apply(kind, payload)
        situation = view.situation(true_outs=True)
        if situation is not None and len(situation.board) == 3:
            equity = compute(situation)
            frame = view.frame(equity)
            shares = [s["equity"] for s in frame["seats"] if s["equity"] is not None]
            assert len(shares) == 2 and sum(shares) == pytest.approx(100.0)
            seen_equity = True
            # seats 3 and 4 folded: their cards are out of play (true outs)
            assert {"8h", "2d", "9c", "4s"} <= set(situation.dead)
    assert seen_equity
    final = view.frame()
    assert final["hand_over"] is True and final["board"] == ["Ah", "3d", "Jc", "7s", "Qh"]
    seats = {s["seat"]: s for s in final["seats"]}
    assert seats[1]["cards"] == ["As", "3c"] and seats[1]["won"] == 40000
    assert seats[1]["hand_name"] == "two pair, aces and threes"
    assert seats[2]["hand_name"] == "pair of kings"
    assert seats[3]["status"] == "folded" and seats[3]["hand_name"] is None
    assert final["pot_total"] == 40000
    # the result stays on screen until the next hand starts
    view.apply("events", {"type": "hand_started", "seq": 999, "hand": 2, "t": 1.0})
    assert view.frame()["hand_over"] is False and view.hand.hole == {}


def test_a_misdeal_shows_its_banner_and_clears_the_cards() -> None:
    messages = view_messages(engine_messages(misdeal_events()))
    view = TableView("t01", secret=True)
    for kind, payload in messages:
        view.apply(kind, payload)
    banner = view.frame()["banner"]
    assert banner is not None and banner["kind"] == "misdeal" and banner["title"] == "MISDEAL"
    assert banner["rule"] == "35A-2" and "wrong seat" in banner["text"]
    assert view.situation(true_outs=True) is None  # no equity while the table is stopped


@pytest.mark.parametrize(
    ("procedures", "held", "kind", "title"),
    [
        (
            [{"procedure": "four_card_flop", "rule": "39"}],
            ["four_card_flop"],
            "four_card_flop",
            "FOUR-CARD FLOP",
        ),
        (
            [{"procedure": "premature_card", "rule": "RP-5B"}],
            [],
            "premature_card",
            "PREMATURE CARD",
        ),
        ([], ["card_reader"], "card_reader", "TABLE HOLD"),
        ([], ["fouled_deck"], "fouled_deck", "FOULED DECK"),
        ([], ["badge_reader"], None, None),  # the badge reader does not stop play
    ],
)
def test_banners_say_why_the_table_stopped(
    procedures: list[dict[str, Any]], held: list[str], kind: str | None, title: str | None
) -> None:
    messages = view_messages(engine_messages(hand_events(flop_plan())))
    view = TableView("t01", secret=False)
    state = next(p for k, p in messages if k == "state" and p["hand"] == 1)
    view.apply("state", {**state, "procedures": procedures, "held": held})
    banner = view.frame()["banner"]
    if kind is None:
        assert banner is None
    else:
        assert banner is not None and banner["kind"] == kind and banner["title"] == title


def test_events_seen_twice_count_once_and_bad_messages_change_nothing() -> None:
    messages = view_messages(engine_messages(hand_events(flop_plan())))
    view = TableView("t01", secret=True)
    for kind, payload in messages[:30]:
        view.apply(kind, payload)
    before = view.frame()
    event = next(p for k, p in reversed(messages[:30]) if k == "events")
    assert view.apply("events", event) is False
    for kind, payload in [
        ("events", {"type": "action"}),
        ("state", {"seats": "none"}),
        ("holecards", {"hand": 1, "seat": 2, "cards": ["Zz"]}),
        ("events", {"type": "action", "seq": "x"}),
        ("state", {}),
    ]:
        assert view.apply(kind, payload) is False
    assert view.rejected == 5
    assert view.frame() == before


def test_true_outs_can_be_turned_off() -> None:
    messages = view_messages(engine_messages(hand_events(flop_plan())))
    view = TableView("t01", secret=True)
    for kind, payload in messages:
        view.apply(kind, payload)
        if view.situation(true_outs=True) is not None and view.state and view.state["board"]:
            break
    assert set(view.situation(true_outs=True).dead) == {"2c", "9s"}  # type: ignore[union-attr]
    assert view.situation(true_outs=False).dead == ()  # type: ignore[union-attr]


def test_side_pots_and_the_pot_total() -> None:
    messages = view_messages(engine_messages(hand_events(flop_plan())))
    state = next(p for k, p in messages if k == "state" and p["hand"] == 1)
    seats = {**state["seats"], "1": {**state["seats"]["1"], "status": "allin", "bet": 300}}
    pots = [{"amount": 1200, "eligible": [1, 2, 3]}, {"amount": 400, "eligible": [2, 3]}]
    view = TableView("t01", secret=False)
    view.apply("state", {**state, "seats": seats, "pots": pots})
    frame = view.frame()
    assert frame["pots"] == pots
    assert frame["pot_total"] == 1600 + sum(s["bet"] for s in frame["seats"])
    assert {s["seat"]: s["status"] for s in frame["seats"]}[1] == "allin"
