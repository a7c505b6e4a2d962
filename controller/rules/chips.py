"""Interpretation of a settled silent chip push as a betting action (TDA 2019 rules 40-47, 51)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from controller.rules import RuleError

__all__ = [
    "Declared",
    "PushKind",
    "PushRuling",
    "Structure",
    "interpret_push",
    "undercall_ruling",
]

Structure = Literal["nl", "pl", "fl"]
Declared = Literal["raise", "allin"]
PushKind = Literal["check", "call", "bet", "raise", "undercall"]


@dataclass(frozen=True)
class PushRuling:
    """What a settled push means.

    ``total`` is the seat's total in front on this street after the action;
    ``change`` chips go back from the bet zone to the player, ``owed`` chips must
    still be added (held to a full minimum raise, an underbet corrected, or
    an all-in declared before all chips are out). ``behind_after`` is the
    player's stack behind once change and owed are settled. ``increment`` is
    how much a bet/raise lifts the current bet; ``full`` whether it is at least
    a full bet/raise (rule 43/47). ``rule`` is the rule that decided an
    ambiguous push (None when the chips say it plainly); ``rules`` the chain.
    """

    kind: PushKind
    total: int
    allin: bool
    change: int
    owed: int
    behind_after: int
    increment: int
    full: bool
    rule: str | None
    rules: tuple[str, ...] = ()

    @property
    def action(self) -> Literal["check", "call", "bet", "raise", "allin", "undercall"]:
        """The ``action`` name for the contract's ``action`` event."""
        return "allin" if self.allin else self.kind


_HELD_BY_46 = frozenset({"44", "45-A", "45-B1", "45-B2", "43-A"})


def undercall_ruling(*, heads_up: bool, facing_opening_bet: bool) -> Literal["full_call", "td"]:
    """Rule 51-B: an undercall in turn is a mandatory full call heads-up or facing the opener.

    Otherwise ("td") the floor decides: full call, or forfeit the undercall and fold.
    """
    return "full_call" if heads_up or facing_opening_bet else "td"


def _check_chips(name: str, chips: Sequence[int]) -> None:
    for chip in chips:
        if chip <= 0:
            raise RuleError(f"{name}: chip values must be positive, got {chip}")


def interpret_push(
    *,
    current_bet: int,
    already_in: int,
    prior_chips: Sequence[int],
    pulled_back: Sequence[int],
    new_chips: Sequence[int],
    stack_behind: int,
    min_increment: int,
    max_total: int | None = None,
    raise_closed: str | None = None,
    declared: Declared | None = None,
    structure: Structure = "nl",
) -> PushRuling:
    """Rule on one settled push of chips by the seat whose turn it is.

    ``current_bet``: the total a call reaches (preflop at least the big blind).
    ``already_in``: the seat's chips counted as bet on this street so far.
    ``prior_chips``: values of the seat's chips physically in its bet zone before
    the push (may differ from ``already_in``: change not yet made, chips brought in).
    ``pulled_back``: those of ``prior_chips`` taken back; ``new_chips``: chips added.
    ``stack_behind``: chips behind the line before the push (not in the zone).
    ``min_increment``: minimum bet (no bet yet) or last full bet/raise increment (43);
    fixed limit: the fixed bet size. ``max_total``: pot-limit maximum / fixed-limit
    raise total, None in no-limit. ``raise_closed``: the rule forbidding a raise for
    this seat ("47-A" not re-opened, "48" cap, "uncalled" no one left to call), or None.
    ``declared``: a raise/all-in declared before the chips (all-in button, panel).
    """
    _check_chips("prior_chips", prior_chips)
    _check_chips("pulled_back", pulled_back)
    _check_chips("new_chips", new_chips)
    if min(current_bet, already_in, stack_behind) < 0 or min_increment <= 0:
        raise RuleError("negative amounts or non-positive minimum increment")
    remaining = Counter(prior_chips)
    remaining.subtract(Counter(pulled_back))
    if any(n < 0 for n in remaining.values()):
        raise RuleError("pulled back chips that were not in the bet zone")
    left = sorted(remaining.elements())
    brought_in = max(0, already_in - sum(prior_chips))
    wealth = brought_in + sum(prior_chips) + stack_behind
    available = stack_behind + sum(pulled_back)
    pushed = sum(new_chips)
    if pushed > available:
        raise RuleError(f"pushed {pushed} but only {available} behind")
    if not new_chips and not pulled_back and declared is None:
        raise RuleError("empty push")
    physical = brought_in + sum(left) + pushed
    physical_allin = pushed == available and available > 0
    allin_total = wealth
    call_total = min(current_bet, allin_total)
    rules: list[str] = []

    def ruling(kind: PushKind, total: int, rule: str | None) -> PushRuling:
        if max_total is not None and total > max_total and kind in ("bet", "raise"):
            total = max(max_total, current_bet)
            rules.append("52-B" if structure == "pl" else "fixed-limit")
            rule = rules[-1]
        allin = total >= allin_total
        total = min(total, allin_total)
        if kind in ("bet", "raise") and total <= current_bet:
            kind = "call"
        if kind == "call" and total == already_in:
            kind = "check"  # nothing to call (the big blind's option): chips go back
        increment = total - current_bet if kind in ("bet", "raise") else 0
        full = kind in ("bet", "raise") and increment >= min_increment
        if rule is not None and rule not in rules:
            rules.append(rule)
        if rule in _HELD_BY_46:
            rule = next((r for r in rules if r.startswith("46-")), rule)
        return PushRuling(
            kind=kind,
            total=total,
            allin=allin,
            change=max(0, physical - total),
            owed=max(0, total - physical),
            behind_after=wealth - total,
            increment=increment,
            full=full,
            rule=rule,
            rules=tuple(rules),
        )

    def as_call(rule: str | None) -> PushRuling:
        if physical < call_total and not physical_allin:
            rules.append("51-B")
            return ruling("undercall", physical, rule or "51-B")
        return ruling("call", call_total, rule)

    raise_kind: PushKind = "raise" if current_bet > 0 else "bet"
    min_total = current_bet + min_increment
    if max_total is not None:
        min_total = min(min_total, max(max_total, current_bet))

    def as_raise(total: int, rule: str | None) -> PushRuling:
        if raise_closed is not None:
            rules.append(raise_closed)
            return as_call(raise_closed)
        return ruling(raise_kind, total, rule)

    def fifty_percent() -> PushRuling:
        """Rules 43-A / 45-B: a raise of 50% or more of a full raise is held to a full raise."""
        if physical_allin:
            rules.append("45-B2")
            return as_raise(physical, "45-B2" if physical < min_total else None)
        if physical >= min_total:
            return as_raise(physical, None)
        rules.append("45-B1")
        if 2 * (physical - current_bet) >= min_increment:
            rules.append("43-A")
            return as_raise(min_total, "43-A")
        return as_call("45-B1")

    # Declarations made before the chips (rules 40-A, 43-A, 44, 45-A, 51-A, 55-B).
    if declared is not None and raise_closed is not None and allin_total > current_bet:
        rules.append(raise_closed)  # the declaration binds to the call (51-A), no raise
        return ruling("call", call_total, raise_closed)
    if declared == "allin":
        if allin_total <= current_bet:
            return ruling("call", allin_total, None)
        return as_raise(allin_total, None)
    if declared == "raise":
        if physical >= min_total:
            return as_raise(physical, None)
        return as_raise(min_total, "55-B" if current_bet == 0 else "43-A")

    # Physical all-in reaching no more than the call: a call for all chips.
    if physical <= current_bet:
        if physical_allin:
            return ruling("call", physical, None)
        if physical == current_bet:
            return ruling("call", physical, None)
        return as_call("46-B" if pulled_back else None)

    # Not facing a bet: opening bet (or the big blind's option).
    facing = current_bet > already_in
    if current_bet == 0:
        if len(new_chips) == 1 and not left:
            rules.append("44")  # a silent overchip is a bet of the chip's full value
        if physical >= min_total or physical_allin:
            return as_raise(physical, "44" if "44" in rules else None)
        return as_raise(min_total, "52-A")

    # Which chips a removal test (45-A) looks at, per rule 46-C.
    covers = sum(left) + brought_in >= current_bet and bool(left)
    partly = bool(pulled_back) and bool(left)
    if left and (covers or partly):
        rules.append("46-C2")
        return fifty_percent()
    if prior_chips and (left or pulled_back):
        rules.append("46-C1")
    if facing and len(new_chips) == 1:
        rules.append("44")  # a single oversized chip facing a bet is a call
        return as_call("44")
    if facing:
        smallest = min(new_chips)
        if physical - smallest < current_bet:
            rules.append("45-A")
            return as_call("45-A")
    return fifty_percent()
