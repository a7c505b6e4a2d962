"""Rule 51-B: an undercall is a full call heads-up or facing the opening bet, else the floor's."""

from __future__ import annotations

from typing import Literal

from controller.engine.betting.changes import Change, Keep
from controller.engine.betting.hand_chips import HandChips, RoundView
from controller.engine.effects import alert
from controller.rules.chips import PushRuling, facing_opening_bet, undercall_ruling

Decision = Literal["full_call", "td"]


def undercall(
    hb: HandChips, seat: int, rnd: RoundView, ruling: PushRuling, before: int, zone_chips: int
) -> tuple[Decision, list[Change]]:
    """Rule 51-B: a mandatory full call heads-up or facing the opener (in blind games the
    big blind pre-flop); otherwise the floor's discretion, both choices named. A house
    whose text always makes it a call (`undercall_always_full_call`) offers no fold.

    At the floor's discretion nothing is recorded yet: the chips stay in the zone
    (`zone_chips` of them), the floor lamp is lit and the seat is still to act. Chips
    added up to the call are the full call (a push judged with the undercall's chips as
    prior chips, rule 46); the cards mucked are the fold, and the chips put out are
    forfeited to the pot.
    """
    raised = sum(1 for a in rnd.actions if a.kind in ("bet", "raise"))
    decision = undercall_ruling(
        heads_up=len(rnd.live) == 2,
        facing_opening_bet=facing_opening_bet(raised, preflop=hb.street_i == 0),
        always_full_call=hb.profile.undercall_always_full_call,
    )
    if decision != "td":
        return decision, []
    short = rnd.bets[seat] + rnd.to_call(seat) - zone_chips
    return decision, [
        alert(
            "floor_needed",
            "critical",
            f"seat {seat} undercalled a raise multi-way: the floor decides a full call "
            f"(add {short}) or a fold forfeiting the chips put out",
            seat=seat,
            choices=["full_call", "fold"],
            rule="51-B",
        ),
        Keep("undercalls", seat, max(0, ruling.total - before)),
    ]
