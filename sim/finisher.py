"""A dealer who finishes the hand the table has in progress by following what the table says:
the procedure it published (a misdeal's re-deal, premature cards back off the board), the
floor when it calls for one (rule 1: the floor's ruling settles a four-card flop, a skipped
seat, anything the house gives no procedure for), then check or call in turn, the streets,
the pot pushed, and a clean table. The demo falls back on it whenever its planned hand and
the table part ways, so a demo hand always ends."""

from __future__ import annotations

import copy
import json
import logging
import random
from collections.abc import Callable, Iterator
from typing import Any

from controller.engine import Engine
from controller.engine.cards import FULL_DECK
from kernel.inputs import Badge, ButtonPress, Event, TagIn, TagOut, Tick

log = logging.getLogger("tablectl.sim")

#: Card antennas on the table (the muck is where cards go, not where they lie in play).
ON_TABLE = ("seat", "board", "burn")
#: Dealer motions a hand may take before the finisher gives up on it.
MOTIONS = 400


class HandFinisher:
    """Finishes the engine's hand one dealer motion at a time: `motion` reads the table (the
    engine's public state, its procedures and what its readers see) and returns the events
    of the next motion; the caller applies them (to the engine, or plays them at a table
    whose engine it reads) and asks again."""

    def __init__(
        self, rng: random.Random, *, floor_badge: str | None, settle: float, step: float = 0.1
    ) -> None:
        self.rng = rng
        self.floor_badge = floor_badge
        self.settle = settle
        self.step = step
        self.serial = 0
        self.t = 0.0
        self.rulings = 0

    # ------------------------------------------------------------------ helpers

    def t_after(self, dt: float) -> float:
        """The finisher's time, `dt` later."""
        return self._tick(dt)

    def _tick(self, dt: float | None = None) -> float:
        self.t = round(self.t + (self.step if dt is None else dt), 6)
        return self.t

    def _deck(self, engine: Engine) -> list[str]:
        """Cards no reader sees and the hand has not used, shuffled."""
        hand = engine.hand
        used = set(engine.cards.at)
        if hand is not None:
            used |= set(hand.board) | {c for cards in hand.hole.values() for c in cards}
        deck = [c for c in FULL_DECK if c not in used]
        self.rng.shuffle(deck)
        return deck

    @staticmethod
    def _cards_at(engine: Engine, prefix: str) -> list[tuple[str, str]]:
        return [
            (name, card)
            for name, cards in sorted(engine.cards.contents.items())
            if name.startswith(prefix)
            for card in cards
        ]

    def _chip_out(self, engine: Engine, antenna: str, chip: str) -> TagOut:
        registry = engine.chips
        if registry is not None and registry.value_of(chip) is not None:
            return TagOut(self._tick(0.01), antenna, uid=chip)
        return TagOut(self._tick(0.01), antenna, chip=chip, value=engine.chip_values.get(chip, 1))

    def _push(self, seat: int, amount: int) -> list[Event]:
        self.serial += 1
        chip = f"fin{self.serial:05d}"
        return [
            TagIn(self._tick(0.02), f"bet{seat}", chip=chip, value=amount),
            Tick(self._tick(self.settle)),
        ]

    def _gather(self, engine: Engine) -> list[Event]:
        out: list[Event] = []
        for name, chips in sorted(engine.chip_spots.contents.items()):
            if not name.startswith("bet"):
                continue
            for chip in list(chips):
                leave = self._chip_out(engine, name, chip)
                out.append(leave)
                out.append(
                    TagIn(
                        leave.t, "pot", card=None, chip=leave.chip, value=leave.value, uid=leave.uid
                    )
                )
        return out

    def _floor_rules(self) -> list[Event]:
        """The floor comes (badge), rules (the panel's floor button, rule 1), and goes."""
        self.rulings += 1
        if self.floor_badge is None:
            return [ButtonPress(self._tick(), "floor")]
        t = self._tick()
        return [
            Badge(t, self.floor_badge),
            ButtonPress(self._tick(), "floor"),
            Badge(self._tick(), self.floor_badge, removed=True),
        ]

    # ------------------------------------------------------------------ the motions

    def _act(self, seats: dict[str, Any], to_act: int) -> list[Event]:
        """The seat to act calls what it owes (all in if short), or checks."""
        seat = seats[str(to_act)]
        level = max(int(v["bet"]) for v in seats.values())
        owe = min(level - int(seat["bet"]), int(seat["stack"]))
        if owe > 0:
            return self._push(to_act, owe)
        return [ButtonPress(self._tick(), "check")]

    def _next_street(self, engine: Engine, on_board: int) -> list[Event]:
        """The bets gathered, the burn(s) the table expects and the next street's cards."""
        deck = self._deck(engine)
        if len(deck) < 4:  # no card left to deal: nothing a dealer can do
            return []
        out = self._gather(engine)
        for _ in range(self._burns(engine, on_board)):
            out.append(TagIn(self._tick(0.3), "burn", card=deck.pop()))
        for _ in range(3 if not on_board else 1):
            out.append(TagIn(self._tick(), "board", card=deck.pop()))
        return out

    def motion(self, engine: Engine, *, same_clock: bool = True) -> list[Event]:
        """The next dealer motion at the engine's table; [] when the hand is over.
        (`same_clock`: the events' times are the engine's; else the finisher's own.)"""
        if same_clock:
            self.t = max(self.t, engine.t)
        hand = engine.hand
        if hand is None:
            return []
        snap = engine.snapshot()
        procedures: list[dict[str, Any]] = snap["procedures"]
        misdeal = next((p for p in procedures if p["procedure"] == "misdeal"), None)
        if misdeal is not None and misdeal["stage"] == "pending":
            return self._collect(engine)  # every card off the table first (35-C)
        if engine.lamps()["floor"] or engine.holds:
            return self._floor_rules()
        premature = [
            c for p in procedures if p["procedure"] == "premature_card" for c in p.get("cards", [])
        ]
        on_board = set(engine.cards.contents.get("board", []))
        if premature and set(premature) & on_board:  # back to the stub (RP-5)
            return [TagOut(self._tick(), "board", card=c) for c in premature if c in on_board]
        seats = snap["seats"]
        live = [int(s) for s, v in seats.items() if v["status"] in ("active", "allin")]
        short = [s for s in hand.dealt_in if s in live and seats[str(s)]["cards"] < 2]
        if short and not snap["board"]:
            return self._deal(engine, short, {s: seats[str(s)]["cards"] for s in short})
        to_act = snap["to_act"]
        if to_act is not None:
            return self._act(seats, int(to_act))
        betting = hand.betting
        phase = betting.phase if betting is not None else None
        if phase == "waiting" and len(snap["board"]) < 5 and len(live) > 1:
            return self._next_street(engine, len(snap["board"]))
        if phase == "posting":
            return [Tick(self._tick(self.settle))]  # a push still settling
        # Showdown (or an uncontested pot): the pot is pushed to the winner.
        out = self._gather(engine)
        in_pot = list(engine.chip_spots.contents.get("pot", []))
        if not in_pot and not out:
            self.serial += 1
            chip = f"fin{self.serial:05d}"
            out.append(TagIn(self._tick(), "pot", chip=chip, value=1))
            out.append(TagOut(self._tick(1.0), "pot", chip=chip, value=1))
            return out
        if out:
            return out
        return [self._chip_out(engine, "pot", in_pot[0]), Tick(self._tick(1.0))]

    @staticmethod
    def _burns(engine: Engine, board: int) -> int:
        """Burn cards still due before the next street: one (rule 38), or what a remedy
        allows (RP-5: a premature flop's burn stays, the new flop comes without one)."""
        hand = engine.hand
        dealing = hand.dealing if hand is not None else None
        if hand is None or dealing is None:
            return 1
        street = {0: "flop", 3: "turn", 4: "river"}.get(board, "river")
        allowed = int(getattr(dealing, "burn_plan", {}).get(street, 1))
        burned = len(hand.burns) - int(getattr(dealing, "burns_before", len(hand.burns)))
        return max(0, allowed - burned)

    def _collect(self, engine: Engine) -> list[Event]:
        """Every card on the table into the muck, and the muck away."""
        out: list[Event] = []
        for prefix in ON_TABLE:
            for name, card in self._cards_at(engine, prefix):
                t = self._tick(0.01)
                out += [TagOut(t, name, card=card), TagIn(t, "muck", card=card)]
        if not out:
            for _name, card in self._cards_at(engine, "muck"):
                out.append(TagOut(self._tick(0.01), "muck", card=card))
        return out or [Tick(self._tick())]

    def _deal(self, engine: Engine, seats: list[int], have: dict[int, int]) -> list[Event]:
        """Hole cards, one at a time from the first seat left of the button (34 heads-up)."""
        hand = engine.hand
        assert hand is not None
        dealt = sorted(hand.dealt_in)
        button = hand.positions.button
        first = next((s for s in dealt if s > button), dealt[0])
        if len(dealt) == 2:
            first = hand.positions.big_blind
        order = sorted(seats, key=lambda s: (s < first, s))
        deck = self._deck(engine)
        if len(deck) < 2 * len(order):  # no card left to deal: nothing a dealer can do
            return []
        out: list[Event] = []
        for round_ in range(2):
            for seat in order:
                if have[seat] <= round_:
                    out.append(TagIn(self._tick(0.05), f"seat{seat}", card=deck.pop()))
        return out

    def clean_table(self, engine: Engine) -> list[Event]:
        """After the hand: every card into the muck and away, every chip off the antennas."""
        out: list[Event] = []
        for name, chips in sorted(engine.chip_spots.contents.items()):
            out += [self._chip_out(engine, name, chip) for chip in list(chips)]
        cards = [c for _n, c in self._cards_at(engine, "muck")]
        for prefix in ON_TABLE:
            for name, card in self._cards_at(engine, prefix):
                t = self._tick(0.01)
                out += [TagOut(t, name, card=card), TagIn(t, "muck", card=card)]
                cards.append(card)
        out += [TagOut(self._tick(0.01), "muck", card=c) for c in dict.fromkeys(cards)]
        return out


def finish(
    engine: Engine,
    finisher: HandFinisher,
    convert: Callable[[Event], Event] = lambda e: e,
    limit: int = MOTIONS,
) -> Iterator[Event]:
    """Finish the engine's hand, applying each motion to it, then clear the table; the
    events, as made (`convert`: the finisher's own new chips as the table's chip set)."""
    for _ in range(limit):
        events = finisher.motion(engine)
        if not events:
            break
        for event in events:
            event = convert(event) if _fresh(event) else event
            engine.apply(event)
            yield event
    for event in finisher.clean_table(engine):
        engine.apply(event)
        yield event


def finish_live(
    live: Callable[[], Engine],
    finisher: HandFinisher,
    convert: Callable[[Event], Event] = lambda e: e,
    limit: int = MOTIONS,
) -> Iterator[Event]:
    """Finish the hand of a table being played (`live()`: its engine, read between the
    motions, each played before the next is asked for), then clear the table."""

    def now() -> Engine:
        engine = live()
        return copy.deepcopy(engine, {id(engine.profile): engine.profile})

    for _ in range(limit):
        events = finisher.motion(now(), same_clock=False)
        if not events:
            break
        for event in events:
            yield convert(event) if _fresh(event) else event
        yield Tick(finisher.t_after(0.5))  # the table has read the motion before the next
    yield from finisher.clean_table(now())
    yield Tick(finisher.t_after(0.5))


def table_view(engine: Engine) -> tuple[Any, ...]:
    """What a dealer compares of a table with the table it reckons: the hand, whether one
    is in progress, who is to act, the board, the procedures, the street."""
    snap = engine.snapshot()
    keys = ("to_act", "board", "procedures", "street")
    return (engine.hand_number, engine.hand is None, *(json.dumps(snap[k]) for k in keys))


def parted_ways(live: Engine, *reckoned: tuple[Any, ...]) -> bool:
    """The table being played reads the hand otherwise than every view the dealer reckons
    it may be at (the table may be a settling push behind the dealer's own reckoning)."""
    view = table_view(live)
    if view in reckoned:
        return False
    log.info("the table reads the hand as %s, not %s", view, reckoned[-1])
    return True


def _fresh(event: Event) -> bool:
    """A chip the finisher brought (not one already read on the table)."""
    return isinstance(event, TagIn | TagOut) and (event.chip or "").startswith("fin")


def floor_badge(engine: Engine) -> str | None:
    """The badge of the first floor member of the table's staff registry, if any."""
    floors = sorted(uid for uid, member in engine.staff.items() if member.role == "floor")
    return floors[0] if floors else None


def off_plan(messages: list[Any], *, misdeal_planned: bool) -> bool:
    """What the table answered to a planned input says the plan and the table parted ways:
    an alert (other than the procedure of a misdeal the dealer made on purpose), an action
    out of turn, a premature card, a four-card flop, a procedure violation, a skipped seat."""
    for m in messages:
        kind = m.payload.get("type")
        if m.topic == "alerts":
            if (
                misdeal_planned
                and kind == "procedure_required"
                and (m.payload.get("procedure") == "misdeal")
            ):
                continue
            return True
        if m.topic == "events" and kind in OFF_PLAN:
            if kind == "misdeal" and misdeal_planned:
                continue
            return True
    return False


#: Events that only a hand gone otherwise than planned produces.
OFF_PLAN = frozenset(
    {
        "out_of_turn",
        "premature_card",
        "four_card_flop",
        "procedure_violation",
        "skipped_hand",
        "misdeal",
        "hand_killed",
        "floor_ruling",
    }
)
