"""Helpers to drive the engine from test code in trace form."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from controller.engine import Engine, EngineSpec
from controller.messages import Message
from controller.trace import Event, parse_event


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
