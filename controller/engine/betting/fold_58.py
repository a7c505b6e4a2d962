"""Rule 58: a fold out of turn, or facing no bet, is binding; its uncalled bet goes back (15-B)."""

from __future__ import annotations

from controller.engine.betting import out_of_turn_53, uncalled_15b_65a
from controller.engine.betting.hand_chips import HandChips
from controller.engine.state import Phase


def fold_out_of_turn(hb: HandChips, t: float, seat: int) -> None:
    """Rule 58: a fold out of turn (or before the betting started) is binding; the
    uncalled part of the folded hand's bet goes back (15-B)."""
    rnd = hb.round
    hb.emit.event(
        "out_of_turn",
        seat=seat,
        action="fold",
        amount=hb.bet(seat),
        status="binding",
        to_act=hb.to_act,
        rule="58",
    )
    if rnd is not None and seat in rnd.behind and seat not in rnd.folded:
        out_of_turn_53.after_skipped_seat(hb, seat, "fold")
        uncalled_15b_65a.return_uncalled(hb, seat, "15-B")
        rnd.folded.add(seat)
    hb.live.discard(seat)
    hb.held.pop(seat, None)
    hb.declared.pop(seat, None)
    if hb.phase == Phase.POSTING:
        hb.owed[seat] = 0  # a folded hand owes no more forced bets
        if not any(hb.owed.values()):
            hb.open_preflop()
            return
    hb.after_change(t)
