"""One betting round as a pure state machine (TDA 2019 rules 34, 36, 43, 47, 48, 52-55)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from controller.rules import RuleError
from controller.rules.chips import Declared, PushRuling, Structure, interpret_push

__all__ = [
    "Action",
    "ActionKind",
    "BettingRound",
    "HeldAction",
    "OOTResolution",
    "Street",
    "house_raise_cap",
    "limit_bet_size",
    "limit_raise_cap",
    "seats_left_of_button",
    "showdown_order",
    "street_order",
    "substantial_action",
    "substantial_action_out_of_turn",
]

ActionKind = Literal["check", "call", "bet", "raise", "fold"]
HeldKind = Literal["check", "call", "bet", "raise", "fold", "allin"]
Street = Literal["preflop", "flop", "turn", "river"]

_CHIP_ACTIONS = frozenset({"call", "bet", "raise", "allin"})


@dataclass(frozen=True)
class Action:
    """One action taken in turn; ``total`` is the seat's total in front afterwards."""

    seat: int
    kind: ActionKind
    total: int
    allin: bool = False
    increment: int = 0
    full: bool = False
    rule: str | None = None

    @property
    def name(self) -> str:
        """The `action` event's ``action``: ``allin`` for any action putting in the last chip."""
        return "allin" if self.allin else self.kind


@dataclass(frozen=True)
class HeldAction:
    """An out-of-turn action held until the turn reaches its seat (rule 53)."""

    seat: int
    kind: HeldKind
    total: int | None
    facing: int


@dataclass(frozen=True)
class OOTResolution:
    """Whether a held out-of-turn action stands when its seat's turn comes (rule 53-A)."""

    binding: bool
    rule: str
    reason: str


def substantial_action(actions: Iterable[str | Action]) -> bool:
    """Rule 36: two actions in turn with at least one putting in chips, or any three actions.

    ``actions`` are the hand's actions in turn so far (posted blinds excluded), as
    :class:`Action` or names (``check``, ``call``, ``bet``, ``raise``, ``fold``, ``allin``).
    """
    names = [a.name if isinstance(a, Action) else a for a in actions]
    if len(names) >= 3:
        return True
    return len(names) == 2 and any(n in _CHIP_ACTIONS for n in names)


def substantial_action_out_of_turn(oot_actions: Iterable[str | Action]) -> bool:
    """Rule 53-B: OOT actions after a skipped seat become binding once they amount to SA."""
    return substantial_action(oot_actions)


def seats_left_of_button(seats: Iterable[int], button: int) -> list[int]:
    """Seats clockwise (ascending numbers, wrapping) starting with the first left of the button.

    The button may be a dead button on an empty seat (rule 32).
    """
    ordered = sorted(set(seats))
    return [s for s in ordered if s > button] + [s for s in ordered if s <= button]


def street_order(
    seats: Iterable[int], *, button: int, big_blind_seat: int | None = None, preflop: bool = False
) -> list[int]:
    """Action order of a street for the seats in the hand.

    Preflop starts left of the big blind; later streets start left of the button.
    Heads-up this makes the button (the small blind) act first preflop and last
    afterwards (rule 34).
    """
    if preflop:
        if big_blind_seat is None:
            raise RuleError("preflop order needs the big blind seat")
        return seats_left_of_button(seats, big_blind_seat)
    return seats_left_of_button(seats, button)


def limit_bet_size(street: Street, big_blind: int) -> int:
    """Fixed-limit bet size: the big blind preflop and on the flop, double on turn and river."""
    return big_blind if street in ("preflop", "flop") else 2 * big_blind


def showdown_order(live: Iterable[int], button: int, *, aggressor: int | None) -> list[int]:
    """Rule 17-A: the order hands are shown in at showdown.

    ``aggressor`` shows first: under TDA 2019 the last aggressor on the final betting round;
    a house may name the last bet or raise of the hand (Casinos Austria art. 14, "Showdown
    (1)": "chi ha fatto l'ultima azione (puntare o rilanciare)"). With none (or folded) the
    first live seat left of the button starts, clockwise (17-A; the house text gives no order
    there).
    """
    order = seats_left_of_button(sorted(live), button)
    if aggressor is not None and aggressor in order:
        i = order.index(aggressor)
        order = order[i:] + order[:i]
    return order


def limit_raise_cap(players: int, house_cap: int = 3) -> int | None:
    """Raises allowed after the bet in fixed limit: the house cap, none once two players remain.

    Rule 48 lifts the cap when the event is down to 2 players; the hold'em basics
    (docs/betting-rules.md) when only two remain at the table. Pass whichever count the
    house uses.
    """
    return None if players <= 2 else house_cap


def house_raise_cap(*, house_cap: int | None, event_heads_up: bool) -> int | None:
    """Rule 48: the cap of a fixed-limit round, "even when heads-up until the event is down
    to 2 players"; ``house_cap`` None means the house limit of a bet and three raises.

    Whether the cap is also lifted heads-up *in the hand* is the round's
    ``cap_lifted_heads_up`` (Casinos Austria art. 12), checked raise by raise.
    """
    return limit_raise_cap(2 if event_heads_up else 3, 3 if house_cap is None else house_cap)


class BettingRound:
    """One street of betting, driven by verified actions (verify_x / can_x / x)."""

    def __init__(
        self,
        *,
        order: Sequence[int],
        stacks: Mapping[int, int],
        big_blind: int,
        bets: Mapping[int, int] | None = None,
        structure: Structure = "nl",
        pot: int = 0,
        blind_level: int = 0,
        big_blind_seat: int | None = None,
        bet_unit: int | None = None,
        raise_cap: int | None = 3,
        acted: Collection[int] = (),
        last_full_raise: int | None = None,
        cap_lifted_heads_up: bool = False,
    ) -> None:
        """Start a street.

        ``order``: seats still in the hand in action order (see :func:`street_order`);
        all-in seats may be included, they are skipped. ``stacks``: chips behind the
        line per seat. ``bets``: chips already in front on this street (posted blinds;
        antes belong in ``pot``). ``big_blind``: the minimum bet. ``pot``: chips in the
        middle before this street (antes, earlier streets) for pot-limit counts.
        ``blind_level``: preflop, the bet the blinds stand for (the big blind, even if
        posted short, rule 54-B); 0 after the flop. ``big_blind_seat``: counted at
        ``blind_level`` for pot-limit counts. ``bet_unit``: fixed-limit bet size
        (see :func:`limit_bet_size`, default the big blind). ``raise_cap``: raises
        allowed after the bet in fixed limit (see :func:`limit_raise_cap`).
        ``acted``: seats that already acted at the current bet (when resuming).
        ``cap_lifted_heads_up``: the cap no longer holds once only two seats are left in
        the hand (a house rule, Casinos Austria art. 12; TDA 2019 48 keeps it).
        """
        if len(set(order)) != len(order) or not order:
            raise RuleError("action order must list distinct seats")
        if big_blind <= 0:
            raise RuleError("big blind must be positive")
        self.order: tuple[int, ...] = tuple(order)
        self.structure: Structure = structure
        self.big_blind = big_blind
        self.bet_unit = bet_unit if bet_unit is not None else big_blind
        self.raise_cap = raise_cap
        self.cap_lifted_heads_up = cap_lifted_heads_up
        self.pot = pot
        self.blind_level = blind_level
        self.big_blind_seat = big_blind_seat
        self.behind: dict[int, int] = {s: stacks[s] for s in order}
        self.bets: dict[int, int] = dict(bets or {})
        for s in order:
            self.bets.setdefault(s, 0)
        if any(v < 0 for v in (*self.behind.values(), *self.bets.values(), pot, blind_level)):
            raise RuleError("negative stack, bet or pot")
        self.current_bet = max(max(self.bets.values(), default=0), blind_level)
        if last_full_raise is not None:
            self.last_full_raise = last_full_raise
        else:
            self.last_full_raise = self.bet_unit if structure == "fl" else big_blind
        self.raise_count = 0
        self.folded: set[int] = set()
        self.acted_at: dict[int, int] = {s: self.current_bet for s in acted}
        self.actions: list[Action] = []
        self._cursor = -1

    # ----------------------------------------------------------------- queries
    @property
    def live(self) -> tuple[int, ...]:
        """Seats in the hand (not folded), in action order."""
        return tuple(s for s in self.order if s not in self.folded)

    def _with_chips(self) -> list[int]:
        return [s for s in self.live if self.behind[s] > 0]

    def _needs_action(self, seat: int) -> bool:
        if seat in self.folded or self.behind[seat] == 0:
            return False
        if self.bets[seat] < self.current_bet:
            return True
        if seat in self.acted_at:
            return False
        # Unacted and not facing a bet (e.g. the big blind's option): only if
        # someone else could still call a bet.
        return any(s != seat for s in self._with_chips())

    @property
    def to_act(self) -> int | None:
        """The seat whose turn it is, or None when the round is complete."""
        if len(self.live) < 2:
            return None
        n = len(self.order)
        for step in range(1, n + 1):
            seat = self.order[(self._cursor + step) % n]
            if self._needs_action(seat):
                return seat
        return None

    @property
    def round_complete(self) -> bool:
        """True when no seat has to act any more on this street."""
        return self.to_act is None

    @property
    def hand_over(self) -> bool:
        """True when every seat but one has folded."""
        return len(self.live) < 2

    @property
    def street_total(self) -> int:
        """Chips in front of all seats (folded ones included) on this street."""
        return sum(self.bets.values())

    def to_call(self, seat: int) -> int:
        """Chips the seat must add to call (limited by its stack)."""
        return max(0, min(self.current_bet, self.bets[seat] + self.behind[seat]) - self.bets[seat])

    def allin_total(self, seat: int) -> int:
        """The seat's total in front if it puts in every chip."""
        return self.bets[seat] + self.behind[seat]

    def pot_limit_max(self, seat: int) -> int:
        """Largest total in front allowed in pot limit: call, then raise the whole pot.

        The pot counts the middle, every bet in front and the call; preflop a
        short all-in big blind counts as a full blind (rule 54-B).
        """
        in_front = sum(self.bets.values())
        bb = self.big_blind_seat
        if bb is not None and bb in self.bets and self.bets[bb] < self.blind_level:
            in_front += self.blind_level - self.bets[bb]
        call = max(0, self.current_bet - self.bets[seat])
        return self.current_bet + self.pot + in_front + call

    def raise_block(self, seat: int) -> str | None:
        """Why the seat may not bet or raise now, or None if it may.

        ``"48"`` fixed-limit cap reached; ``"47-A"`` / ``"47-B"`` betting not re-opened
        for a seat that already acted; ``"short"`` cannot put in more than a call;
        ``"uncalled"`` no other seat has chips to call with.
        """
        cap = self.raise_cap
        if self.cap_lifted_heads_up and len(self.live) <= 2:
            cap = None
        if self.structure == "fl" and cap is not None and self.raise_count >= cap:
            return "48"
        if self.behind[seat] <= self.current_bet - self.bets[seat]:
            return "short"
        if not any(s != seat for s in self._with_chips()):
            return "uncalled"
        if seat in self.acted_at:
            rise = self.current_bet - self.acted_at[seat]
            if self.structure == "fl":
                if 2 * rise < self.bet_unit:
                    return "47-B"
            elif rise < self.last_full_raise:
                return "47-A"
        return None

    def can_raise(self, seat: int) -> bool:
        """Whether the seat may bet or raise now (ignoring whose turn it is)."""
        return self.raise_block(seat) is None

    def min_raise_to(self, seat: int) -> int:
        """Smallest legal bet/raise total (rule 43); an all-in for less is also legal."""
        step = self.bet_unit if self.structure == "fl" else self.last_full_raise
        low = self.current_bet + step
        return min(low, self.max_raise_to(seat))

    def max_raise_to(self, seat: int) -> int:
        """Largest legal bet/raise total: all-in, pot limit, or the fixed-limit raise."""
        high = self.allin_total(seat)
        if self.structure == "pl":
            high = min(high, self.pot_limit_max(seat))
        elif self.structure == "fl":
            high = min(high, self.current_bet + self.bet_unit)
        return high

    # ----------------------------------------------------------------- verify / can
    def _verify_turn(self, seat: int) -> None:
        if seat not in self.behind:
            raise RuleError(f"seat {seat} is not in this betting round")
        turn = self.to_act
        if turn is None:
            raise RuleError("the betting round is complete")
        if seat != turn:
            raise RuleError(f"seat {seat} acted out of turn; seat {turn} is to act", "53-A")

    def verify_check(self, seat: int) -> None:
        """Raise RuleError unless the seat may check (in turn, not facing a bet)."""
        self._verify_turn(seat)
        if self.bets[seat] < self.current_bet:
            raise RuleError(f"seat {seat} faces a bet and cannot check", "55")

    def verify_call(self, seat: int) -> None:
        """Raise RuleError unless the seat may call (a call facing no bet is a check, 55-A)."""
        self._verify_turn(seat)

    def verify_fold(self, seat: int) -> None:
        """Raise RuleError unless the seat may fold (any time in turn; rule 58 binds it)."""
        self._verify_turn(seat)

    def verify_bet_or_raise_to(self, seat: int, total: int) -> None:
        """Raise RuleError unless a bet/raise to ``total`` is legal for the seat now."""
        self._verify_turn(seat)
        block = self.raise_block(seat)
        if block is not None:
            raise RuleError(f"seat {seat} may not raise ({block})", block)
        if total <= self.current_bet:
            raise RuleError(f"total {total} does not exceed the current bet {self.current_bet}")
        allin = self.allin_total(seat)
        if total > allin:
            raise RuleError(f"seat {seat} has only {allin} in total")
        if self.structure == "pl" and total > self.pot_limit_max(seat):
            raise RuleError(f"over the pot limit of {self.pot_limit_max(seat)}", "52-B")
        if self.structure == "fl":
            fixed = self.current_bet + self.bet_unit
            if total > fixed or (total < fixed and total != allin):
                raise RuleError(f"fixed limit: the bet/raise is to {fixed}")
        elif total < self.min_raise_to(seat) and total != allin:
            rule = "52-A" if self.current_bet == 0 else "43-A"
            raise RuleError(f"below the minimum of {self.min_raise_to(seat)}", rule)

    def verify_all_in(self, seat: int) -> None:
        """Raise RuleError unless the seat may put in all its chips now."""
        self._verify_turn(seat)
        if self.behind[seat] == 0:
            raise RuleError(f"seat {seat} is already all-in")
        total = self.allin_total(seat)
        if total > self.current_bet:
            self.verify_bet_or_raise_to(seat, total)

    def _can(self, verify: Callable[..., None], *args: int) -> bool:
        try:
            verify(*args)
        except RuleError:
            return False
        return True

    def can_check(self, seat: int) -> bool:
        """Whether :meth:`check` would be accepted."""
        return self._can(self.verify_check, seat)

    def can_call(self, seat: int) -> bool:
        """Whether :meth:`call` would be accepted."""
        return self._can(self.verify_call, seat)

    def can_fold(self, seat: int) -> bool:
        """Whether :meth:`fold` would be accepted."""
        return self._can(self.verify_fold, seat)

    def can_bet_or_raise_to(self, seat: int, total: int) -> bool:
        """Whether :meth:`bet_or_raise_to` would be accepted."""
        return self._can(self.verify_bet_or_raise_to, seat, total)

    def can_all_in(self, seat: int) -> bool:
        """Whether :meth:`all_in` would be accepted."""
        return self._can(self.verify_all_in, seat)

    # ----------------------------------------------------------------- actions
    def _record(self, action: Action) -> Action:
        self._cursor = self.order.index(action.seat)
        self.actions.append(action)
        return action

    def check(self, seat: int) -> Action:
        """The seat checks (rule 55: only when not facing a bet)."""
        self.verify_check(seat)
        self.acted_at[seat] = self.current_bet
        return self._record(Action(seat, "check", self.bets[seat]))

    def call(self, seat: int, rule: str | None = None) -> Action:
        """The seat calls, for all its chips if short; facing no bet it is a check (55-A)."""
        self.verify_call(seat)
        add = self.to_call(seat)
        if add == 0:
            self.acted_at[seat] = self.current_bet
            return self._record(Action(seat, "check", self.bets[seat], rule=rule or "55-A"))
        self.bets[seat] += add
        self.behind[seat] -= add
        self.acted_at[seat] = self.current_bet
        allin = self.behind[seat] == 0
        return self._record(Action(seat, "call", self.bets[seat], allin=allin, rule=rule))

    def fold(self, seat: int) -> Action:
        """The seat folds; its chips in front stay in the pot."""
        self.verify_fold(seat)
        self.folded.add(seat)
        return self._record(Action(seat, "fold", self.bets[seat]))

    def bet_or_raise_to(self, seat: int, total: int, rule: str | None = None) -> Action:
        """The seat bets or raises to ``total`` in front (rules 43, 47, 48, 52)."""
        self.verify_bet_or_raise_to(seat, total)
        previous = self.current_bet
        increment = total - previous
        if self.structure == "fl":
            full = increment >= self.bet_unit
            counts = 2 * increment >= self.bet_unit  # rule 47-B: 50% re-opens in limit
        else:
            full = increment >= self.last_full_raise
            counts = full
            if full:
                self.last_full_raise = increment
        if counts and previous > 0:
            self.raise_count += 1
        self.behind[seat] -= total - self.bets[seat]
        self.bets[seat] = total
        self.current_bet = total
        self.acted_at[seat] = total
        kind: ActionKind = "raise" if previous > 0 else "bet"
        allin = self.behind[seat] == 0
        return self._record(Action(seat, kind, total, allin, increment, full, rule))

    def all_in(self, seat: int) -> Action:
        """The seat puts in every chip: a call if that does not exceed the bet, else a raise."""
        self.verify_all_in(seat)
        total = self.allin_total(seat)
        if total <= self.current_bet:
            return self.call(seat)
        return self.bet_or_raise_to(seat, total)

    # ----------------------------------------------------------------- chip pushes
    def interpret_push(
        self,
        seat: int,
        *,
        new_chips: Sequence[int],
        prior_chips: Sequence[int] = (),
        pulled_back: Sequence[int] = (),
        declared: Declared | None = None,
        no_raise: str | None = None,
        last_chips_all_in: bool = True,
    ) -> PushRuling:
        """Rule on a settled push by ``seat`` with this round's state (see chips.interpret_push).

        ``no_raise``: a rule that keeps this seat from raising whatever the round allows
        (``"55"``: it declared check facing a bet, so it may only call or fold)."""
        if self.structure == "pl":
            max_total: int | None = self.pot_limit_max(seat)
        elif self.structure == "fl":
            max_total = self.current_bet + self.bet_unit
        else:
            max_total = None
        block = self.raise_block(seat)
        if no_raise is not None and block in (None, "uncalled"):
            block = no_raise
        return interpret_push(
            current_bet=self.current_bet,
            already_in=self.bets[seat],
            prior_chips=prior_chips,
            pulled_back=pulled_back,
            new_chips=new_chips,
            # Chips in the zone beyond the seat's bet (change not yet made, a big chip
            # posted for a blind) are still the player's, but no longer behind the line.
            stack_behind=max(0, self.behind[seat] - max(0, sum(prior_chips) - self.bets[seat])),
            min_increment=self.bet_unit if self.structure == "fl" else self.last_full_raise,
            max_total=max_total,
            raise_closed=None if block == "short" else block,
            declared=declared,
            structure=self.structure,
            last_chips_all_in=last_chips_all_in,
        )

    def apply(self, seat: int, ruling: PushRuling) -> Action:
        """Perform the action a :class:`PushRuling` decided (undercalls go to the floor first)."""
        if ruling.kind == "undercall":
            raise RuleError("an undercall must be resolved before it is applied", "51-B")
        if ruling.kind == "check":
            self.verify_check(seat)
            self.acted_at[seat] = self.current_bet
            return self._record(Action(seat, "check", self.bets[seat], rule=ruling.rule))
        if ruling.kind == "call":
            expected = self.bets[seat] + self.to_call(seat)
            if ruling.total != expected:
                raise RuleError(f"ruling calls to {ruling.total}, the call is to {expected}")
            return self.call(seat, ruling.rule)
        return self.bet_or_raise_to(seat, ruling.total, ruling.rule)

    # ----------------------------------------------------------------- out of turn
    def hold_out_of_turn(self, seat: int, kind: HeldKind, total: int | None = None) -> HeldAction:
        """Record an out-of-turn action to be resolved when the turn reaches ``seat`` (53-A)."""
        if seat not in self.live:
            raise RuleError(f"seat {seat} is not in the hand")
        if seat == self.to_act:
            raise RuleError(f"seat {seat} is in turn")
        if kind in ("bet", "raise") and total is None:
            raise RuleError("a held bet or raise needs its total")
        return HeldAction(seat, kind, total, self.current_bet)

    def resolve_out_of_turn(self, held: HeldAction) -> OOTResolution:
        """Rule 53-A: binding if the action to the seat has not changed; an OOT fold always is.

        A check, call or fold in between does not change the action; a bet or raise
        (any rise of the current bet) does, and then the held chips go back and the
        seat has all options. Call this when :attr:`to_act` is ``held.seat``.
        """
        if self.to_act != held.seat:
            raise RuleError(f"seat {held.seat} is not yet in turn")
        if held.kind == "fold":
            return OOTResolution(True, "53-A", "an out-of-turn fold is binding")
        if self.current_bet == held.facing:
            return OOTResolution(True, "53-A", "the action to the seat has not changed")
        return OOTResolution(
            False, "53-A", f"the action changed from {held.facing} to {self.current_bet}"
        )
