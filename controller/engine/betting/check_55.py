"""Rule 55: no check facing a bet; a seat that declared check facing a bet calls or folds."""

from __future__ import annotations

from controller.engine.betting.hand_chips import HandChips
from controller.rules import RuleError


def check(hb: HandChips, t: float) -> None:
    """The dealer's `check` button, for the player whose turn it is."""
    seat = hb.to_act
    if seat is None or hb.round is None:
        hb.emit.alert("button_out_of_sequence", "warning", "check pressed when no one is to act")
        return
    before = hb.round.bets[seat]
    try:
        action = hb.round.check(seat)
    except RuleError as exc:
        facing = exc.rule == "55"
        if facing:
            hb.checked_facing.add(seat)  # it may call or fold, never raise (55)
        hb.emit.alert(
            "check_refused",
            "warning",
            f"seat {seat} cannot check: {exc}"
            + ("; having declared check it may call or fold, not raise" if facing else ""),
            seat=seat,
            rule=exc.rule,
        )
        return
    hb.record(action, before)
    hb.emit.event("action", seat=seat, action="check", amount=action.total, rule=None)
    hb.after_change(t)
