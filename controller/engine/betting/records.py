"""The records of a hand's chips: its betting state (`BettingRecord`), bet zones, held
actions, forced bets, the opening."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from controller.engine.state import FaceDown, Phase
from controller.rules.betting import Action, BettingRound, HeldAction
from controller.rules.chips import Declared, PushRuling


class StackHolder(Protocol):
    """A seat's chips behind (the engine's Seat)."""

    stack: int


@dataclass(slots=True)
class Zone:
    """A seat's bet zone as the chip reader sees it."""

    chips: dict[str, int] = field(default_factory=dict)  # settled chips physically there
    pending: dict[str, int] = field(default_factory=dict)  # arrived since the last settle
    pulled: list[int] = field(default_factory=list)  # settled chips taken back by the player
    nudged: dict[str, int] = field(default_factory=dict)  # settled chips moved out of turn
    last_t: float = 0.0


@dataclass(slots=True)
class Held:
    """An out-of-turn push or fold waiting for its seat's turn (rule 53)."""

    action: HeldAction
    ruling: PushRuling


@dataclass(frozen=True, slots=True)
class Blinds:
    """The forced bets of a hand."""

    small_blind: int
    big_blind: int
    ante: int
    bb_ante: bool


@dataclass(frozen=True, slots=True)
class Opening:
    """The betting as the first round opened (blinds, antes, a straddle in): the point a
    misdeal's exact re-play returns to (rule 35-C)."""

    live: frozenset[int]
    contrib: dict[int, int]
    posted: dict[int, int]
    owed: dict[int, int]
    antes: int
    dead: int
    straddle_seat: int | None
    straddle: int
    blinds: Blinds
    zones: dict[int, dict[str, int]]
    stacks: dict[int, int]


@dataclass(kw_only=True)
class BettingRecord:
    """A hand's betting state: every field that changes while the hand is played.

    `controller.engine.betting_flow.HandBetting` is this record plus its wiring (the
    seats, positions, profile and callbacks it is given); the betting rules
    (`controller.engine.betting.*`) read these fields through `HandChips` and return their
    changes, which `HandBetting.make` carries out.
    """

    blinds: Blinds  # the forced bets (changed by a level correction, 23, and 35-C's re-play)
    phase: Phase = Phase.POSTING
    round: BettingRound | None = None
    street_i: int = 0
    announced: set[int] = field(default_factory=set)  # streets `board_dealt` announced
    live: set[int] = field(default_factory=set)
    # The hands that left the pot (fold, muck, kill), in order: the last of them to leave
    # a side pot no live hand reaches keeps it (21; controller.rules.pots.build_pots).
    left: list[int] = field(default_factory=list)
    contrib: dict[int, int] = field(default_factory=dict)  # chips put in, this hand
    posted: dict[int, int] = field(default_factory=dict)  # blinds posted (antes apart)
    owed: dict[int, int] = field(default_factory=dict)  # forced bets still due
    antes: int = 0
    dead: int = 0  # a big-blind ante (RP-11) is dead money in the main pot, no one's bet
    # Blinds missed on a house break (Campione "Gestione pause") paid, as dead money.
    missed_paid: dict[int, int] = field(default_factory=dict)
    rake: int = 0  # the house's rake taken from this hand's pots, once awarded
    zones: dict[int, Zone] = field(default_factory=dict)
    unsettled: set[int] = field(default_factory=set)  # zones moved since their last settle
    actions: list[Action] = field(default_factory=list)
    declared: dict[int, Declared] = field(default_factory=dict)
    # Rule 55: seats that declared check facing a bet on this street: call or fold only.
    checked_facing: set[int] = field(default_factory=set)
    first_motion: set[int] = field(default_factory=set)  # TDA 2015 42 C: call, then raise
    held: dict[int, Held] = field(default_factory=dict)  # 53-A
    # Rule 53-B: out-of-turn actions while one seat is skipped (street, seat, kinds, by
    # whom); once they amount to substantial action they bind, and the floor is called.
    skip: tuple[int, int, list[str], list[int]] | None = None
    binding_53b: set[int] = field(default_factory=set)  # held actions binding by 53-B
    skipped_found: list[tuple[int, list[int]]] = field(default_factory=list)  # floor calls
    # Undercalls left to the floor (51-B): seat -> the chips put out, forfeited on a fold.
    undercalls: dict[int, int] = field(default_factory=dict)
    # Chips still owed on a counted action (the `action` event's `owed`): seat -> (street
    # index, chips). They are absorbed as they come, not read as a new push.
    owing: dict[int, tuple[int, int]] = field(default_factory=dict)
    tabled: bool = False  # rule 16
    shown: set[int] = field(default_factory=set)
    face_down: FaceDown = FaceDown.OFF  # RP-8 F, hand-for-hand
    muck_disputed: set[int] = field(default_factory=set)  # 13-C, 16: the floor is called
    river_aggressor: int | None = None
    last_aggressor: int | None = None  # the hand's last bet or raise, any street
    straddle_seat: int | None = None
    straddle: int = 0
    cards_dealt: bool = False  # set by the engine at the first hole card
    antes_taken: bool = False  # the ante chips left the bet zones (not prior chips, 46)
    sa_memo: tuple[int, bool] = (0, False)  # substantial action (36), per action count
