"""The TV desk with sealed hole cards: nothing of a card before its key, whatever TV's delay."""

from __future__ import annotations

import json
from typing import Any

from broadcast.desk import KEY_MARGIN, TableDesk, TableSpec
from broadcast.equity import Equity, Situation, compute
from broadcast.worker import EquityWorker
from tests.tv_helpers import engine_messages, flop_plan, hand_events, hole_cards, tv_messages

TABLE_DELAY = 30.0


class CountingWorker(EquityWorker):
    """The equity worker, not started: counts every situation it is asked about."""

    def __init__(self) -> None:
        self.asked: list[Situation] = []
        super().__init__(compute_fn=self._compute)

    def _compute(self, situation: Situation) -> Equity:
        return compute(situation)

    def get(self, situation: Situation, *, urgent: bool = True) -> Equity | None:
        self.asked.append(situation)
        return super().get(situation, urgent=urgent)


def _desk(delay: float) -> tuple[TableDesk, CountingWorker]:
    worker = CountingWorker()
    return TableDesk(TableSpec("t01", "poker/sim/t01"), delay=delay, worker=worker), worker


def _feed(desk: TableDesk, messages: list[tuple[str, dict[str, Any]]], at: float) -> None:
    for kind, payload in messages:
        desk.ingest(kind, payload, at)


def test_a_tv_side_shorter_delay_shows_and_computes_nothing_before_the_key() -> None:
    """The table releases keys 30 s after the read; TV is set to 0 s: no card, no equity,
    nothing in its status about a card until the keys come."""
    messages = tv_messages(engine_messages(hand_events(flop_plan()), delay=TABLE_DELAY))
    sealed = [(k, p) for k, p in messages if k != "holekeys"]
    keys = [(k, p) for k, p in messages if k == "holekeys"]
    secret = hole_cards(messages)
    desk, worker = _desk(0.0)
    _feed(desk, sealed, at=0.0)
    for now in (0.0, 10.0, TABLE_DELAY + KEY_MARGIN + 5.0):
        desk.pump(now)
        text = desk.overlay.text or ""
        assert not [c for c in secret if f'"{c}"' in text]
        assert all(s["cards"] is None for s in json.loads(text)["seats"])
    assert worker.asked == []  # not one equity asked for
    assert desk.lookahead.hand.hole == {} and desk.onair_view.hand.hole == {}
    assert desk.line.in_force >= TABLE_DELAY  # TV's 0 s is raised to the table's
    assert desk.holes.opened == {}
    # the keys come (30 s after each read): the cards open, on air once the delay lets them
    _feed(desk, keys, at=TABLE_DELAY)
    assert len(desk.lookahead.hand.hole) == 4  # known from now on (the hand is over: no equity)
    desk.pump(1000.0)
    frame = json.loads(desk.overlay.text or "{}")
    shown = {s["seat"]: s["cards"] for s in frame["seats"] if s["cards"]}
    assert shown == {1: ["Ah", "Kh"], 2: ["Qs", "Qc"], 3: ["7d", "6d"], 4: ["2c", "9s"]}


def test_clear_hole_cards_are_refused() -> None:
    desk, worker = _desk(0.0)
    clear = {"table": "t01", "hand": 1, "seat": 1, "cards": ["As", "Kd"], "t": 1.0}
    desk.ingest("holecards", clear, 0.0)
    desk.pump(100.0)
    assert desk.refused_clear == 1 and desk.onair_view.hand.hole == {}
    assert worker.asked == []


def test_a_key_that_does_not_open_its_card_shows_nothing() -> None:
    messages = tv_messages(engine_messages(hand_events(flop_plan())))
    desk, _worker = _desk(0.0)
    keys = [p for k, p in messages if k == "holekeys"]
    wrong = [
        ("holekeys", {**p, "key": keys[(i + 1) % len(keys)]["key"]}) for i, p in enumerate(keys)
    ]
    _feed(desk, [(k, p) for k, p in messages if k != "holekeys"] + wrong, at=0.0)
    desk.pump(1000.0)
    assert desk.holes.failed == len(keys) and desk.holes.opened == {}
    assert all(s["cards"] is None for s in json.loads(desk.overlay.text or "{}")["seats"])
