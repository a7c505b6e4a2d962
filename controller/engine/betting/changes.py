"""The changes a betting rule returns, as data, for the hand to make in order (its one
writer is `HandBetting.make`): chips moved, seats marked, fields set, events and alerts,
and the steps the hand takes next."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from controller.engine.effects import Alert, Say
from controller.engine.state import FaceDown

#: The hand's sets of seats a rule may add a seat to or take one from.
SeatSet = Literal["live", "shown", "checked_facing", "first_motion", "muck_disputed", "binding_53b"]
#: The hand's per-seat maps a rule may set an entry of or drop one from.
SeatMap = Literal["held", "declared", "undercalls", "owed"]


@dataclass(frozen=True, slots=True)
class Chips:
    """`amount` chips from the seat's stack into the pot (negative: back to its stack);
    with `street`, as part of its bet on this street (the round's count moves too)."""

    seat: int
    amount: int
    street: bool = False


@dataclass(frozen=True, slots=True)
class Won:
    """`chips` of a pot to the seat's stack."""

    seat: int
    chips: int


@dataclass(frozen=True, slots=True)
class Posted:
    """A forced bet put in (RP-11, a straddle, blinds missed on a break): `missed` dead
    money for blinds missed, `ante` (dead with a big-blind ante), `blind` the seat's own
    bet; `owed` is what it pays of the forced bets still due."""

    seat: int
    blind: int
    ante: int = 0
    missed: int = 0
    owed: int = 0
    dead_ante: bool = False


@dataclass(frozen=True, slots=True)
class Mark:
    """Add the seat to one of the hand's seat sets (`on=False`: take it out)."""

    field: SeatSet
    seat: int
    on: bool = True


@dataclass(frozen=True, slots=True)
class Keep:
    """Set the seat's entry of one of the hand's per-seat maps."""

    field: SeatMap
    seat: int
    value: Any


@dataclass(frozen=True, slots=True)
class Drop:
    """Drop the seat's entry of one of the hand's per-seat maps, if any."""

    field: SeatMap
    seat: int


@dataclass(frozen=True, slots=True)
class Aggressor:
    """The hand's last bet or raise (and the river's) is no longer `seat`'s (15-B)."""

    seat: int


@dataclass(frozen=True, slots=True)
class CurrentBet:
    """The bet the others face on this street."""

    amount: int


@dataclass(frozen=True, slots=True)
class Folded:
    """The round counts the seat as folded (it left the pot out of turn)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Checked:
    """The seat to act checks (the round records it)."""

    seat: int


@dataclass(frozen=True, slots=True)
class Skip:
    """Rule 53-B's count of out-of-turn actions past a skipped seat; `binding`, the held
    actions they bind; `found` when they just became substantial action (the floor is
    called on the skipped seat)."""

    street: int
    seat: int
    kinds: tuple[str, ...]
    seats: tuple[int, ...]
    binding: tuple[int, ...] = ()
    found: tuple[int, list[int]] | None = None


@dataclass(frozen=True, slots=True)
class Straddled:
    """The house straddle (Campione "Puntate aggiuntive") is the seat's."""

    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class Tabled:
    """Rule 16: every live hand face up."""


@dataclass(frozen=True, slots=True)
class FaceDownNow:
    """RP-8 F: where hand-for-hand's face-down wait stands."""

    state: FaceDown


@dataclass(frozen=True, slots=True)
class Completed:
    """The hand is complete: no round, the pots awarded; `rake` is the house's."""

    rake: int


@dataclass(frozen=True, slots=True)
class OpenPreflop:
    """The forced bets are in: the first round opens."""


@dataclass(frozen=True, slots=True)
class AfterChange:
    """Close the round, end the hand or resolve a held action, as far as it goes."""

    t: float


#: What a betting rule may ask of the hand, carried out in order by `HandBetting.make`.
Change = (
    Say
    | Alert
    | Chips
    | Won
    | Posted
    | Mark
    | Keep
    | Drop
    | Aggressor
    | CurrentBet
    | Folded
    | Checked
    | Skip
    | Straddled
    | Tabled
    | FaceDownNow
    | Completed
    | OpenPreflop
    | AfterChange
)
