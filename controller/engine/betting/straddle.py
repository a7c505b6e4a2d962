"""A house straddle (Campione "Puntate aggiuntive"): the seat left of the big blind may put out a
multiple of the big blind before the cards, and then acts last preflop."""

from __future__ import annotations

from controller.engine.betting.hand_chips import HandChips
from controller.rules.betting import street_order


def utg(hb: HandChips) -> int | None:
    """The seat left of the big blind: the one that may straddle."""
    order = street_order(
        [s for s in hb.dealt_in if s in hb.live],
        button=hb.pos.button,
        big_blind_seat=hb.pos.big_blind,
        preflop=True,
    )
    return order[0] if order else None


def try_straddle(hb: HandChips, seat: int, amount: int) -> bool:
    """A push of exactly the straddle by the seat left of the big blind, before the cards."""
    if (
        not hb.straddle_multiple
        or hb.cards_dealt
        or hb.actions
        or hb.straddle_seat is not None
        or seat != utg(hb)
    ):
        return False
    size = hb.straddle_multiple * hb.blinds.big_blind
    if amount != size or hb.seats[seat].stack < size:
        return False
    hb.straddle_seat = seat
    hb.straddle = size
    hb.posted[seat] += size
    hb.contrib[seat] += size
    hb.seats[seat].stack -= size
    hb.emit.event(
        "posted",
        seat=seat,
        blind="straddle",
        amount=size,
        ante=0,
        allin=hb.seats[seat].stack == 0,
        rule=None,
        house_rule="straddle",
    )
    hb.open_preflop()
    return True
