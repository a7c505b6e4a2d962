"""Rule 13-C: a hand mucked at showdown that was the best hand read calls the floor."""

from __future__ import annotations

from controller.engine.betting.changes import Change, Mark
from controller.engine.betting.hand_chips import HandChips
from controller.engine.effects import alert
from controller.engine.state import Phase
from controller.rules.handeval import evaluate


def best_hand_mucked(hb: HandChips, seat: int) -> list[Change]:
    """Rule 13-C: a properly tabled winner cannot be killed. The antennas cannot see a
    hand turned face up, so a hand going to the muck at showdown that beats every other
    hand read calls the floor (it may have been tabled and swept by mistake)."""
    if hb.phase != Phase.SHOWDOWN or hb.unreadable():
        return []
    board = hb.board()
    ranks = {s: evaluate([*hb.hole(s), *board]) for s in hb.live}
    if any(ranks[o] >= ranks[seat] for o in ranks if o != seat):
        return []
    return [
        Mark("muck_disputed", seat),
        alert(
            "floor_needed",
            "critical",
            f"seat {seat}'s hand went to the muck at showdown, and it was the best hand "
            "read: if it was tabled it cannot be killed and wins; the floor rules",
            seat=seat,
            rule="13-C",
        ),
    ]
