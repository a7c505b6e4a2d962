"""Dealing errors a simulated dealer can make on purpose in a planned hand, for the table to
catch and the dealer then to put right as the table instructs: a premature flop (TDA 2019
RP-5A), a four-card flop (39), folds out of turn (58; several skip a seat, 53-B)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from controller.engine.cards import FULL_DECK
from controller.trace import Event, TagIn, TagOut

Mistake = Callable[[list[Event], random.Random], list[Event]]


def _at(hand: list[Event], antenna: str) -> list[int]:
    return [i for i, e in enumerate(hand) if isinstance(e, TagIn) and e.antenna == antenna]


def _last_deal(hand: list[Event], before: int) -> int | None:
    """The index of the last hole card dealt before `before`."""
    dealt = [
        i
        for i, e in enumerate(hand[:before])
        if isinstance(e, TagIn) and e.antenna.startswith("seat")
    ]
    return dealt[-1] if dealt else None


def _insert(hand: list[Event], after: int, moved: list[Event]) -> list[Event]:
    """`moved` right after `hand[after]`, at its time (a trace's time never goes back)."""
    t = hand[after].t
    return [*hand[: after + 1], *(replace(e, t=t) for e in moved), *hand[after + 1 :]]


def premature_flop(hand: list[Event], rng: random.Random) -> list[Event]:
    """The flop (its burn and three cards) dealt right after the hole cards, before any
    pre-flop decision (RP-5A). A hand that saw no flop is kept."""
    burns, board = _at(hand, "burn"), _at(hand, "board")
    if not burns or len(board) < 3:
        return hand
    flop = [burns[0], *board[:3]]
    deal = _last_deal(hand, burns[0])
    if deal is None:
        return hand
    moved = [hand[i] for i in flop]
    rest = [e for i, e in enumerate(hand) if i not in flop]
    return _insert(rest, deal, moved)


def four_card_flop(hand: list[Event], rng: random.Random) -> list[Event]:
    """A fourth card turned with the flop (rule 39). A hand that saw no flop is kept."""
    board = _at(hand, "board")
    if len(board) < 3:
        return hand
    used = {e.card for e in hand if isinstance(e, TagIn | TagOut) and e.card}
    spare = rng.choice([c for c in FULL_DECK if c not in used])
    third = hand[board[2]]
    return [*hand[: board[2] + 1], TagIn(third.t, "board", card=spare), *hand[board[2] + 1 :]]


def folds_out_of_turn(hand: list[Event], rng: random.Random) -> list[Event]:
    """Every pre-flop fold made right after the deal, before the first to act has acted:
    binding folds out of turn (58); three or more skip that seat (53-B)."""
    burns = _at(hand, "burn")
    end = burns[0] if burns else len(hand)
    folds = [
        i
        for i, e in enumerate(hand[:end])
        if (isinstance(e, TagOut) and e.antenna.startswith("seat"))
        or (isinstance(e, TagIn) and e.antenna == "muck")
    ]
    deal = _last_deal(hand, end)
    if not folds or deal is None or folds[0] < deal:
        return hand
    moved = [hand[i] for i in folds]
    rest = [e for i, e in enumerate(hand) if i not in set(folds)]
    return _insert(rest, deal, moved)


#: The mistakes by name (the demo's first-card misdeal is controller/simdemo.py's own).
MISTAKES: dict[str, Mistake] = {
    "premature_flop": premature_flop,
    "four_card_flop": four_card_flop,
    "folds_out_of_turn": folds_out_of_turn,
}
