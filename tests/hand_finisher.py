"""Plays a hand in progress to its end, as a dealer would: every live seat checks or calls.

The dealing-error scenarios in tests/scenarios stop once the procedure is shown; the PHH
acceptance needs whole hands. `finish_hand` reads the engine (whose turn, what to call, the
chips in each bet zone) and feeds it the physical inputs that finish the hand: missing hole
cards, the check button or a calling push, gathering the bets, burn and board cards from the
cards not yet seen, and the push of the pot at showdown.
"""

from __future__ import annotations

from collections.abc import Sequence

from controller.engine import Engine
from controller.engine.cards import FULL_DECK
from kernel.inputs import ButtonPress, Event, TagIn, TagOut, Tick
from kernel.messages import Message

BOARD_AT = {"preflop": 0, "flop": 3, "turn": 4, "river": 5}


class _Finisher:
    def __init__(self, engine: Engine, trace: Sequence[Event]) -> None:
        self.engine = engine
        used = {e.card for e in trace if isinstance(e, TagIn | TagOut) and e.card}
        self.deck = [c for c in reversed(FULL_DECK) if c not in used]
        self.t = max((e.t for e in trace), default=0.0)
        self.events: list[Event] = []
        self.messages: list[Message] = []
        self.serial = 0
        self.pot: dict[str, int] = {}  # chips the trace left on the pot antenna
        for e in trace:
            if isinstance(e, TagIn | TagOut) and e.antenna == "pot" and e.chip is not None:
                if isinstance(e, TagIn):
                    self.pot[e.chip] = e.value or 0
                else:
                    self.pot.pop(e.chip, None)

    def feed(self, event: Event) -> None:
        self.events.append(event)
        self.messages.extend(self.engine.apply(event))

    def tick(self, dt: float = 0.1) -> float:
        self.t = round(self.t + dt, 6)
        return self.t

    def card(self, antenna: str) -> None:
        self.feed(TagIn(self.tick(), antenna, card=self.deck.pop()))

    def push(self, seat: int, amount: int) -> None:
        self.serial += 1
        self.feed(TagIn(self.tick(), f"bet{seat}", chip=f"fin{self.serial:05d}", value=amount))
        self.feed(Tick(self.tick(self.engine.spec.settle_seconds + 0.05)))

    def zones(self) -> dict[int, dict[str, int]]:
        hand = self.engine.hand
        betting = hand.betting if hand is not None else None
        if betting is None:
            return {}
        return {s: dict(z.chips) for s, z in betting.zones.items() if z.chips}

    def gather(self) -> list[tuple[str, int]]:
        gathered: list[tuple[str, int]] = []
        for seat, chips in sorted(self.zones().items()):
            for chip, value in chips.items():
                t = self.tick(0.01)
                self.feed(TagOut(t, f"bet{seat}", chip=chip, value=value))
                self.feed(TagIn(t, "pot", chip=chip, value=value))
                gathered.append((chip, value))
        return gathered

    def step(self, pot: list[tuple[str, int]]) -> bool:
        """One dealer motion; False when nothing more can be done."""
        engine = self.engine
        hand = engine.hand
        if hand is None:
            return False
        snap = engine.snapshot()
        seats = snap["seats"]
        live = [int(s) for s, v in seats.items() if v["status"] in ("active", "allin")]
        short = [s for s in live if seats[str(s)].get("cards", 0) < 2]
        if short:
            for seat in short:
                for _ in range(2 - seats[str(seat)].get("cards", 0)):
                    self.card(f"seat{seat}")
            return True
        to_act = snap.get("to_act")
        if to_act is not None:
            seat = seats[str(to_act)]
            level = max(int(v["bet"]) for v in seats.values())
            owe = min(level - int(seat["bet"]), int(seat["stack"]))
            if owe > 0:
                self.push(int(to_act), owe)
            else:
                self.feed(ButtonPress(self.tick(), "check"))
            return True
        board = len(snap.get("board") or [])
        if board < 5 and len(live) > 1 and snap.get("street") != "showdown":
            pot.extend(self.gather())
            self.card("burn")
            for _ in range({0: 3}.get(board, 1)):
                self.card("board")
            return True
        pot.extend(self.gather())
        if not pot:  # the trace left its chips in the bet zones: one goes to the pot
            self.feed(TagIn(self.tick(), "pot", chip="fin-pot", value=1))
            pot.append(("fin-pot", 1))
        for chip, value in pot:
            self.feed(TagOut(self.tick(0.5), "pot", chip=chip, value=value))
        pot.clear()
        self.feed(Tick(self.tick(1.0)))
        return True


def finish_hand(engine: Engine, trace: Sequence[Event], limit: int = 400) -> list[Message] | None:
    """Finish the engine's hand in progress; the messages it published meanwhile, or None
    when the hand could not be finished (a procedure left the table held)."""
    finisher = _Finisher(engine, trace)
    pot: list[tuple[str, int]] = list(finisher.pot.items())
    for _ in range(limit):
        if engine.hand is None:
            return finisher.messages
        before = engine.seq, len(finisher.events)
        if not finisher.step(pot):
            break
        if (engine.seq, len(finisher.events)) == before:
            break
    return finisher.messages if engine.hand is None else None
