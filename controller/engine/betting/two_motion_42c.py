"""TDA 2015 rule 42 C: a two-motion raise, the call out first and the raise to come."""

from __future__ import annotations

from controller.engine.betting.hand_chips import HandChips
from controller.rules.betting import BettingRound
from controller.rules.chips import Declared


def first_motion(
    hb: HandChips,
    seat: int,
    rnd: BettingRound,
    declared: Declared | None,
    new: list[int],
    prior: list[int],
    pulled: list[int],
) -> bool:
    """TDA 2015 rule 42 C (a house allowing two-motion raises): "raise" declared, the
    exact call put out in a first motion waits for the raise of the second motion; the
    two are then judged as one declared raise (held to a minimum raise if short)."""
    if (
        not hb.profile.two_motion_raise
        or declared != "raise"
        or seat != rnd.to_act
        or pulled
        or seat in hb.first_motion
        or hb.structure == "fl"
    ):
        return False
    if sum(prior) + sum(new) != rnd.bets[seat] + rnd.to_call(seat) or not rnd.to_call(seat):
        return False
    hb.first_motion.add(seat)
    return True
