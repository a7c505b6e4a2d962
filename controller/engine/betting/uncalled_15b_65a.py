"""Rules 15-B and 65-A: a hand leaving the pot out of turn gets back its uncalled bet at once."""

from __future__ import annotations

from controller.engine.betting.changes import Aggressor, Change, Chips, CurrentBet
from controller.engine.betting.hand_chips import HandChips
from controller.engine.effects import say
from controller.engine.state import Phase


def return_uncalled(hb: HandChips, seat: int, rule: str) -> list[Change]:
    """A hand leaving the pot out of turn (a binding fold, 58; cards discarded, 15-B;
    killed, 65-A) gets back the part of its bet or raise no one has called; the bet the
    others face goes back to the largest one still standing (no call is invented)."""
    rnd = hb.round
    if hb.phase != Phase.BETTING or rnd is None:
        return []
    others = max((b for s, b in rnd.bets.items() if s != seat), default=0)
    # Only a bet or raise the player made is returned (15-B): its blind (or straddle) on the
    # first round is a forced bet, dead in the pot.
    forced = hb.posted[seat] if hb.street_i == 0 else 0
    back = rnd.bets[seat] - max(others, forced)
    if back <= 0:
        return []
    return [
        Chips(seat, -back, street=True),
        CurrentBet(max(others, rnd.blind_level)),
        Aggressor(seat),
        say("uncalled_bet_returned", seat=seat, amount=back, rule=rule),
    ]
