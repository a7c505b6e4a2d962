"""Hands where the engine's money is not what pokerkit (and the rules) make of them: known
engine matters, reported to the engine's owners, so that the tests judging every hand
(tests/unit/test_demo_judged.py, tests/unit/test_liveness.py) let these through by name and
nothing else. Remove a matter here once the engine is fixed.

- `BLIND_HANDED_BACK`: a big blind leaving the hand before it acted (a binding fold out of
  turn, 58; a killed hand, 65-A) gets back the part of its blind above the others' bets
  (`uncalled_bet_returned`, 15-B or 65-A), though a blind is a forced bet and stays in:
  the others then still call the whole blind (controller/engine/betting/uncalled_15b_65a.py
  keeps the level at the blind), or the hand is won with the blind only partly in.
- `ALLIN_FOLDED`: an all-in hand folds out of turn (58), though rule 16 has every all-in
  hand tabled; PHH has no fold for a hand all in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

BLIND_HANDED_BACK = "part of a big blind handed back as the hand left the pot"
ALLIN_FOLDED = "an all-in hand folded out of turn"


def known_engine_matter(events: Sequence[Mapping[str, Any]]) -> str | None:
    """Which known engine matter (above) a hand's events show, if any."""
    acted: set[int] = set()
    allin: set[int] = set()
    left: set[int] = set()  # hands killed or folded out of turn
    for e in events:
        kind, seat = e.get("type"), e.get("seat")
        if kind == "action":
            acted.add(int(seat or 0))
            if e.get("action") == "allin":
                allin.add(int(seat or 0))
        elif kind == "hand_killed":
            left.add(int(seat or 0))
        elif kind == "out_of_turn" and e.get("action") == "fold":
            if seat in allin:
                return ALLIN_FOLDED
            left.add(int(seat or 0))
        elif kind == "uncalled_bet_returned":
            if seat in left and seat not in acted:
                return BLIND_HANDED_BACK
            allin.discard(int(seat or 0))
    return None
