"""A simulated dealer: writes the physical trace of whole hands from a seeded shuffle."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from controller.engine.cards import FULL_DECK
from controller.trace import ButtonPress, Command, Event, TagIn, TagOut


@dataclass(slots=True)
class DealerClock:
    """Trace time advancing by fixed steps."""

    t: float = 0.0

    def step(self, dt: float) -> float:
        """Advance and return the new time."""
        self.t = round(self.t + dt, 6)
        return self.t


def seat_players(players: Sequence[tuple[int, str, int]], level: tuple[int, int, int],
                 button: int) -> list[Event]:
    """Room commands that seat the players, set the level and place the button."""
    events: list[Event] = [
        Command(0.0, "seat", {"seat": s, "player": name, "stack": stack})
        for s, name, stack in players
    ]
    sb, bb, ante = level
    events.append(Command(0.0, "level", {"small_blind": sb, "big_blind": bb, "ante": ante}))
    events.append(Command(0.0, "button", {"seat": button}))
    return events


def deal_hand(
    rng: random.Random,
    clock: DealerClock,
    dealt_in: Sequence[int],
    first: int,
    *,
    step: float = 0.25,
) -> list[Event]:
    """One hand with no betting: shuffle, deal two cards each, board to the river, collect.

    `first` is the seat that receives the first card (left of the button, rule 34 heads-up).
    """
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    order = sorted(dealt_in, key=lambda s: (s < first, s))
    events: list[Event] = [ButtonPress(clock.step(step), "shuffler")]
    at: dict[str, list[str]] = {}

    def put(antenna: str, card: str) -> None:
        events.append(TagIn(clock.step(step), antenna, card=card))
        at.setdefault(antenna, []).append(card)

    for _ in range(2):
        for seat in order:
            put(f"seat{seat}", deck.pop())
    for street in (3, 1, 1):
        put("burn", deck.pop())
        for _ in range(street):
            put("board", deck.pop())
    # The dealer gathers every card into the muck, then into the shuffler.
    for antenna in sorted(at):
        for card in at[antenna]:
            events.append(TagOut(clock.step(0.05), antenna, card=card))
            events.append(TagIn(clock.t, "muck", card=card))
    for antenna_cards in at.values():
        for card in antenna_cards:
            events.append(TagOut(clock.step(0.01), "muck", card=card))
    return events
