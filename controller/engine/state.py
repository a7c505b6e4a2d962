"""The table's records: seats, levels, staff, the facts of the hand being dealt, and the
enums of phases and statuses (their values are those published)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from controller.engine.positions import Positions
from controller.engine.procedures.stage import Stage

__all__ = [
    "DealtHand",
    "FaceDown",
    "Level",
    "Phase",
    "Seat",
    "SeatStatus",
    "Staffer",
    "Stage",
]


class Phase(StrEnum):
    """Where a hand's betting is (`HandBetting.phase`): its values are those published."""

    POSTING = "posting"  # blinds and antes still due
    BETTING = "betting"  # a betting round is open
    WAITING = "waiting"  # the round is over: the next street's cards are awaited
    SHOWDOWN = "showdown"  # the river betting is over: hands are shown, the pot is pushed
    COMPLETE = "complete"  # the pots are awarded (or every chip refunded)


class SeatStatus(StrEnum):
    """A seat as the public state shows it (`Table.seat_status`)."""

    EMPTY = "empty"  # no player
    OUT = "out"  # a player with no chips
    WAITING = "waiting"  # a player not dealt in the hand (or between hands)
    ACTIVE = "active"  # dealt in, with chips behind
    ALLIN = "allin"  # dealt in, every chip in
    FOLDED = "folded"  # dealt in, the hand folded, mucked or killed


# Module-level aliases of the enum members read on every input, imported by the engine's
# hot modules (`from controller.engine.state import FOLDED`): on Python 3.11 each
# `Enum.MEMBER` read goes through EnumType.__getattr__'s slow attribute hook (~850
# instructions, against a few for a global; see docs/benchmarks.md §2).
POSTING, BETTING, COMPLETE = Phase.POSTING, Phase.BETTING, Phase.COMPLETE
EMPTY, OUT, WAITING = SeatStatus.EMPTY, SeatStatus.OUT, SeatStatus.WAITING
ACTIVE, ALLIN, FOLDED = SeatStatus.ACTIVE, SeatStatus.ALLIN, SeatStatus.FOLDED
DONE = Stage.DONE


class FaceDown(StrEnum):
    """RP-8 F, hand-for-hand: an all-in and call keeps the hands face down until the floor
    instructs the dealer (`HandBetting.face_down`)."""

    OFF = ""  # not hand-for-hand: rule 16 tables the hands
    WAIT = "wait"  # hand-for-hand: the hands will stay face down
    SAID = "said"  # it happened (`hands_face_down`): the dealer waits for the floor


@dataclass(frozen=True, slots=True)
class Staffer:
    """A member of staff as the engine knows them: badge UID, name, role."""

    uid: str
    name: str
    role: str  # dealer | floor

    def ref(self) -> dict[str, str]:
        """How events name them."""
        return {"uid": self.uid, "name": self.name}


@dataclass(frozen=True, slots=True)
class Level:
    """Blinds and ante of a level (rule 23: a new level applies from the next hand)."""

    small_blind: int = 0
    big_blind: int = 0
    ante: int = 0
    bb_ante: bool = False
    event_heads_up: bool = False  # rule 48: the event is down to two players (no raise cap)


@dataclass(slots=True)
class Seat:
    """A seat and the player in it."""

    number: int
    player: str | None = None
    stack: int = 0
    new: bool = False  # seated since the last hand started (rules 8, 10)
    away: bool = False  # not at the table (rule 30): dealt in, hand killed after the deal


@dataclass(slots=True)
class DealtHand:
    """One hand's facts: who is dealt in, where the button is, and its cards as read.

    `controller.engine.hand.Hand` adds the hand's betting and dealing flows to these.
    """

    number: int
    positions: Positions
    level: Level
    dealt_in: list[int]
    started_t: float
    hole: dict[int, list[str]] = field(default_factory=dict)
    board: list[str] = field(default_factory=list)
    burns: list[str] = field(default_factory=list)
    street: str = "preflop"
    dealer: dict[str, str] | None = None
    trigger: str = "shuffler"
    extras: set[str] = field(default_factory=set)  # extra cards taken back (not hole cards)
    redeals: int = 0
