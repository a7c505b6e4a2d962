"""Helpers to drive the engine from test code in trace form."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from controller.engine import Engine, EngineSpec
from controller.trace import parse_event
from kernel.inputs import Event
from kernel.messages import Message


def ev(**fields: Any) -> Event:
    """One trace event from keyword fields (`t` defaults to 0)."""
    fields.setdefault("t", 0.0)
    return parse_event(fields)


def new_engine(seats: int = 9, **spec: Any) -> Engine:
    return Engine(EngineSpec(table="t01", room="test", seats=seats, **spec))


def run(engine: Engine, events: Iterable[Event]) -> list[Message]:
    out: list[Message] = []
    for event in events:
        out.extend(engine.apply(event))
    return out


def events_of(messages: Iterable[Message], kind: str | None = None) -> list[dict[str, Any]]:
    return [
        m.payload
        for m in messages
        if m.topic == "events" and (kind is None or m.payload["type"] == kind)
    ]


def public_text(messages: Iterable[Message]) -> str:
    """Everything published outside the hole-card topic, as one string."""
    return "\n".join(json.dumps(m.payload) for m in messages if m.topic != "holecards")


def seat_all(seats: Iterable[int], stack: int = 20_000) -> list[Event]:
    names = "ABCDEFGHIJ"
    return [
        ev(event="command", name="seat", seat=s, player=names[s - 1], stack=stack) for s in seats
    ]


class Table:
    """A table under test, driven with physical events at increasing times."""

    def __init__(
        self,
        seats: Iterable[int] = (1, 2, 3),
        stacks: int | dict[int, int] = 10_000,
        blinds: tuple[int, int, int] = (50, 100, 0),
        button: int | None = None,
        n_seats: int = 9,
        bb_ante: bool = False,
        **spec: Any,
    ) -> None:
        self.engine = new_engine(n_seats, **spec)
        self.t = 0.0
        self.out: list[Message] = []
        self.serial = 0
        self.hole: dict[int, list[str]] = {}
        seats = list(seats)
        for s in seats:
            stack = stacks[s] if isinstance(stacks, dict) else stacks
            self.do(ev(event="command", name="seat", seat=s, player=f"P{s}", stack=stack))
        sb, bb, ante = blinds
        self.do(
            ev(
                event="command",
                name="level",
                small_blind=sb,
                big_blind=bb,
                ante=ante,
                bb_ante=bb_ante,
            )
        )
        if button is not None:
            self.do(ev(event="command", name="button", seat=button))

    def do(self, *events: Event) -> list[Message]:
        got: list[Message] = []
        for event in events:
            got.extend(self.engine.apply(event))
        self.out.extend(got)
        return got

    def step(self, dt: float = 0.1) -> float:
        self.t = round(self.t + dt, 6)
        return self.t

    def shuffle(self) -> list[Message]:
        return self.do(ev(t=self.step(), event="button", name="shuffler"))

    def push(self, seat: int, *values: int, settle: bool = True) -> list[Message]:
        """Chips arrive in the seat's bet zone; then (by default) the quiet window passes."""
        events = []
        for value in values:
            self.serial += 1
            events.append(
                ev(
                    t=self.step(0.02),
                    event="tag_in",
                    antenna=f"bet{seat}",
                    chip=f"x{self.serial:05d}",
                    value=value,
                )
            )
        if settle:
            events.append(ev(t=self.step(1.0), event="tick"))
        return self.do(*events)

    def button(self, name: str, seat: int | None = None) -> list[Message]:
        fields: dict[str, Any] = {"t": self.step(), "event": "button", "name": name}
        if seat is not None:
            fields["seat"] = seat
        return self.do(ev(**fields))

    def deal(self, hole: dict[int, list[str]]) -> list[Message]:
        """Deal one card at a time, starting left of the button (rule 35A-2)."""
        self.hole.update(hole)
        hand = self.engine.hand
        button = hand.positions.button if hand is not None else 0
        order = sorted(hole, key=lambda s: (s <= button, s))
        events = [
            ev(t=self.step(0.05), event="tag_in", antenna=f"seat{s}", card=c)
            for i in range(2)
            for s in order
            for c in hole[s][i : i + 1]
        ]
        return self.do(*events)

    def board(self, *cards: str, burn: str | None = None) -> list[Message]:
        events = []
        if burn is not None:
            events.append(ev(t=self.step(), event="tag_in", antenna="burn", card=burn))
        events += [ev(t=self.step(), event="tag_in", antenna="board", card=c) for c in cards]
        return self.do(*events)

    def fold(self, seat: int) -> list[Message]:
        events = []
        for card in self.hole[seat]:
            events.append(ev(t=self.step(0.05), event="tag_out", antenna=f"seat{seat}", card=card))
            events.append(ev(t=self.t, event="tag_in", antenna="muck", card=card))
        return self.do(*events)

    def push_pot(self) -> list[Message]:
        """The dealer pushes the pot at showdown (a chip leaves the pot antenna)."""
        return self.do(ev(t=self.step(), event="tag_out", antenna="pot", chip="pot0", value=1))

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        return events_of(self.out, kind)

    def alerts(self) -> list[dict[str, Any]]:
        return [m.payload for m in self.out if m.topic == "alerts"]

    def actions(self) -> list[tuple[int, str, int, str | None]]:
        return [(e["seat"], e["action"], e["amount"], e["rule"]) for e in self.events("action")]

    def stacks(self) -> dict[int, int]:
        return {n: s.stack for n, s in self.engine.seats.items() if s.player is not None}

    @property
    def state(self) -> dict[str, Any]:
        return self.engine.snapshot()
