"""Button and blinds from hand to hand: dead button (TDA 32), heads-up (34), new players (8, 10)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Positions:
    """Where the button and blinds are for one hand.

    `sb_position` is where the small blind is, even when that seat is empty (dead small
    blind); `small_blind` is the seat that actually posts it, or None.
    """

    button: int
    sb_position: int
    small_blind: int | None
    big_blind: int
    heads_up: bool


def clockwise(start: int, n_seats: int) -> list[int]:
    """Seats after `start`, clockwise, ending with `start` itself."""
    return [((start - 1 + k) % n_seats) + 1 for k in range(1, n_seats + 1)]


def next_in(start: int, seats: Collection[int], n_seats: int) -> int:
    """The first seat of `seats` strictly after `start` clockwise (`start` itself last)."""
    for seat in clockwise(start, n_seats):
        if seat in seats:
            return seat
    raise ValueError("no seat to move to")


def between(seat: int, after: int, before: int, n_seats: int) -> bool:
    """True when `seat` lies strictly after `after` and strictly before `before`, clockwise."""
    for s in clockwise(after, n_seats):
        if s == before:
            return False
        if s == seat:
            return True
    return False


def fresh_positions(button: int, players: Sequence[int], n_seats: int) -> Positions:
    """Positions when the button is placed (first hand or a `button` command)."""
    if len(players) == 2:
        # Rule 34: heads-up, the button posts the small blind and the other player the big.
        btn = button if button in players else next_in(button, players, n_seats)
        bb = next_in(btn, players, n_seats)
        return Positions(btn, btn, btn, bb, heads_up=True)
    sb = next_in(button, players, n_seats)
    bb = next_in(sb, players, n_seats)
    return Positions(button, sb, sb, bb, heads_up=False)


def next_positions(prev: Positions, players: Sequence[int], n_seats: int) -> Positions:
    """Positions for the next hand with a dead button (rule 32).

    The big blind always moves to the next player after the previous big blind, so no
    one misses or doubles a big blind. The previous big blind posts the small blind if
    still seated (else the small blind is dead) and the button goes where the small blind
    was, even onto an empty seat. Heads-up (rule 34) the button is the small blind.
    """
    bb = next_in(prev.big_blind, players, n_seats)
    if len(players) == 2:
        other = next_in(bb, players, n_seats)
        return Positions(other, other, other, bb, heads_up=True)
    sb_position = prev.big_blind
    small_blind = sb_position if sb_position in players and sb_position != bb else None
    button = prev.sb_position
    if button in (bb, sb_position):
        # Coming from heads-up the old positions collapse: seat the button behind the SB.
        button = _previous_seat(sb_position, n_seats)
    return Positions(button, sb_position, small_blind, bb, heads_up=False)


def _previous_seat(seat: int, n_seats: int) -> int:
    return n_seats if seat == 1 else seat - 1


def waits_for_button(seat: int, pos: Positions, n_seats: int) -> bool:
    """Rules 8-A and 10: a new player may get any seat, blinds or button included, but is
    not dealt in while seated between the button and the small blind. Heads-up the
    button is the small blind: nobody is between them (rule 34)."""
    if pos.heads_up or pos.button == pos.sb_position:
        return False
    return between(seat, pos.button, pos.sb_position, n_seats)
