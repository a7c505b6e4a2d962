"""The one typed record of a hand in progress (`HandRecord`), and its plain form and back.

A hand is its facts (`DealtHand`), its betting (`BettingRecord`), its dealing
(`DealingRecord`, the procedures' own state in it) and what it was started with that only
its wiring keeps (`HandStart`). The engine is the record's only writer: `Hand` holds it
through `HandBetting` and `HandDealing` (each *is* its record, plus wiring).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from controller.engine.betting.records import BettingRecord
from controller.engine.betting_flow import HandBetting
from controller.engine.dealing import DealingRecord, HandDealing
from controller.engine.hand import Hand
from controller.engine.plain import Adapter, PlainError, Registry, from_plain, to_plain
from controller.engine.procedures.base import FloorCall, Procedure
from controller.engine.procedures.button_short_37 import ButtonShort
from controller.engine.procedures.dead_hand_38 import DeadHand
from controller.engine.procedures.exposed_card_35a5 import ExposedCard
from controller.engine.procedures.four_card_flop_39 import FourCardFlop
from controller.engine.procedures.misdeal_35 import Misdeal
from controller.engine.procedures.premature_card_rp5 import PrematureCard
from controller.engine.procedures.skipped_seat_53b import SkippedHand
from controller.engine.state import DealtHand
from controller.rules.betting import Action, BettingRound
from controller.rules.chips import Structure


@dataclass(kw_only=True)
class HandStart:
    """What the hand was started with that its betting keeps as wiring, not as record."""

    missed: dict[int, int]  # blinds missed on a house break, due as dead money
    event_heads_up: bool  # rule 48 as the hand began (a level correction keeps it)


@dataclass(kw_only=True)
class HandRecord:
    """A hand in progress, every field that changes while it is played; no wiring."""

    facts: DealtHand
    start: HandStart
    betting: BettingRecord | None
    dealing: DealingRecord | None


@dataclass(kw_only=True)
class RoundRecord:
    """A `BettingRound`'s state (the rules' class keeps it as plain attributes)."""

    order: tuple[int, ...]
    structure: Structure
    big_blind: int
    bet_unit: int
    raise_cap: int | None
    cap_lifted_heads_up: bool
    pot: int
    blind_level: int
    big_blind_seat: int | None
    behind: dict[int, int]
    bets: dict[int, int]
    current_bet: int
    last_full_raise: int
    raise_count: int
    folded: set[int]
    acted_at: dict[int, int]
    actions: list[Action]
    cursor: int


_ROUND_NAMES = {f.name: f.name for f in dataclasses.fields(RoundRecord)} | {"cursor": "_cursor"}


def _round_record(rnd: BettingRound) -> RoundRecord:
    attrs = vars(rnd)
    if set(attrs) != set(_ROUND_NAMES.values()):
        raise PlainError(f"BettingRound has attributes {sorted(attrs)}, RoundRecord does not")
    return RoundRecord(**{name: attrs[attr] for name, attr in _ROUND_NAMES.items()})


def _round(record: RoundRecord) -> BettingRound:
    rnd = BettingRound.__new__(BettingRound)
    vars(rnd).update({attr: getattr(record, name) for name, attr in _ROUND_NAMES.items()})
    return rnd


#: The closed registry: the procedures by kind of remedy, and the betting round.
REGISTRY = Registry(
    tagged={
        Procedure: {
            cls.__name__: cls
            for cls in (
                ButtonShort,
                DeadHand,
                ExposedCard,
                FloorCall,
                FourCardFlop,
                Misdeal,
                PrematureCard,
                SkippedHand,
            )
        }
    },
    adapters={BettingRound: Adapter(RoundRecord, _round_record, _round)},
)


def record_of(hand: Hand) -> HandRecord:
    """The hand's record, read through its objects (not a copy: encode it at once)."""
    facts = DealtHand(**{f.name: getattr(hand, f.name) for f in dataclasses.fields(DealtHand)})
    betting = hand.betting
    start = HandStart(
        missed=dict(betting.missed) if betting is not None else {},
        event_heads_up=betting.event_heads_up if betting is not None else False,
    )
    return HandRecord(facts=facts, start=start, betting=betting, dealing=hand.dealing)


def to_json(record: HandRecord) -> dict[str, Any]:
    """The record as plain JSON values."""
    plain: dict[str, Any] = to_plain(REGISTRY, HandRecord, record)
    return plain


def from_json(data: Any) -> HandRecord:
    """The record whose plain form `data` is (PlainError if it does not fit)."""
    record: HandRecord = from_plain(REGISTRY, HandRecord, data)
    return record


def load(betting: HandBetting | None, dealing: HandDealing | None, record: HandRecord) -> None:
    """Put a record's betting and dealing state into a hand's freshly wired objects."""
    for target, state, cls in (
        (betting, record.betting, BettingRecord),
        (dealing, record.dealing, DealingRecord),
    ):
        if (target is None) != (state is None):
            raise PlainError(f"the record's {cls.__name__} does not fit the hand's wiring")
        if target is not None:
            for f in dataclasses.fields(cls):
                setattr(target, f.name, getattr(state, f.name))
