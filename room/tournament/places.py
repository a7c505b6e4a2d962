"""Finishing places and prizes: players out in the same hand ranked by their chips at the start
of it; in hand-for-hand, busts of the same hand share the places (TDA 2019 RP-8 A), or, at
different tables, share while the same table is ranked by chips (Casinos Austria art. 40);
the prize pool, the payout table and shared prizes. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from room.tournament.house import BustSharing
from room.tournament.structure import Payouts


@dataclass(frozen=True, slots=True)
class Out:
    """A player out of chips in a hand: where, and with how many chips the hand began."""

    player: str
    table: str
    hand: int
    start_chips: int


@dataclass(frozen=True, slots=True)
class Placed:
    """A finishing place; `best` < `worst` when places are shared."""

    player: str
    best: int
    worst: int

    @property
    def shared(self) -> bool:
        return self.best != self.worst


def _ranks(outs: Sequence[Out]) -> list[list[Out]]:
    """Outs grouped by chips at the start of the hand, fewest first (equal chips together)."""
    by_chips: dict[int, list[Out]] = {}
    for o in outs:
        by_chips.setdefault(o.start_chips, []).append(o)
    return [by_chips[c] for c in sorted(by_chips)]


def place_group(outs: Sequence[Out], left_before: int, sharing: BustSharing | None) -> list[Placed]:
    """The places of players out together, `left_before` players being in before them.

    `sharing` None: one table's hand; the player who began it with more chips finishes
    higher, equal chips share. "all_share" (TDA RP-8 A, a hand-for-hand hand): every one of
    them shares the places. "tables_share" (Casinos Austria art. 40): at the same table the
    one with more chips at the start of the hand finishes higher; players of different
    tables share: the fewest-chip player of each table share the lowest places, and so on.
    """
    if not outs:
        return []
    worst = left_before
    if sharing == "all_share":
        best = left_before - len(outs) + 1
        return [Placed(o.player, best, worst) for o in outs]
    if sharing == "tables_share":
        tiers: list[list[Out]] = []
        per_table: dict[str, list[Out]] = {}
        for o in outs:
            per_table.setdefault(o.table, []).append(o)
        ranked = {t: _ranks(v) for t, v in per_table.items()}
        for k in range(max(len(r) for r in ranked.values())):
            tiers.append([o for r in ranked.values() if k < len(r) for o in r[k]])
    elif sharing is not None:
        raise ValueError(f"unknown sharing {sharing!r}")
    else:
        tiers = _ranks(outs)
    placed: list[Placed] = []
    for tier in tiers:  # the fewest chips first: the lowest places
        best = worst - len(tier) + 1
        placed += [Placed(o.player, best, worst) for o in tier]
        worst = best - 1
    return placed


def prize_pool(payouts: Payouts, entries: int) -> int:
    """What the entries (re-entries included) put in, at least the guarantee."""
    return max(payouts.guarantee, payouts.buy_in * entries)


def prizes(payouts: Payouts, entries: int) -> list[int]:
    """The prize of each place paid, place 1 first: the bracket's percentages of the pool,
    rounded down to the unit; what rounding leaves goes to first place."""
    bracket = payouts.bracket(entries)
    if bracket is None:
        return []
    pool = prize_pool(payouts, entries)
    unit = payouts.unit
    paid = [int(pool * p / 100) // unit * unit for p in bracket.percent]
    if paid:
        paid[0] += pool - sum(paid)
    return paid


def prize_of(paid: Sequence[int], place: Placed, sharing_with: int, unit: int = 1) -> int:
    """A player's prize: the place's prize, or for shared places their prizes together
    divided among the `sharing_with` players, rounded down to the unit (TDA RP-8 A: the
    three players out on the bubble hand share the 50th place's prize)."""
    total = sum(paid[p - 1] for p in range(place.best, place.worst + 1) if p <= len(paid))
    return total // max(sharing_with, 1) // unit * unit
