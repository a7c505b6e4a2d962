"""Main and side pots, uncalled bets, odd-chip splits and awards (TDA 2019 rules 16, 20, 21)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from controller.rules import RuleError
from controller.rules.handeval import HandRank

__all__ = [
    "Award",
    "Pot",
    "award",
    "build_pots",
    "division_unit",
    "split_pot",
    "take_rake",
    "uncalled",
]


@dataclass(frozen=True)
class Pot:
    """One pot: its chips and the live seats that can win it (sorted)."""

    amount: int
    eligible: tuple[int, ...]


@dataclass(frozen=True)
class Award:
    """Result of awarding one pot: ``shares`` maps each winning seat to its chips."""

    pot_index: int
    amount: int
    winners: tuple[int, ...]
    shares: Mapping[int, int] = field(default_factory=dict)


def _check_amounts(contributions: Mapping[int, int]) -> None:
    for seat, amount in contributions.items():
        if amount < 0:
            raise RuleError(f"seat {seat} has a negative contribution {amount}")


def uncalled(contributions: Mapping[int, int], live: Collection[int]) -> tuple[int, int] | None:
    """(seat, chips) of the largest contribution no one else matched, to be returned; else None.

    ``contributions`` are whole-hand totals (every street). The owner is returned the
    excess even if it has since folded or had its hand killed (rules 15-B, 65-A).
    ``live`` is accepted for symmetry with :func:`build_pots` and is not needed.
    """
    del live
    _check_amounts(contributions)
    ranked = sorted(contributions.items(), key=lambda kv: kv[1], reverse=True)
    if not ranked or ranked[0][1] == 0:
        return None
    top_seat, top = ranked[0]
    second = ranked[1][1] if len(ranked) > 1 else 0
    if top > second:
        return (top_seat, top - second)
    return None


def build_pots(
    contributions: Mapping[int, int],
    live: Collection[int],
    dead: int = 0,
    *,
    gone: Sequence[int] = (),
    reach: int | None = None,
) -> list[Pot]:
    """Main pot first, then side pots at each all-in level of the live seats (rule 21).

    ``contributions`` are whole-hand chips per seat (antes included), after the
    :func:`uncalled` excess has been taken back; ``live`` are the seats still
    holding cards. Folded seats' chips are dead money in every pot their
    contribution reaches; chips above the highest live level go to the last pot (a
    forced bet a live hand with chips never had to match is dead money it wins) up to
    ``reach``, the most any live hand could have put in (its chips in and behind; no
    limit when None). Above it, no live hand wins them (table stakes: a hand wins from
    each rival no more than it could have put in itself): ``gone`` (the hands that left,
    in order) says who had them last, and each layer goes to the last hand to leave it
    (its rivals there left first), as a side pot it won uncontested (21).
    ``dead`` is money belonging to no seat (e.g. a big-blind ante), put in the main pot.
    """
    _check_amounts(contributions)
    if dead < 0:
        raise RuleError(f"negative dead money {dead}")
    live_set = {s for s in live if s in contributions}
    levels = sorted({contributions[s] for s in live_set if contributions[s] > 0})
    if sum(contributions.values()) + dead == 0:
        return []
    if not live:
        raise RuleError("chips in the pot but no live hand")
    pots: list[Pot] = []
    previous = 0
    for level in levels:
        amount = sum(
            min(c, level) - min(c, previous) for c in contributions.values() if c > previous
        )
        eligible = tuple(sorted(s for s in live_set if contributions[s] >= level))
        pots.append(Pot(amount, eligible))
        previous = level
    cap = max(previous, reach) if reach is not None else None
    excess = sum(
        min(c, cap) - previous if cap is not None else c - previous
        for c in contributions.values()
        if c > previous
    )
    if not pots:
        pots.append(Pot(excess, tuple(sorted(live))))
    elif excess:
        pots[-1] = Pot(pots[-1].amount + excess, pots[-1].eligible)
    if cap is not None:
        above = _left_above(contributions, cap, gone)
        pots += above
        held = max([cap, *(contributions[s] for p in above for s in p.eligible)])
        rest = sum(c - held for c in contributions.values() if c > held)
        if rest:  # no hand that left is known to hold them: the last pot's, as without
            pots[-1] = Pot(pots[-1].amount + rest, pots[-1].eligible)
    if dead:
        pots[0] = Pot(pots[0].amount + dead, pots[0].eligible)
    return pots


def _left_above(contributions: Mapping[int, int], level: int, gone: Sequence[int]) -> list[Pot]:
    """The side pots above `level` (the highest live hand's) that a hand which left holds
    last: each layer goes to the last of `gone` to leave among those that reach it."""
    pots: list[Pot] = []
    previous = level
    while True:
        reach = [s for s in gone if contributions.get(s, 0) > previous]
        if not reach:
            return pots
        owner = reach[-1]
        top = contributions[owner]
        amount = sum(min(c, top) - min(c, previous) for c in contributions.values() if c > previous)
        if pots and pots[-1].eligible == (owner,):
            pots[-1] = Pot(pots[-1].amount + amount, (owner,))
        else:
            pots.append(Pot(amount, (owner,)))
        previous = top


def split_pot(
    amount: int,
    winners: Collection[int],
    seats_left_of_button: Sequence[int],
    odd_unit: int = 1,
    *,
    rest_to_first: bool = False,
) -> dict[int, int]:
    """Split a pot evenly; odd chips go one unit each from the first winner left of the button.

    Rule 20: odd chips are first broken into the smallest denomination in play
    (``odd_unit``); 20-A gives them to the first seat(s) left of the button.
    ``seats_left_of_button`` lists seats clockwise starting left of the button;
    any remainder smaller than ``odd_unit`` goes to the first winner too.
    ``rest_to_first``: every odd unit goes to the first winner (Casinos Austria art. 32:
    "il resto" to the player nearest the button on its left).
    """
    if amount < 0 or odd_unit < 1:
        raise RuleError(f"bad split: amount {amount}, odd unit {odd_unit}")
    if not winners:
        raise RuleError("no winner to split the pot between")
    position = {seat: i for i, seat in enumerate(seats_left_of_button)}
    missing = [w for w in winners if w not in position]
    if missing:
        raise RuleError(f"winners {missing} are not in the seat order")
    ordered = sorted(set(winners), key=position.__getitem__)
    units, remainder = divmod(amount, odd_unit)
    each, odd = divmod(units, len(ordered))
    shares = {seat: each * odd_unit for seat in ordered}
    for seat in ordered[: 0 if rest_to_first else odd]:
        shares[seat] += odd_unit
    if rest_to_first:
        remainder += odd * odd_unit
    shares[ordered[0]] += remainder
    return shares


def award(
    pots: Sequence[Pot],
    hands: Mapping[int, HandRank],
    seats_left_of_button: Sequence[int],
    odd_unit: int = 1,
    *,
    rest_to_first: bool = False,
) -> list[Award]:
    """Award every pot to its best eligible hand(s), last side pot first (rule 16 addendum).

    ``hands`` holds the rank of each hand still live at showdown; a pot with a
    single eligible seat goes to it without a hand. Each pot is split on its
    own (rule 21) with odd chips per :func:`split_pot` (rule 20-A). A pot left empty (a
    house rake took all of it) is still awarded, its winners' shares 0.
    """
    awards: list[Award] = []
    for index in range(len(pots) - 1, -1, -1):
        pot = pots[index]
        if not pot.eligible:
            continue
        if len(pot.eligible) == 1:
            winners: tuple[int, ...] = pot.eligible
        else:
            contenders = [s for s in pot.eligible if s in hands]
            if not contenders:
                raise RuleError(f"pot {index}: no eligible hand at showdown")
            best = max(hands[s] for s in contenders)
            winners = tuple(s for s in contenders if hands[s] == best)
        shares = (
            split_pot(
                pot.amount, winners, seats_left_of_button, odd_unit, rest_to_first=rest_to_first
            )
            if pot.amount
            else dict.fromkeys(winners, 0)  # a pot the house's rake took whole: still awarded
        )
        ordered = tuple(sorted(winners, key=list(seats_left_of_button).index))
        awards.append(Award(index, pot.amount, ordered, shares))
    return awards


def division_unit(
    house_unit: Literal["smallest_chip", "blind_or_ante"],
    *,
    smallest_chip: int,
    small_blind: int,
    big_blind: int,
) -> int:
    """The unit a split pot is divided down to (rule 20), as the house's text names it.

    TDA 2019 rule 20: the smallest chip in play. Casinos Austria art. 32 ("un monte premi è
    diviso solo fino al valore del buio e rispettivamente dell'ante"): the blind in blind
    games, the ante in ante games; hold'em is a blind game, so the small blind (the big
    blind when no small blind is posted).
    """
    if house_unit == "smallest_chip":
        return max(1, smallest_chip)
    return max(1, small_blind or big_blind)


def take_rake(pots: Sequence[Pot], rake: int, *, main_pot_first: bool = True) -> list[int]:
    """How much of ``rake`` each pot gives, in pot order (the pots' own amounts are kept).

    ``main_pot_first`` (Casinò di Campione, "Rake"): all of it from the main pot, "se non
    dovesse bastare" the shortfall from the side pots in turn. Otherwise each pot gives its
    share of the rake in proportion to its size, the rounding left to the main pot.
    """
    total = sum(p.amount for p in pots)
    if rake < 0 or rake > total:
        raise RuleError(f"rake {rake} out of the pots' {total}")
    if main_pot_first:
        taken = []
        left = rake
        for pot in pots:
            part = min(left, pot.amount)
            taken.append(part)
            left -= part
        return taken
    taken = [rake * p.amount // total if total else 0 for p in pots]
    if taken:
        taken[0] += rake - sum(taken)
    return taken
