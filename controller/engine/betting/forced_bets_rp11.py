"""The forced bets: blinds and antes due and posted, the big-blind ante as dead money (RP-11),
and blinds missed on a house break (Campione "Gestione pause") paid as dead money on return."""

from __future__ import annotations

from controller.engine.betting.changes import Change, OpenPreflop, Posted
from controller.engine.betting.hand_chips import HandChips
from controller.engine.effects import say


def forced_bets(hb: HandChips) -> dict[int, int]:
    owed = {s: 0 for s in hb.dealt_in}
    b = hb.blinds
    if b.ante and not b.bb_ante:
        for s in hb.dealt_in:
            owed[s] += b.ante
    if hb.pos.small_blind in owed:
        owed[hb.pos.small_blind] += b.small_blind
    if hb.pos.big_blind in owed:
        owed[hb.pos.big_blind] += b.big_blind + (b.ante if b.bb_ante else 0)
    for s, missed in hb.missed.items():
        owed[s] += missed
    return {s: min(o, hb.seats[s].stack) for s, o in owed.items()}


def ante_part(hb: HandChips, seat: int) -> int:
    b = hb.blinds
    if not b.ante:
        return 0
    if b.bb_ante:
        return b.ante if seat == hb.pos.big_blind else 0
    return b.ante


def post(hb: HandChips, seat: int, amount: int) -> list[Change]:
    """`amount` chips settled in the seat's bet zone while forced bets are due: what of
    them pays the blinds missed on a break, the ante and the blind."""
    stack = hb.seats[seat].stack
    pay = max(0, min(amount, hb.owed[seat], stack))
    if pay == 0:
        return []
    # Blinds missed on a house break come first: dead money, no one's bet.
    missed = min(pay, hb.missed.get(seat, 0) - hb.missed_paid.get(seat, 0))
    stack -= missed
    rest = pay - missed
    already = hb.posted[seat] + ante_paid(hb, seat)
    ante_left = max(0, min(ante_part(hb, seat), stack + already) - already)
    ante = min(rest, ante_left)
    blind = rest - ante
    stack -= rest
    changes: list[Change] = [
        Posted(seat, blind, ante, missed, owed=pay, dead_ante=hb.blinds.bb_ante),
        say(
            "posted",
            seat=seat,
            blind=blind_name(hb, seat),
            amount=blind,
            ante=ante + missed,
            allin=stack == 0,
            rule="RP-11" if hb.blinds.bb_ante and ante else None,
            **({"missed_blinds": missed, "house_rule": "pauses"} if missed else {}),
        ),
    ]
    if not any(o for s, o in hb.owed.items() if s != seat) and hb.owed[seat] == pay:
        changes.append(OpenPreflop())
    return changes


def ante_paid(hb: HandChips, seat: int) -> int:
    if hb.blinds.bb_ante:
        own = hb.dead - sum(hb.missed_paid.values())
        return own if seat == hb.pos.big_blind else 0
    return hb.contrib[seat] - hb.posted[seat]


def blind_name(hb: HandChips, seat: int) -> str | None:
    if seat == hb.pos.big_blind:
        return "big"
    if seat == hb.pos.small_blind:
        return "small"
    return None
