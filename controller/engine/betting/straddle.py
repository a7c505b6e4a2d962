"""A house straddle (Campione "Puntate aggiuntive"): the seat left of the big blind may put out a
multiple of the big blind before the cards, and then acts last preflop."""

from __future__ import annotations

from controller.engine.betting.changes import Change, OpenPreflop, Posted, Straddled
from controller.engine.betting.hand_chips import HandChips
from controller.engine.effects import say
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


def try_straddle(hb: HandChips, seat: int, amount: int) -> list[Change] | None:
    """A push of exactly the straddle by the seat left of the big blind, before the cards:
    its changes, or None when the push is no straddle."""
    if (
        not hb.straddle_multiple
        or hb.cards_dealt
        or hb.actions
        or hb.straddle_seat is not None
        or seat != utg(hb)
    ):
        return None
    size = hb.straddle_multiple * hb.blinds.big_blind
    if amount != size or hb.seats[seat].stack < size:
        return None
    return [
        Straddled(seat, size),
        Posted(seat, size),
        say(
            "posted",
            seat=seat,
            blind="straddle",
            amount=size,
            ante=0,
            allin=hb.seats[seat].stack == size,
            rule=None,
            house_rule="straddle",
        ),
        OpenPreflop(),
    ]
