"""Rule 58: a fold out of turn, or facing no bet, is binding; its uncalled bet goes back (15-B)."""

from __future__ import annotations

from controller.engine.betting import out_of_turn_53, uncalled_15b_65a
from controller.engine.betting.changes import (
    AfterChange,
    Change,
    Drop,
    Folded,
    Keep,
    Mark,
    OpenPreflop,
)
from controller.engine.betting.hand_chips import HandChips
from controller.engine.effects import say
from controller.engine.state import Phase


def fold_out_of_turn(hb: HandChips, t: float, seat: int) -> list[Change]:
    """Rule 58: a fold out of turn (or before the betting started) is binding; the
    uncalled part of the folded hand's bet goes back (15-B)."""
    rnd = hb.round
    changes: list[Change] = [
        say(
            "out_of_turn",
            seat=seat,
            action="fold",
            amount=hb.bet(seat),
            status="binding",
            to_act=hb.to_act,
            rule="58",
        )
    ]
    if rnd is not None and seat in rnd.behind and seat not in rnd.folded:
        changes += out_of_turn_53.after_skipped_seat(hb, seat, "fold")
        changes += uncalled_15b_65a.return_uncalled(hb, seat, "15-B")
        changes.append(Folded(seat))
    changes += [Mark("live", seat, on=False), Drop("held", seat), Drop("declared", seat)]
    if hb.phase == Phase.POSTING:
        changes.append(Keep("owed", seat, 0))  # a folded hand owes no more forced bets
        if not any(owed for s, owed in hb.owed.items() if s != seat):
            return [*changes, OpenPreflop()]
    return [*changes, AfterChange(t)]
