"""Rule 55: no check facing a bet; a seat that declared check facing a bet calls or folds."""

from __future__ import annotations

from controller.engine.betting.changes import AfterChange, Change, Checked, Mark
from controller.engine.betting.hand_chips import HandChips
from controller.engine.effects import alert, say
from controller.rules import RuleError


def check(hb: HandChips, t: float) -> list[Change]:
    """The dealer's `check` button, for the player whose turn it is."""
    seat = hb.to_act
    rnd = hb.round
    if seat is None or rnd is None:
        return [alert("button_out_of_sequence", "warning", "check pressed when no one is to act")]
    try:
        rnd.verify_check(seat)
    except RuleError as exc:
        facing = exc.rule == "55"
        return [
            *([Mark("checked_facing", seat)] if facing else []),  # call or fold, never raise
            alert(
                "check_refused",
                "warning",
                f"seat {seat} cannot check: {exc}"
                + ("; having declared check it may call or fold, not raise" if facing else ""),
                seat=seat,
                rule=exc.rule,
            ),
        ]
    return [
        Checked(seat),
        say("action", seat=seat, action="check", amount=rnd.bets[seat], rule=None),
        AfterChange(t),
    ]
