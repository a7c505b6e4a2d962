"""The effects the table itself carries out, as data (events, alerts, the floor called, the
state changed, hole cards published again): what the procedures and the hand's flows return
and the table's ports take (controller/engine/ports.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Say:
    """Publish an `events` message."""

    kind: str
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Alert:
    """Publish an `alerts` message."""

    kind: str
    severity: str
    message: str
    fields: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CallFloor:
    """Call the floor: the floor lamp is lit until the floor comes (badge) or rules."""


@dataclass(frozen=True, slots=True)
class Changed:
    """The public state changed without an event of its own."""


@dataclass(frozen=True, slots=True)
class Republish:
    """Publish a seat's hole cards again (a card was taken from it)."""

    seat: int


#: What the table itself carries out (the rest is the hand's).
TableEffect = Say | Alert | CallFloor | Changed | Republish


def say(kind: str, **fields: Any) -> Say:
    """An `events` message of `kind` with `fields`."""
    return Say(kind, fields)


def alert(kind: str, severity: str, message: str, **fields: Any) -> Alert:
    """An `alerts` message."""
    return Alert(kind, severity, message, fields)
