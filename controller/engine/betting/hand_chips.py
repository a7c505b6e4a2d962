"""What a betting rule sees of a hand's chips: the fields it reads and writes, and the
steps it asks the hand to take (`controller.engine.betting_flow.HandBetting` is one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from controller.engine.betting.records import Blinds, Held, StackHolder, Zone
from controller.engine.ports import Emitter
from controller.engine.positions import Positions
from controller.engine.state import FaceDown, Phase
from controller.rules.betting import Action, BettingRound
from controller.rules.chips import Declared
from controller.rules.profiles import Profile


class HandChips(Protocol):
    """A hand's chips as the betting rules (`controller.engine.betting.*`) see them."""

    emit: Emitter
    seats: dict[int, StackHolder]
    dealt_in: list[int]
    pos: Positions
    blinds: Blinds
    structure: str
    profile: Profile
    hole: Callable[[int], list[str]]
    board: Callable[[], list[str]]
    phase: Phase
    round: BettingRound | None
    street_i: int
    live: set[int]
    contrib: dict[int, int]
    posted: dict[int, int]
    owed: dict[int, int]
    zones: dict[int, Zone]
    actions: list[Action]
    declared: dict[int, Declared]
    checked_facing: set[int]
    first_motion: set[int]
    held: dict[int, Held]
    undercalls: dict[int, int]
    skip: tuple[int, int, list[str], list[int]] | None
    binding_53b: set[int]
    skipped_found: list[tuple[int, list[int]]]
    tabled: bool
    shown: set[int]
    face_down: FaceDown
    muck_disputed: set[int]
    last_aggressor: int | None
    river_aggressor: int | None
    straddle_multiple: int
    straddle_seat: int | None
    straddle: int
    cards_dealt: bool
    missed: dict[int, int]
    missed_paid: dict[int, int]
    antes: int
    dead: int
    odd_unit: int
    rake: int

    @property
    def to_act(self) -> int | None:
        """The seat whose turn it is."""
        ...

    def bet(self, seat: int) -> int:
        """Chips in front of the seat on the current street."""
        ...

    def unreadable(self) -> list[int]:
        """Live seats whose hand the reader has not fully read."""
        ...

    def record(self, action: Action, before: int) -> None:
        """Count an action: its chips leave the stack for the pot."""
        ...

    def settle(self, t: float, *, only_due: bool, except_seat: int | None = None) -> None:
        """Read pushes as settled: those quiet for settle_seconds, or all of them."""
        ...

    def open_preflop(self) -> None:
        """The forced bets are in: the first round opens."""
        ...

    def after_change(self, t: float) -> None:
        """Close the round, end the hand or resolve a held action, as far as it goes."""
        ...
