"""TDA 2015 rule 42 C: a two-motion raise, the call out first and the raise to come."""

from __future__ import annotations

from collections.abc import Sequence

from controller.engine.betting.changes import Change, Mark
from controller.engine.betting.hand_chips import HandChips, RoundView
from controller.rules.chips import Declared


def first_motion(
    hb: HandChips,
    seat: int,
    rnd: RoundView,
    declared: Declared | None,
    new: Sequence[int],
    prior: Sequence[int],
    pulled: Sequence[int],
) -> list[Change]:
    """TDA 2015 rule 42 C (a house allowing two-motion raises): "raise" declared, the
    exact call put out in a first motion waits for the raise of the second motion; the
    two are then judged as one declared raise (held to a minimum raise if short). The
    changes when this push is such a first motion (it waits), else none."""
    if (
        not hb.profile.two_motion_raise
        or declared != "raise"
        or seat != rnd.to_act
        or pulled
        or seat in hb.first_motion
        or hb.structure == "fl"
    ):
        return []
    if sum(prior) + sum(new) != rnd.bets[seat] + rnd.to_call(seat) or not rnd.to_call(seat):
        return []
    return [Mark("first_motion", seat)]
