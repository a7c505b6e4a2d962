"""Money situations the strict pokerkit judge of the money property test
(tests/unit/test_money_properties.py) still fails on, each named and recognised narrowly from
the hand's events, so that every other hand is judged. Remove a gap once it is fixed.

- `SHORT_BIG_BLIND`: the big blind is posted all in for less than the big blind: the others
  call the full big blind (TDA 2019 54-B keeps the blind's size), pokerkit lets them call the
  short amount, so the excess is a side pot in the engine and not in the file;
- `LIMIT_SHORT_ALLIN_47B`: fixed limit, an all-in raise of at least half a bet but less than a
  full one re-opens the betting (TDA 2019 47-B); pokerkit never lets a short all-in be
  raised by a player who already acted.
- `DEAD_ALL_IN_BEFORE_THE_RIVER`: an all-in hand leaves the pot out of turn (58) or is killed
  before the river and the pot goes uncontested to a hand with chips behind. PHH has no fold
  for an all-in hand: the file has it muck at the showdown and the board come unseen, and
  pokerkit 0.7.7 then fails an assertion of its own dealing the next street to one hand
  (`get_effective_stack`), whatever the file says. Not a difference of the rules: a limit
  of the judge.
- `DEAD_MONEY_IN_A_SIDE_POT`: chips that stay in the pot after a fold (an undercall forfeited,
  51-B; chips bound out of turn, 53-B) beyond what a short all-in matched: the table counts
  them in every pot they reach, as any bet; PHH can only write them as the seat's ante,
  which pokerkit puts in the main pot whole (trimming antes would hand them back instead).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

SHORT_BIG_BLIND = "a short all-in big blind called in full (54-B)"
LIMIT_SHORT_ALLIN_47B = "a fixed-limit short all-in re-opening the betting (47-B)"
DEAD_ALL_IN_BEFORE_THE_RIVER = "an all-in hand leaving before the river (58; pokerkit asserts)"
DEAD_MONEY_IN_A_SIDE_POT = "dead money (51-B, 53-B) reaching a side pot (PHH: an ante)"


def _short_big_blind(events: Sequence[Mapping[str, Any]]) -> bool:
    big = int(events[0].get("big_blind") or 0) if events else 0
    return any(
        e.get("type") == "posted"
        and e.get("blind") == "big"
        and e.get("allin")
        and int(e.get("amount") or 0) < big
        for e in events
    )


def _limit_short_allin(events: Sequence[Mapping[str, Any]]) -> bool:
    """A fixed-limit all-in raising by less than a full bet, then a raise after it."""
    if not events or events[0].get("game") != "flhe":
        return False
    big = int(events[0].get("big_blind") or 0)
    level, bet, short = big, big, False
    for e in events:
        kind = e.get("type")
        if kind == "board_dealt":
            level = 0
            bet = big * (2 if e.get("street") in ("turn", "river") else 1)
        elif kind == "action":
            amount = int(e.get("amount") or 0)
            raised = e.get("action") in ("raise", "bet") or (
                e.get("action") == "allin" and amount >= level + bet
            )
            if raised and short:
                return True  # a raise after it, all in or not
            if e.get("action") == "allin" and level < amount < level + bet:
                short = True
            level = max(level, amount)
    return False


def _dead_all_in_before_the_river(events: Sequence[Mapping[str, Any]]) -> bool:
    """A seat all in (its chips not handed back) left out of turn or was killed, no river was
    dealt, and the pot went uncontested."""
    allin: set[int] = set()
    dead: set[int] = set()
    river = uncontested = False
    for e in events:
        kind = e.get("type")
        seat = e.get("seat")
        if (kind == "action" and e.get("action") == "allin") or (
            kind == "posted" and e.get("allin")
        ):
            allin.add(int(seat))  # type: ignore[arg-type]
        elif kind == "uncalled_bet_returned":
            allin.discard(int(seat))  # type: ignore[arg-type]
        elif kind == "hand_killed" or (
            kind == "out_of_turn" and e.get("action") == "fold" and e.get("status") == "binding"
        ):
            dead.add(int(seat))  # type: ignore[arg-type]
        elif kind == "board_dealt" and e.get("street") == "river":
            river = True
        elif kind == "pot_awarded" and e.get("reason") == "uncontested":
            uncontested = True
    return uncontested and not river and bool(allin & dead)


def _dead_money_in_a_side_pot(events: Sequence[Mapping[str, Any]]) -> bool:
    """A fold leaving chips in as dead money (51-B forfeited, or after 53-B binding chips
    out of turn) in a hand with more than one pot."""
    bound: set[int] = set()
    dead = False
    pots = 0
    for e in events:
        kind = e.get("type")
        if kind == "out_of_turn" and e.get("acts_again"):
            bound.add(int(e.get("seat") or 0))
        elif kind == "action" and e.get("action") == "fold":
            dead = dead or bool(e.get("forfeited")) or int(e.get("seat") or 0) in bound
        elif kind == "pot_awarded":
            pots += 1
    return dead and pots > 1


def known_money_gap(events: Sequence[Mapping[str, Any]]) -> str | None:
    """Which known gap (above) a hand's events show, if any."""
    if _short_big_blind(events):
        return SHORT_BIG_BLIND
    if _limit_short_allin(events):
        return LIMIT_SHORT_ALLIN_47B
    if _dead_all_in_before_the_river(events):
        return DEAD_ALL_IN_BEFORE_THE_RIVER
    if _dead_money_in_a_side_pot(events):
        return DEAD_MONEY_IN_A_SIDE_POT
    return None
