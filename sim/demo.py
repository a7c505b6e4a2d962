"""The demo `tablectl sim` deals: a cash game that never ends by itself, on a chip set.

Nine players sit with a buy-in; a player who runs low rebuys between hands, and a player
who has won five buy-ins racks up and leaves, a new player taking the seat. The chips are
the table's chip set, the chip registry's tags: a bet is pushed in the fewest chips (the
dealer colours up), each chip is taken from the rack and goes back when the hand is over,
so no tag is ever in two places and a demo of any length reads clean on the real boards.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import random
from collections import deque
from collections.abc import Callable, Iterator, Sequence

from controller.config import Config
from controller.engine import Engine
from kernel.errors import TableError
from kernel.inputs import Badge, ButtonPress, Command, Event, TagIn, TagOut, Tick
from sim.dealer import DealerClock, TableDealer, seat_players
from sim.finisher import (
    HandFinisher,
    finish,
    finish_live,
    floor_badge,
    off_plan,
    parted_ways,
    table_view,
)
from sim.mistakes import MISTAKES
from sim.plans import random_hand

log = logging.getLogger("tablectl.sim")

#: The buy-in, and the stack below which a player rebuys (tops up to the buy-in).
BUY_IN, REBUY_BELOW = 20_000, 2_000
#: A player whose stack passes this racks up and leaves; a new player takes the seat.
CASH_OUT_ABOVE = 5 * BUY_IN
#: The blinds of the demo.
BLINDS = (100, 200, 0)
#: The chips of a value in the rack when the config names no chip registry.
DEFAULT_RACK = 400
#: About one hand in this many starts with a dealing error the dealer then puts right,
#: after the first CLEAN_START hands (a demo, or a short test run, starts clean).
ERROR_EVERY, CLEAN_START = 25, 5

FIRST_NAMES = (
    "Alice",
    "Bruno",
    "Chiara",
    "Dario",
    "Elena",
    "Fabio",
    "Giulia",
    "Hugo",
    "Irene",
    "Jonas",
)
#: Who takes a seat a player left, in turn.
NEW_NAMES = (
    "Karin",
    "Luca",
    "Marta",
    "Nico",
    "Olga",
    "Pietro",
    "Quinn",
    "Rosa",
    "Sven",
    "Tina",
    "Ugo",
    "Vera",
    "Walter",
    "Xenia",
    "Yann",
    "Zoe",
)


@dataclasses.dataclass(frozen=True, slots=True)
class Chip:
    """A chip of the set: a registered tag (`uid`), or a named chip of a trace."""

    value: int
    uid: str | None = None
    name: str | None = None


class ChipRack:
    """The table's chips by value: a chip is taken for a push and comes back at hand end."""

    def __init__(self, config: Config, size: int | None = None) -> None:
        from controller.registry import load_chips

        self.racks: dict[int, deque[Chip]] = {}
        self.registered = config.registries.chips is not None
        if config.registries.chips is not None:
            for uid, value in load_chips(config.registries.chips).items():
                self.racks.setdefault(value, deque()).append(Chip(value, uid=uid.upper()))
        self.size = size or DEFAULT_RACK
        self.minted = 0
        self.out: dict[str, Chip] = {}  # the dealer's chip id -> the chip it is this hand
        self.most_out: dict[int, int] = {}

    def _rack(self, value: int) -> deque[Chip]:
        rack = self.racks.get(value)
        if rack is None:  # a value the registry has not (or no registry): named chips
            rack = deque(Chip(value, name=f"c{value}-{i:04d}") for i in range(1, self.size + 1))
            self.racks[value] = rack
        return rack

    def take(self, dealer_id: str, value: int) -> Chip:
        """The chip the dealer's chip `dealer_id` is this hand (taken from the rack)."""
        chip = self.out.get(dealer_id)
        if chip is not None:
            return chip
        rack = self._rack(value)
        if rack:
            chip = rack.popleft()
        else:  # the set is too small for this table: say so, and go on with a named chip
            self.minted += 1
            if self.minted == 1:
                log.warning("the chip set has too few chips of %s for the demo", value)
            chip = Chip(value, name=f"extra-{value}-{self.minted}")
        self.out[dealer_id] = chip
        taken = sum(1 for c in self.out.values() if c.value == value)
        self.most_out[value] = max(self.most_out.get(value, 0), taken)
        return chip

    def give_back(self) -> None:
        """Every chip of the hand back in its rack (the order they were taken)."""
        for chip in self.out.values():
            if chip.uid is not None or (chip.name and not chip.name.startswith("extra-")):
                self._rack(chip.value).append(chip)
        self.out.clear()

    def event(self, event: Event) -> Event:
        """A dealer's chip movement as the set's chip (its tag uid, or its name)."""
        if not isinstance(event, TagIn | TagOut) or event.chip is None or event.value is None:
            return event
        chip = self.take(event.chip, event.value)
        if chip.uid is not None:
            return dataclasses.replace(event, chip=None, value=None, uid=chip.uid)
        return dataclasses.replace(event, chip=chip.name)


def demo_events(
    config: Config,
    hands: int | None,
    seed: int,
    *,
    chip_set: int | None = None,
    errors: Sequence[str] = (),
    error_every: int = ERROR_EVERY,
    clean_start: int = CLEAN_START,
    live: Callable[[], Engine] | None = None,
) -> Iterator[Event]:
    """The demo's events, made as they are played: seat every seat, then `hands` random,
    legal hands of a cash game (None: without end). Chips come from the chip registry's
    set (`chip_set`: the chips of a value when the config has no registry).

    About one hand in `error_every` (after the first few) the dealer makes a dealing
    error on purpose: the first card to the wrong seat (a misdeal, 35A-2), or one of
    `errors` (sim/mistakes.py: `premature_flop`, `four_card_flop`,
    `folds_out_of_turn`). Whenever the table answers otherwise than the plan expected,
    the dealer follows the table's instructions to the end of the hand.

    `live`: the engine of the table the events are played at (a simulated table's
    daemon), read between the dealer's moves: where it reads them otherwise than the
    dealer's own reckoning, the dealer follows it to the end of the hand."""
    from controller.replay import build_engine

    unknown = sorted(set(errors) - set(MISTAKES))
    if unknown:
        raise TableError(f"no such dealing error: {', '.join(unknown)} (known: {sorted(MISTAKES)})")
    seats = list(config.seat_numbers)
    shadow = build_engine(config)
    for event in seat_players(
        [(s, FIRST_NAMES[(s - 1) % len(FIRST_NAMES)], BUY_IN) for s in seats],
        BLINDS,
        button=seats[-1],
    ):
        shadow.apply(event)
        yield event
    rng = random.Random(seed)
    mistakes = random.Random(f"dealing errors {seed}")  # apart: the hands stay the seed's
    dealer = TableDealer(DealerClock(0.5), settle=config.rules.settle_seconds)
    rack = ChipRack(config, chip_set)
    finisher = HandFinisher(
        random.Random(f"finisher {seed}"),
        floor_badge=floor_badge(shadow),
        settle=config.rules.settle_seconds,
    )
    badge = _demo_dealer_badge(config)
    newcomers = 0
    number = 0
    while hands is None or number < hands:
        between, newcomers = _comings_and_goings(shadow, dealer.clock.t, newcomers)
        for event in between:
            shadow.apply(event)
        planned = [rack.event(e) for e in random_hand(shadow, dealer, rng)]
        misdeal = False
        if mistakes.random() < 1 / error_every and number >= clean_start:
            planned, misdeal = _with_a_mistake(planned, mistakes, errors)
        dealer.events.clear()  # the dealer's record of the hand: given back, not kept
        dealer.serial = 0  # its chip ids name this hand's chips only (the rack's are kept)
        if number == 0 and badge is not None and planned:
            # The dealer taps the badge in as the first hand starts (dealer push, rule 23).
            t = planned[0].t
            planned[1:1] = [Badge(t, badge), Badge(t, badge, removed=True)]
        yield from between
        # The plan, as long as the table goes along with it; where the table answers
        # otherwise (a procedure, the floor called, an action out of turn), the dealer
        # follows the table and finishes the hand (sim/finisher.py).
        # A live table is compared after a tick only: by then it has read every input
        # before it (its reorder window let them go).
        before = shadow.hand_number
        views = [table_view(shadow)]  # the dealer's reckoning since the last tick
        for event in planned:
            if live is not None and isinstance(event, Tick) and parted_ways(live(), *views):
                break  # the table read the dealer's moves otherwise: follow it
            answer = shadow.apply(event)
            yield event
            views = [*views[-1:], table_view(shadow)] if isinstance(event, Tick) else views
            if live is not None and not isinstance(event, Tick):
                views.append(table_view(shadow))
            if off_plan(answer, misdeal_planned=misdeal):
                break
        finisher.t = dealer.clock.t
        if live is not None:
            finisher.t = dealer.clock.step(0.5)
            yield Tick(finisher.t)  # every timer due fires: the table has read it all
            if live().hand is not None or parted_ways(live(), table_view(shadow)):
                log.info("hand %d: the table read the dealing otherwise; following it", number + 1)
                yield from finish_live(live, finisher, rack.event)
                table = live()  # the dealer's reckoning goes on from the table's own state
                shadow = copy.deepcopy(table, {id(table.profile): table.profile})
        elif shadow.hand is not None or shadow.hand_number == before:
            yield from finish(shadow, finisher, rack.event)
        dealer.clock.t = max(dealer.clock.t, finisher.t)
        rack.give_back()
        dealer.clock.step(1.0)
        number += 1


def _comings_and_goings(shadow: Engine, t: float, newcomers: int) -> tuple[list[Event], int]:
    """Between hands: a player far up racks up and leaves and someone new sits down, a
    player short rebuys up to the buy-in; the commands, and the newcomers counted so far."""
    between: list[Event] = []
    for n, seat in sorted(shadow.seats.items()):
        if seat.player is None:
            continue
        if seat.stack > CASH_OUT_ABOVE:
            name = NEW_NAMES[newcomers % len(NEW_NAMES)]
            if newcomers >= len(NEW_NAMES):
                name += f" {newcomers // len(NEW_NAMES) + 1}"
            newcomers += 1
            between += [
                Command(t, "unseat", {"seat": n}),
                Command(t, "seat", {"seat": n, "player": name, "stack": BUY_IN}),
            ]
        elif seat.stack < REBUY_BELOW:
            between.append(Command(t, "stack", {"seat": n, "stack": BUY_IN}))
    return between, newcomers


def _with_a_mistake(
    planned: list[Event], mistakes: random.Random, errors: Sequence[str]
) -> tuple[list[Event], bool]:
    """The hand with one dealing error made on purpose (a misdeal, or one of `errors`),
    and whether it is the misdeal."""
    kind = mistakes.choice(["misdeal", *errors]) if errors else "misdeal"
    if kind != "misdeal":
        return MISTAKES[kind](planned, mistakes), False
    if _shuffled(planned):
        return first_card_to_the_wrong_seat(planned), True
    return planned, False


def first_card_to_the_wrong_seat(hand: list[Event]) -> list[Event]:
    """The hand with its first hole card pitched to the seat after the right one: the
    table declares the misdeal (rule 35A-2), the dealer takes the card back and deals the
    hand again, card for card (rule 35-C). A hand with fewer than three seats is kept."""
    cards = [
        (i, e) for i, e in enumerate(hand) if isinstance(e, TagIn) and e.antenna.startswith("seat")
    ]
    seats = list(dict.fromkeys(e.antenna for _, e in cards))
    if len(seats) < 3:
        return hand
    i, first = cards[0]
    assert isinstance(first, TagIn)
    wrong = dataclasses.replace(first, antenna=seats[1])
    back = TagOut(first.t, seats[1], card=first.card)
    return [*hand[:i], wrong, back, *hand[i:]]


def _shuffled(hand: list[Event]) -> bool:
    """The hand starts on the shuffler's button (not on its first card, which must go to
    the right seat for the hand to start at all)."""
    return bool(hand) and isinstance(hand[0], ButtonPress) and hand[0].name == "shuffler"


def demo_script(config: Config, hands: int, seed: int) -> list[Event]:
    """The built-in demo as a list: seat every seat, then deal `hands` hands."""
    return list(demo_events(config, hands, seed))


def _demo_dealer_badge(config: Config) -> str | None:
    """The first dealer's badge uid, on a table with a simulated badge reader."""
    if config.badge.backend != "sim" or config.badge.staff is None:
        return None
    from controller.staff import load_staff

    dealers = [m for m in load_staff(config.badge.staff).members() if m.role == "dealer"]
    return dealers[0].uid if dealers else None
