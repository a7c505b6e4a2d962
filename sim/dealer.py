"""A simulated dealer: writes the physical trace of whole hands from a seeded shuffle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kernel.inputs import ButtonPress, Command, Event, TagIn, TagOut, Tick


@dataclass(slots=True)
class DealerClock:
    """Trace time advancing by fixed steps."""

    t: float = 0.0

    def step(self, dt: float) -> float:
        """Advance and return the new time."""
        self.t = round(self.t + dt, 6)
        return self.t


def seat_players(
    players: Sequence[tuple[int, str, int]], level: tuple[int, int, int], button: int
) -> list[Event]:
    """Room commands that seat the players, set the level and place the button."""
    events: list[Event] = [
        Command(0.0, "seat", {"seat": s, "player": name, "stack": stack})
        for s, name, stack in players
    ]
    sb, bb, ante = level
    events.append(Command(0.0, "level", {"small_blind": sb, "big_blind": bb, "ante": ante}))
    events.append(Command(0.0, "button", {"seat": button}))
    return events


DENOMINATIONS = (25000, 5000, 1000, 500, 100, 25, 5, 1)


@dataclass(frozen=True, slots=True)
class Decision:
    """One player decision in turn: fold, check, call, bet, raise (to `total`), allin."""

    seat: int
    kind: str
    total: int = 0


@dataclass(slots=True)
class HandPlan:
    """Everything that happens in one hand, decided in advance (by a test, pokerkit...)."""

    dealt_in: list[int]
    button: int
    small_blind_seat: int | None
    big_blind_seat: int
    blinds: tuple[int, int, int]  # small blind, big blind, ante
    stacks: dict[int, int]  # chips behind at the start of the hand
    hole: dict[int, list[str]]
    board: list[str]  # five cards
    burns: list[str]  # three cards
    streets: list[list[Decision]]  # decisions preflop, flop, turn, river
    bb_ante: bool = False
    straddle_seat: int | None = None  # a house straddle (campione), posted before the cards
    straddle: int = 0


class TableDealer:
    """Turns hand plans into the physical trace a real table would produce.

    Chips are pushed as exact amounts in the fewest chips; a raise is declared with the
    panel's `raise` button first and an all-in with the seat's all-in button, so the
    engine reads each push the way the plan meant it (rules 44, 45, RP-1). After a push
    the trace holds a `tick` when the push settles, as the daemon journals one.
    """

    def __init__(
        self,
        clock: DealerClock | None = None,
        *,
        step: float = 0.1,
        settle: float = 1.0,
        chip_prefix: str = "c",
    ) -> None:
        self.clock = clock or DealerClock()
        self.step = step
        self.settle = settle
        self.chip_prefix = chip_prefix
        self.serial = 0
        self.events: list[Event] = []
        self.on_table: dict[str, str] = {}  # card -> antenna

    def _card(self, antenna: str, card: str, dt: float) -> None:
        self.events.append(TagIn(self._t(dt), antenna, card=card))
        self.on_table[card] = antenna

    def _t(self, dt: float | None = None) -> float:
        return self.clock.step(self.step if dt is None else dt)

    def _chips(self, amount: int) -> list[tuple[str, int]]:
        out = []
        for value in DENOMINATIONS:
            while amount >= value:
                self.serial += 1
                out.append((f"{self.chip_prefix}{self.serial:06d}", value))
                amount -= value
        return out

    def _push(self, seat: int, amount: int, zones: dict[int, list[tuple[str, int]]]) -> None:
        chips = self._chips(amount)
        for chip, value in chips:
            self.events.append(TagIn(self._t(0.02), f"bet{seat}", chip=chip, value=value))
        zones.setdefault(seat, []).extend(chips)
        self.events.append(Tick(self._t(self.settle)))

    def _gather(self, zones: dict[int, list[tuple[str, int]]], pot: list[tuple[str, int]]) -> None:
        for seat in sorted(zones):
            for chip, value in zones[seat]:
                self.events.append(TagOut(self._t(0.01), f"bet{seat}", chip=chip, value=value))
                self.events.append(TagIn(self.clock.t, "pot", chip=chip, value=value))
            pot.extend(zones[seat])
        zones.clear()

    def play(self, plan: HandPlan) -> list[Event]:
        """Append the hand's physical events; return them."""
        start = len(self.events)
        stacks = dict(plan.stacks)
        zones: dict[int, list[tuple[str, int]]] = {}
        pot: list[tuple[str, int]] = []
        self.events.append(ButtonPress(self._t(), "shuffler"))
        bets = self._forced_bets(plan, stacks, zones)
        self._deal_hole_cards(plan)
        live = set(plan.dealt_in)
        current = max([plan.blinds[1], *bets.values()])
        for street, decisions in enumerate(plan.streets + [[]] * (4 - len(plan.streets))):
            if len(live) < 2:
                break
            if street > 0:
                self._gather(zones, pot)
                bets = {s: 0 for s in plan.dealt_in}
                current = 0
                self._deal_street(plan, street)
            for d in decisions:
                current = self._decide(plan, d, stacks, bets, current, zones, live)
        if len(live) > 1:
            self._gather(zones, pot)
            # The dealer pushes the pot to the winner: the award moment at showdown.
            if pot:
                chip, value = pot.pop(0)
                self.events.append(TagOut(self._t(1.0), "pot", chip=chip, value=value))
        self._collect(plan, zones, pot)
        return self.events[start:]

    def _forced_bets(
        self, plan: HandPlan, stacks: dict[int, int], zones: dict[int, list[tuple[str, int]]]
    ) -> dict[int, int]:
        """Antes, blinds and the straddle pushed into the bet zones (after hand_started); the
        bets in front of each seat, antes apart."""
        sb, bb, ante = plan.blinds
        for seat in plan.dealt_in:
            owed = 0
            if ante and not plan.bb_ante:
                owed += ante
            if seat == plan.small_blind_seat:
                owed += sb
            if seat == plan.big_blind_seat:
                owed += bb + (ante if plan.bb_ante else 0)
            owed = min(owed, stacks[seat])
            if owed:
                stacks[seat] -= owed
                self._push(seat, owed, zones)
        if plan.straddle and plan.straddle_seat is not None:  # its own push, exactly the straddle
            add = min(plan.straddle, stacks[plan.straddle_seat])
            stacks[plan.straddle_seat] -= add
            self._push(plan.straddle_seat, add, zones)
        posted = {s: sum(v for _c, v in zones.get(s, ())) for s in plan.dealt_in}
        ante_part = {s: 0 for s in plan.dealt_in}
        for s in plan.dealt_in:
            a = ante if not plan.bb_ante else (ante if s == plan.big_blind_seat else 0)
            ante_part[s] = min(a, posted[s])
        return {s: posted[s] - ante_part[s] for s in plan.dealt_in}

    def _deal_hole_cards(self, plan: HandPlan) -> None:
        """Hole cards, one at a time from the first seat left of the button (rule 34 heads-up)."""
        first = next((s for s in sorted(plan.dealt_in) if s > plan.button), min(plan.dealt_in))
        if len(plan.dealt_in) == 2:
            first = plan.big_blind_seat
        order = sorted(plan.dealt_in, key=lambda s: (s < first, s))
        for i in range(2):
            for seat in order:
                self._card(f"seat{seat}", plan.hole[seat][i], 0.05)

    def _deal_street(self, plan: HandPlan, street: int) -> None:
        """The burn, then the street's board cards (street 1: the flop)."""
        board_at = (0, 3, 4, 5)
        self._card("burn", plan.burns[street - 1], 0.3)
        for card in plan.board[board_at[street - 1] : board_at[street]]:
            self._card("board", card, 0.1)

    def _decide(
        self,
        plan: HandPlan,
        d: Decision,
        stacks: dict[int, int],
        bets: dict[int, int],
        current: int,
        zones: dict[int, list[tuple[str, int]]],
        live: set[int],
    ) -> int:
        """One player's decision at the table; the bet to match after it."""
        if d.kind == "fold":
            for card in plan.hole[d.seat]:
                self.events.append(TagOut(self._t(0.05), f"seat{d.seat}", card=card))
                self.events.append(TagIn(self.clock.t, "muck", card=card))
                self.on_table[card] = "muck"
            live.discard(d.seat)
            return current
        if d.kind == "check":
            self.events.append(ButtonPress(self._t(), "check"))
            return current
        if d.kind == "call":
            add = min(current - bets[d.seat], stacks[d.seat])
            stacks[d.seat] -= add
            bets[d.seat] += add
            self._push(d.seat, add, zones)
            return current
        if d.kind == "allin":
            self.events.append(ButtonPress(self._t(), "allin", d.seat))
            add = stacks[d.seat]
        else:
            if current > 0:
                self.events.append(ButtonPress(self._t(), "raise"))
            add = d.total - bets[d.seat]
        stacks[d.seat] -= add
        bets[d.seat] += add
        self._push(d.seat, add, zones)
        return max(current, bets[d.seat])

    def _collect(
        self, plan: HandPlan, zones: dict[int, list[tuple[str, int]]], pot: list[tuple[str, int]]
    ) -> None:
        """Cards into the muck and the shuffler; chips off the antennas."""
        for seat in sorted(zones):
            for chip, value in zones[seat]:
                self.events.append(TagOut(self._t(0.01), f"bet{seat}", chip=chip, value=value))
        for chip, value in pot:  # every chip leaves the pot, however the hand ended
            self.events.append(TagOut(self._t(0.01), "pot", chip=chip, value=value))
        for card, antenna in list(self.on_table.items()):
            if antenna != "muck":
                self.events.append(TagOut(self._t(0.01), antenna, card=card))
                self.events.append(TagIn(self.clock.t, "muck", card=card))
        for card in self.on_table:
            self.events.append(TagOut(self._t(0.01), "muck", card=card))
        self.on_table.clear()
        self.events.append(Tick(self._t(0.5)))
