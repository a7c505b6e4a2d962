"""Interpretation of a settled silent chip push as a betting action (TDA 2019 rules 40-47, 51)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from controller.rules import RuleError

__all__ = [
    "Declared",
    "PushKind",
    "PushRuling",
    "Structure",
    "facing_opening_bet",
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
        """The ``action`` name of the `action` event (docs/mqtt.md)."""
        return "allin" if self.allin else self.kind


_HELD_BY_46 = frozenset({"44", "45-A", "45-B1", "45-B2", "43-A"})


def undercall_ruling(
    *, heads_up: bool, facing_opening_bet: bool, always_full_call: bool = False
) -> Literal["full_call", "td"]:
    """Rule 51-B: an undercall in turn is a mandatory full call heads-up or facing the opener.

    Otherwise ("td") the floor decides: full call, or forfeit the undercall and fold. A house
    whose text makes every undercall a call (``always_full_call``: Campione "Dead Money",
    Casinos Austria art. 8) never offers the fold.
    """
    return "full_call" if always_full_call or heads_up or facing_opening_bet else "td"


def facing_opening_bet(bets_and_raises: int, *, preflop: bool) -> bool:
    """Rule 51-B: whether the bet to call is still the round's opening bet.

    ``bets_and_raises`` counts the bets and raises made in turn on this round (posted blinds
    are not actions). In blind games the posted big blind is the pre-flop opener, so any
    raise pre-flop means the opener is no longer what is faced; after the flop the opener
    is the first bet.
    """
    return bets_and_raises == 0 if preflop else bets_and_raises <= 1


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
    last_chips_all_in: bool = True,
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
    ``last_chips_all_in``: a push of the last chips is an all-in whatever its size (TDA 2019
    45-B2); False (TDA 2015 rules 43, 46) holds it to the 50% standard like any push.
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
    available = stack_behind + sum(pulled_back)
    pushed = sum(new_chips)
    if pushed > available:
        raise RuleError(f"pushed {pushed} but only {available} behind")
    if not new_chips and not pulled_back and declared is None:
        raise RuleError("empty push")
    min_total = current_bet + min_increment
    if max_total is not None:
        min_total = min(min_total, max(max_total, current_bet))
    push = _Push(
        current_bet=current_bet,
        already_in=already_in,
        min_increment=min_increment,
        max_total=max_total,
        raise_closed=raise_closed,
        structure=structure,
        new_chips=new_chips,
        prior_chips=prior_chips,
        pulled_back=pulled_back,
        left=left,
        brought_in=brought_in,
        wealth=brought_in + sum(prior_chips) + stack_behind,
        physical=brought_in + sum(left) + pushed,
        allin=pushed == available and available > 0,
        min_total=min_total,
        last_chips_all_in=last_chips_all_in,
    )
    if declared is not None:
        return push.as_declared(declared)  # rules 40-A, 43-A, 44, 45-A, 51-A, 55-B
    if push.physical <= current_bet:
        return push.up_to_the_call()
    if current_bet == 0:
        return push.opening()
    return push.facing_a_bet()


@dataclass(slots=True)
class _Push:
    """One settled push, counted: what is physically out, what the seat has, the limits.

    ``rules`` collects the chain of rules applied, in order.
    """

    current_bet: int
    already_in: int
    min_increment: int
    max_total: int | None
    raise_closed: str | None
    structure: Structure
    new_chips: Sequence[int]
    prior_chips: Sequence[int]
    pulled_back: Sequence[int]
    left: list[int]  # prior chips still in the zone
    brought_in: int  # counted as bet on this street but not physically in the zone
    wealth: int  # everything the seat has on this street: bet plus behind
    physical: int  # the seat's total in front, as the chips now lie
    allin: bool  # the push put out every chip the seat had behind
    min_total: int  # the smallest full bet/raise total
    last_chips_all_in: bool = True  # 45-B2 (TDA 2019); TDA 2015 has no such exception
    rules: list[str] = field(default_factory=list)

    @property
    def call_total(self) -> int:
        return min(self.current_bet, self.wealth)

    @property
    def raise_kind(self) -> PushKind:
        return "raise" if self.current_bet > 0 else "bet"

    # ------------------------------------------------------------------ the four cases

    def as_declared(self, declared: Declared) -> PushRuling:
        """A raise or all-in declared before the chips (all-in button, panel)."""
        if self.raise_closed is not None and self.wealth > self.current_bet:
            self.rules.append(self.raise_closed)  # the declaration binds to the call (51-A)
            return self.ruling("call", self.call_total, self.raise_closed)
        if declared == "allin":
            if self.wealth <= self.current_bet:
                return self.ruling("call", self.wealth, None)
            return self.as_raise(self.wealth, None)
        if self.physical >= self.min_total:
            return self.as_raise(self.physical, None)
        return self.as_raise(self.min_total, "55-B" if self.current_bet == 0 else "43-A")

    def up_to_the_call(self) -> PushRuling:
        """Chips reaching no more than the call: a call (all-in for less: for all chips)."""
        if self.allin or self.physical == self.current_bet:
            return self.ruling("call", self.physical, None)
        return self.as_call("46-B" if self.pulled_back else None)

    def opening(self) -> PushRuling:
        """Not facing a bet: the opening bet (or the big blind's option, 52-A)."""
        if len(self.new_chips) == 1 and not self.left:
            self.rules.append("44")  # a silent overchip is a bet of the chip's full value
        if self.physical >= self.min_total or self.allin:
            return self.as_raise(self.physical, "44" if "44" in self.rules else None)
        return self.as_raise(self.min_total, "52-A")

    def facing_a_bet(self) -> PushRuling:
        """More than the call while facing a bet: which chips count (46-C), a single oversized
        chip (44), chips that a smaller one would not leave a call (45-A), or a raise."""
        left = self.left
        # Which chips a removal test (45-A) looks at, per rule 46-C.
        covers = sum(left) + self.brought_in >= self.current_bet and bool(left)
        partly = bool(self.pulled_back) and bool(left)
        if left and (covers or partly):
            self.rules.append("46-C2")
            return self.fifty_percent()
        if self.prior_chips and (left or self.pulled_back):
            self.rules.append("46-C1")
        facing = self.current_bet > self.already_in
        if facing and len(self.new_chips) == 1:
            self.rules.append("44")  # a single oversized chip facing a bet is a call
            return self.as_call("44")
        if facing and self.physical - min(self.new_chips) < self.current_bet:
            self.rules.append("45-A")
            return self.as_call("45-A")
        return self.fifty_percent()

    # ------------------------------------------------------------------ rulings

    def fifty_percent(self) -> PushRuling:
        """Rules 43-A / 45-B: a raise of 50% or more of a full raise is held to a full raise."""
        half = 2 * (self.physical - self.current_bet) >= self.min_increment
        if self.allin and (self.last_chips_all_in or half or self.physical >= self.min_total):
            self.rules.append("45-B2")
            return self.as_raise(self.physical, "45-B2" if self.physical < self.min_total else None)
        if self.physical >= self.min_total:
            return self.as_raise(self.physical, None)
        self.rules.append("45-B1")
        if 2 * (self.physical - self.current_bet) >= self.min_increment:
            self.rules.append("43-A")
            return self.as_raise(self.min_total, "43-A")
        return self.as_call("45-B1")

    def as_call(self, rule: str | None) -> PushRuling:
        """A call; short of it (and not all-in) an undercall (51-B)."""
        if self.physical < self.call_total and not self.allin:
            self.rules.append("51-B")
            return self.ruling("undercall", self.physical, rule or "51-B")
        return self.ruling("call", self.call_total, rule)

    def as_raise(self, total: int, rule: str | None) -> PushRuling:
        """A bet or raise to `total`; a call where this seat may not raise (47-A, 48)."""
        if self.raise_closed is not None:
            self.rules.append(self.raise_closed)
            return self.as_call(self.raise_closed)
        return self.ruling(self.raise_kind, total, rule)

    def ruling(self, kind: PushKind, total: int, rule: str | None) -> PushRuling:
        """The ruling, capped at the pot-limit (52-B) or fixed-limit total and at all-in."""
        current_bet = self.current_bet
        if self.max_total is not None and total > self.max_total and kind in ("bet", "raise"):
            total = max(self.max_total, current_bet)
            self.rules.append("52-B" if self.structure == "pl" else "fixed-limit")
            rule = self.rules[-1]
        allin = total >= self.wealth
        total = min(total, self.wealth)
        if kind in ("bet", "raise") and total <= current_bet:
            kind = "call"
        if kind == "call" and total == self.already_in:
            kind = "check"  # nothing to call (the big blind's option): chips go back
        increment = total - current_bet if kind in ("bet", "raise") else 0
        full = kind in ("bet", "raise") and increment >= self.min_increment
        if rule is not None and rule not in self.rules:
            self.rules.append(rule)
        if rule in _HELD_BY_46:
            rule = next((r for r in self.rules if r.startswith("46-")), rule)
        return PushRuling(
            kind=kind,
            total=total,
            allin=allin,
            change=max(0, self.physical - total),
            owed=max(0, total - self.physical),
            behind_after=self.wealth - total,
            increment=increment,
            full=full,
            rule=rule,
            rules=tuple(self.rules),
        )
