"""The hand's betting and dealing states are typed records (`BettingRecord`,
`DealingRecord`): every field of `HandBetting` and `HandDealing` that changes during a hand
is declared there, the rest is their wiring."""

from __future__ import annotations

import dataclasses

from controller.engine.betting.records import BettingRecord
from controller.engine.dealing import DealingRecord
from controller.engine.state import Phase
from tests.engine_helpers import Table

HOLE = {1: ["As", "Kd"], 2: ["7c", "7d"], 3: ["Qh", "Jh"]}
#: What a HandBetting is given at the start of the hand, and never changes after.
WIRING = {
    "emit",
    "missed",
    "seats",
    "dealt_in",
    "pos",
    "structure",
    "settle_seconds",
    "hole",
    "board",
    "odd_unit",
    "profile",
    "event_heads_up",
    "straddle_multiple",
    "on_open",
}


def _preflop() -> Table:
    table = Table(button=3)
    table.shuffle()
    table.push(1, 25, 25)
    table.push(2, 100)
    table.deal(HOLE)
    return table


def test_every_field_a_hand_changes_is_in_the_betting_record() -> None:
    table = _preflop()
    betting = table.engine.betting
    assert betting is not None
    fields = {f.name for f in dataclasses.fields(BettingRecord)}
    assert set(vars(betting)) - WIRING == fields
    assert not fields & WIRING


def test_every_field_a_hand_changes_is_in_the_dealing_record() -> None:
    table = _preflop()
    dealing = table.engine.dealing
    assert dealing is not None
    fields = {f.name for f in dataclasses.fields(DealingRecord)}
    assert set(vars(dealing)) - {"table", "hand", "betting", "profile", "hole_count"} == fields


def test_the_record_is_a_copy_of_the_hand_as_it_stands() -> None:
    table = _preflop()
    betting = table.engine.betting
    assert betting is not None
    record = betting.state()
    assert type(record) is BettingRecord
    assert record.phase is Phase.BETTING
    assert record.contrib == {1: 50, 2: 100, 3: 0}
    assert record.round is not None and record.round.to_act == 3
    record.contrib[3] = 999
    record.live.clear()
    assert betting.contrib[3] == 0 and betting.live == {1, 2, 3}


def test_a_hand_compares_and_hashes_by_identity_not_by_its_record() -> None:
    one, two = _preflop(), _preflop()
    assert one.engine.betting is not None and two.engine.betting is not None
    assert one.engine.dealing is not None and two.engine.dealing is not None
    assert one.engine.betting != two.engine.betting
    assert one.engine.dealing != two.engine.dealing
    assert len({one.engine.betting, two.engine.betting, one.engine.dealing}) == 3
