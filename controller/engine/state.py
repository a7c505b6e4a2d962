"""The table's records: seats, levels, staff, and the facts of the hand being dealt."""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.engine.positions import Positions


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
