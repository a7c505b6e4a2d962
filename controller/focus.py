"""Where the hand is: the antennas the reader boards should read first, from the public state.

The daemon hands every `state` snapshot the engine publishes to a `FocusTracker`; what it
returns goes to the boards (protocol version 4, FOCUS; docs/reader-protocol.md, *The
schedule*), which read those antennas first and every other one in the background within a
bound. The focus only sets how soon a move is seen, never what it means: it is not an input,
not journaled, and a wrong focus costs latency, not a ruling. It reads nothing but the
snapshot (`hand`, `street`, `button`, `to_act`, `held`, `procedures`, `level`, `seats` with
their `status`, `cards` and `bet`), the contract's public view, so it follows the engine
whatever the engine keeps inside.

The antennas that matter now:

- between hands, while the table is held (a board offline, a pause, a fouled deck) or a
  dealing procedure is under way: none, every antenna in turn (anything may move);
- the deal: the next two seats to get a card, in dealing order (a card to another seat is
  seen in the background), and the bet zones where blinds and antes are being posted;
- a betting round: the seat to act and the muck (a fold), its bet zone (a push);
- a round just closed: the burn and the board (the next street is due), the bet zones whose
  chips the dealer is gathering into the pot (their arrival there rules nothing);
- the end of the hand (showdown, or one player left): the pot (pushed to the winner), the
  muck and the live seats' cards (mucked or tabled), the bet zones still to gather.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

HOLE_CARDS = 2  # hold'em, the games the engine deals
NEXT_SEATS = 2  # seats in focus ahead of the deal
IN_HAND = ("active", "allin", "folded")
LIVE = ("active", "allin")


@dataclass(frozen=True, slots=True)
class Focus:
    """The antennas to read first (none: every antenna in turn), and why (for the log)."""

    antennas: frozenset[str]
    why: str


EVERYWHERE = Focus(frozenset(), "between hands")


def _seats(state: Mapping[str, Any]) -> dict[int, Mapping[str, Any]]:
    seats = state.get("seats") or {}
    return {int(number): seat for number, seat in seats.items()}


def deal_order(in_hand: list[int], button: int | None) -> list[int]:
    """Seats in the order the dealer pitches: from the first seat left of the button."""
    ordered = sorted(in_hand)
    if button is None:
        return ordered
    return [s for s in ordered if s > button] + [s for s in ordered if s <= button]


class FocusTracker:
    """Turns each published state into the boards' focus; keeps only what the state no
    longer shows: the bet zones that held chips when their round closed (the dealer gathers
    them into the pot next)."""

    def __init__(self) -> None:
        self.focus = EVERYWHERE
        self._street: object = None
        self._bets: frozenset[int] = frozenset()  # seats with chips in their zone this street
        self._gather: frozenset[int] = frozenset()  # ... when the round closed
        self._to_act: int | None = None  # the seat to act in the last state

    def update(self, state: Mapping[str, Any]) -> Focus:
        """The focus after this state (also kept in `focus`)."""
        self.focus = self._derive(state)
        return self.focus

    def _derive(self, state: Mapping[str, Any]) -> Focus:
        if state.get("hand") is None:
            self._street = None
            self._bets = self._gather = frozenset()
            self._to_act = None
            return EVERYWHERE
        seats = _seats(state)
        street = state.get("street")
        to_act = state.get("to_act")
        betting = {n for n, seat in seats.items() if int(seat.get("bet") or 0) > 0}
        if street != self._street:  # a new street: the last one's chips are in the pot
            self._street = street
            self._gather = self._bets  # (unless its close was never seen)
            self._bets = frozenset()
        if to_act is not None:
            self._bets = self._bets | betting
        elif self._bets or self._to_act is not None:
            # The round closed: its chips are gathered next, the last actor's too (its
            # push and the close came in one state).
            last = frozenset() if self._to_act is None else frozenset({self._to_act})
            self._gather = self._gather | self._bets | last
            self._bets = frozenset()
        self._to_act = to_act
        if state.get("held") or state.get("procedures"):
            return Focus(frozenset(), "held" if state.get("held") else "procedure")
        in_hand = [n for n, seat in seats.items() if seat.get("status") in IN_HAND]
        live = [n for n, seat in seats.items() if seat.get("status") in LIVE]
        cards = {n: int(seats[n].get("cards") or 0) for n in live}
        order = deal_order(in_hand, state.get("button"))
        chips = {f"bet{n}" for n in self._gather}
        if street == "preflop" and not state.get("board") and cards:
            short = [n for n in order if n in cards and cards[n] < HOLE_CARDS]
            if short:
                return self._deal(state, order, short, cards, chips)
        if to_act is not None:
            names = {f"seat{to_act}", "muck", f"bet{to_act}"}
            return Focus(frozenset(names | chips), "betting")
        with_cards = [n for n in live if cards.get(n)]
        if len(live) >= 2 and street in ("preflop", "flop", "turn"):
            names = {"burn", "board"}
            return Focus(frozenset(names | chips), "street")
        names = {"pot", "muck", *(f"seat{n}" for n in with_cards)}
        return Focus(frozenset(names | chips), "end of hand")

    def _deal(
        self,
        state: Mapping[str, Any],
        order: list[int],
        short: list[int],
        cards: dict[int, int],
        chips: set[str],
    ) -> Focus:
        """The deal: the next seats to get a card; the zones where blinds are posted."""
        fewest = min(cards[n] for n in short)
        next_seats = [n for n in order if n in short and cards[n] == fewest]
        names = {f"seat{n}" for n in next_seats[:NEXT_SEATS]}
        if len(next_seats) < NEXT_SEATS:  # the round ends: the first seats' next cards
            names |= {f"seat{n}" for n in short[: NEXT_SEATS - len(next_seats)]}
        level = state.get("level") or {}
        posting = order if int(level.get("ante") or 0) > 0 else order[:2]
        if len(order) == 2:
            posting = order  # heads-up: the button posts the small blind
        names |= {f"bet{n}" for n in posting}
        to_act = state.get("to_act")
        if to_act is not None:
            names.add(f"bet{to_act}")
        return Focus(frozenset(names | chips), "deal")
