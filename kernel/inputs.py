"""Input events and their vocabularies: the small core drivers and engine share (trace format)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

BUTTON_NAMES = frozenset(
    {"shuffler", "check", "misdeal", "floor", "exposed", "boxed", "allin", "raise"}
)
DEVICE_NAMES = frozenset({"card_reader", "chip_reader", "badge_reader"})
DEVICE_STATES = frozenset({"offline", "online"})

# A badge uid is whole bytes: 1 to 20 of them (ISO 14443 uids are 4, 7 or 10).
BADGE_UID_RE = re.compile(r"^(?:[0-9A-Fa-f]{2}){1,20}$")


def is_badge_uid(uid: object) -> bool:
    """True for 2..40 hex digits, an even number of them (either case)."""
    return isinstance(uid, str) and BADGE_UID_RE.match(uid) is not None


@dataclass(frozen=True, slots=True)
class Command:
    """A room-server or operator command (`seat`, `unseat`, `level`, `button`, ...)."""

    t: float
    name: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ButtonPress:
    """A physical button: shuffler, dealer panel (`check`, `misdeal`...) or a seat's all-in."""

    t: float
    name: str
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class Tag:
    """A tag (card, chip or marker) at an antenna: one of `card`, `chip` (with its `value`)
    or the raw `uid` (resolved through the deck and chip registries)."""

    t: float
    antenna: str
    card: str | None = None
    chip: str | None = None
    value: int | None = None
    uid: str | None = None


@dataclass(frozen=True, slots=True)
class TagIn(Tag):
    """A tag arrived at an antenna."""


@dataclass(frozen=True, slots=True)
class TagOut(Tag):
    """A tag left an antenna."""


@dataclass(frozen=True, slots=True)
class Badge:
    """A staff badge presented to (or, with `removed`, taken off) the PC/SC reader."""

    t: float
    uid: str
    removed: bool = False


@dataclass(frozen=True, slots=True)
class Device:
    """A device went away or came back (`card_reader`, `chip_reader`, `badge_reader`)."""

    t: float
    name: str
    state: str  # "offline" | "online"


@dataclass(frozen=True, slots=True)
class Tick:
    """Time passing with no other input (an engine timer fired)."""

    t: float


Event = Command | ButtonPress | TagIn | TagOut | Badge | Device | Tick

Timed = tuple[TagIn | TagOut, float | None]
"""A tag event re-read after a gap and when its board saw the move, in trace time (None:
not known), as a reader driver hands a catch-up over (docs/reader-protocol.md)."""
