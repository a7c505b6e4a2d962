"""Dealing errors a simulated dealer can make on purpose in a planned hand, for the table to
catch and the dealer then to put right as the table instructs: a premature flop (TDA 2019
RP-5A), a four-card flop (39), folds out of turn (58), chips pushed out of turn (53-A; with
the chips, substantial action that skips a seat, 53-B)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from controller.engine.cards import FULL_DECK
from kernel.inputs import ButtonPress, Event, TagIn, TagOut, Tick

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


def _decisions(hand: list[Event], start: int, end: int) -> list[tuple[int, int]]:
    """The pre-flop decisions between `start` and `end` as (first, past the last) index
    ranges: a push (its declaration button, its chips, the tick it settles at), a check,
    a fold (both cards to the muck)."""
    out: list[tuple[int, int]] = []
    i = start
    while i < end:
        e = hand[i]
        if isinstance(e, ButtonPress) and e.name == "check":
            out.append((i, i + 1))
            i += 1
        elif isinstance(e, TagOut) and e.antenna.startswith("seat"):
            out.append((i, min(i + 4, end)))  # two cards, each out of the seat and to the muck
            i += 4
        elif isinstance(e, ButtonPress) or (isinstance(e, TagIn) and e.antenna.startswith("bet")):
            j = i
            while j < end and not isinstance(hand[j], Tick):
                j += 1
            out.append((i, min(j + 1, end)))
            i = j + 1
        else:
            return out  # anything else (a gather): the pre-flop betting is over
    return out


def pushes_out_of_turn(hand: list[Event], rng: random.Random) -> list[Event]:
    """The second and third pre-flop decisions made before the first to act decided:
    actions out of turn (53-A); with chips in them, substantial action that skips the
    seat (53-B), on which the floor rules. A hand with fewer decisions is kept."""
    burns = _at(hand, "burn")
    end = burns[0] if burns else len(hand)
    deal = _last_deal(hand, end)
    if deal is None:
        return hand
    decisions = _decisions(hand, deal + 1, end)
    if len(decisions) < 3:
        return hand
    (a0, a1), (b0, _b1), (_c0, c1) = decisions[:3]
    first, early = hand[a0:a1], hand[b0:c1]
    t = hand[deal].t
    return [*hand[:a0], *(replace(e, t=t) for e in early), *first, *hand[c1:]]


#: The mistakes by name (the demo's first-card misdeal is sim/demo.py's own).
MISTAKES: dict[str, Mistake] = {
    "premature_flop": premature_flop,
    "four_card_flop": four_card_flop,
    "folds_out_of_turn": folds_out_of_turn,
    "pushes_out_of_turn": pushes_out_of_turn,
}
