"""The records of a hand's chips: bet zones, held actions, forced bets, the opening."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from controller.rules.betting import HeldAction
from controller.rules.chips import PushRuling


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
