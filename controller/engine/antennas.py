"""Antenna names (`seat3`, `bet3`, `board`, ...) parsed once into typed values."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

# `register` is the deck registration antenna; `other` a name the trace format does not
# know (the trace parser and the configuration refuse those; an engine fed directly still
# takes the card as read there, with no part in a hand).
AntennaKind = Literal["seat", "bet", "board", "burn", "muck", "pot", "register", "other"]

_PLAIN: dict[str, AntennaKind] = {
    "board": "board",
    "burn": "burn",
    "muck": "muck",
    "pot": "pot",
    "register": "register",
}


@dataclass(frozen=True, slots=True)
class Antenna:
    """One reader antenna: its kind, and the seat for `seatN` (hole cards) and `betN` (bets)."""

    name: str
    kind: AntennaKind
    seat: int | None = None

    @property
    def reads_chips(self) -> bool:
        """A chip reader antenna: a seat's bet zone or the pot."""
        return self.kind in ("bet", "pot")

    @property
    def on_table(self) -> bool:
        """Where a card is in play: a seat's hole cards or the board."""
        return self.kind in ("seat", "board")


@lru_cache(maxsize=256)
def antenna(name: str) -> Antenna:
    """The antenna called `name`, parsed once (the answer is cached)."""
    kind = _PLAIN.get(name)
    if kind is not None:
        return Antenna(name, kind)
    for prefix in ("seat", "bet"):
        if name.startswith(prefix) and name[len(prefix) :].isdigit():
            seat_kind: AntennaKind = "seat" if prefix == "seat" else "bet"
            return Antenna(name, seat_kind, int(name[len(prefix) :]))
    return Antenna(name, "other")
