"""Where every card is: per-antenna contents and the antennas each card is read at."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

RANKS = "23456789TJQKA"
SUITS = "cdhs"
FULL_DECK: tuple[str, ...] = tuple(r + s for r in RANKS for s in SUITS)
#: Cards on the board once each street is dealt.
BOARD_SIZE = {"flop": 3, "turn": 4, "river": 5}


def street_cards(board: Sequence[str], street: str) -> list[str]:
    """The cards `street` puts on the board: the flop's three, or the turn's or river's one."""
    upto = BOARD_SIZE[street]
    return list(board[:upto]) if street == "flop" else [board[upto - 1]]


@dataclass(slots=True)
class CardMap:
    """Physical positions of cards as last reported by the card reader.

    A card is normally at one antenna; while it crosses from one field to the next it can
    be read at two at once (that is reported by `add` so the caller can alert).
    """

    at: dict[str, list[str]] = field(default_factory=dict)  # card -> antennas, oldest first
    contents: dict[str, list[str]] = field(default_factory=dict)  # antenna -> cards, in order

    def add(self, antenna: str, card: str) -> list[str]:
        """Record `card` at `antenna`; return the other antennas it is still read at."""
        places = self.at.setdefault(card, [])
        if antenna in places:
            return []
        others = list(places)
        places.append(antenna)
        self.contents.setdefault(antenna, []).append(card)
        return others

    def remove(self, antenna: str, card: str) -> bool:
        """Forget `card` at `antenna`; False if it was not there."""
        places = self.at.get(card)
        if not places or antenna not in places:
            return False
        places.remove(antenna)
        if not places:
            del self.at[card]
        self.contents[antenna].remove(card)
        return True

    def where(self, card: str) -> str | None:
        """The antenna the card arrived at last, or None when it is not on the table."""
        places = self.at.get(card)
        return places[-1] if places else None

    def cards_at(self, antenna: str) -> list[str]:
        """Cards at an antenna in arrival order."""
        return list(self.contents.get(antenna, ()))
