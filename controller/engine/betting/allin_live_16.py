"""Rule 16: an all-in hand is live and is tabled: its cards reaching the muck call the floor."""

from __future__ import annotations

from controller.engine.betting.changes import Change, Mark
from controller.engine.betting.hand_chips import HandChips
from controller.engine.effects import alert


def allin_hand_to_muck(hb: HandChips, seat: int) -> list[Change] | None:
    """Rule 16: "No player who is either all-in or has called all betting action may muck
    his or her hand without tabling". An all-in hand whose cards reach the muck before the
    showdown is no fold: it stays live (its cards were read, so it is still judged at the
    showdown) and the floor is called to have the dealer retrieve and table it. The
    changes when the seat is all in (every chip of its stack in this hand's pot) and
    called, else None: an all-in bet still uncalled is 15-B's (the uncalled part back, the
    hand out)."""
    put_in = hb.contrib.get(seat, 0)
    if hb.seats[seat].stack > 0 or not put_in:
        return None
    if put_in > max((hb.contrib.get(o, 0) for o in hb.live if o != seat), default=0):
        return None
    if seat in hb.muck_disputed:
        return []  # the floor is called already (each card reaching the muck says so)
    return [
        Mark("muck_disputed", seat),
        alert(
            "floor_needed",
            "critical",
            f"seat {seat} is all in and its cards reached the muck: an all-in hand is live "
            "and is tabled, never mucked; the dealer retrieves it and the floor rules",
            seat=seat,
            rule="16",
        ),
    ]
