"""The tournament's records: players, tables as the room sees them, proposals to the floor,
the operations it confirmed, commands to send to the tables, the log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.engine.positions import Positions

# Player statuses.
REGISTERED = "registered"  # entered, no seat yet (before the draw)
SEATED = "seated"
OUT = "out"  # no chips left (the floor confirms it)
DISQUALIFIED = "disqualified"  # chips removed from play


@dataclass(slots=True)
class Player:
    """One entrant; a re-entry is the same player with one more entry."""

    id: str
    name: str
    entries: int = 1
    status: str = REGISTERED
    table: str | None = None
    seat: int | None = None
    stack: int = 0
    level_stack: int = 0  # chips when the current level began (change since the last level)
    hand_start: int = 0  # chips when the hand in progress at the player's table began
    out_hand: tuple[str, int] | None = None  # (table, hand) the player went out in
    out_confirmed: bool = False
    out_at: float | None = None
    place: tuple[int, int] | None = None  # best, worst (a shared place: best < worst)
    moves: int = 0

    @property
    def in_play(self) -> bool:
        """Still in the tournament with chips (or about to be seated)."""
        return self.status in (REGISTERED, SEATED)

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "entries": self.entries,
            "status": self.status,
            "table": self.table,
            "seat": self.seat,
            "chips": self.stack,
            "out_confirmed": self.out_confirmed if self.status == OUT else None,
            "place": None if self.place is None else self.place[0],
            "place_to": None if self.place is None else self.place[1],
        }


@dataclass(slots=True)
class Table:
    """A table as the room sees it from the table's events and the commands it sent."""

    id: str
    active: bool = False
    seats: dict[int, str] = field(default_factory=dict)  # seat -> player id
    hand: int | None = None  # the hand in progress
    last_hand: int = 0
    positions: Positions | None = None  # the hand in progress, else the last one
    button: int | None = None  # the first button sent
    hold_set: bool = False  # the table holds by the room (its `room_hold` / reply)
    asked: str | None = None  # "hold" or "release" sent, not answered yet
    reasons: dict[str, str] = field(default_factory=dict)  # why the room wants it held
    h4h: str = ""  # hand-for-hand: "playing", "face_down", "done", "released"
    h4h_mode: bool = False  # the hand-for-hand mode was sent to the table
    level_sent: int = 0
    level_asked: int = 0
    seq: int = 0  # the highest event seq taken (a state older than it is stale)
    seen: set[int] = field(default_factory=set)  # event seqs taken (copies are dropped)
    floor: int = 0  # events up to this seq were before the tournament: not its facts
    waiting: list[Command] = field(default_factory=list)  # sent again after the hand

    @property
    def held_now(self) -> bool:
        """Held by the room, between hands, and no release on its way: seats may change."""
        return self.hold_set and self.hand is None and self.asked != "release"

    def public(self) -> dict[str, Any]:
        return {
            "table": self.id,
            "active": self.active,
            "players": len(self.seats),
            "seats": {str(s): p for s, p in sorted(self.seats.items())},
            "hand": self.hand,
            "last_hand": self.last_hand,
            "held": self.hold_set,
            "held_for": sorted(self.reasons.values()),
            "hand_for_hand": self.h4h or None,
            "button": self.positions.button if self.positions else self.button,
        }


@dataclass(slots=True)
class Command:
    """A command for a table (docs/mqtt.md, Room commands), with the id it is sent under."""

    table: str
    name: str
    args: dict[str, Any]
    id: str
    op: int | None = None  # the operation waiting for its reply

    def payload(self) -> dict[str, Any]:
        """What the table is sent: the arguments (not the room's own `_` notes) and the id."""
        return {**{k: v for k, v in self.args.items() if not k.startswith("_")}, "id": self.id}


@dataclass(slots=True)
class Proposal:
    """Something the floor confirms on the monitor: a move, a table to break, the final
    table, a player out, hand-for-hand on or off."""

    id: int
    kind: str  # move, break, final, out, hand_for_hand, end_hand_for_hand
    key: str  # one open proposal per key
    text: str
    rule: str
    t: float
    details: dict[str, Any] = field(default_factory=dict)
    status: str = "open"  # open, confirmed, rejected, withdrawn, done
    by: str | None = None
    decided_at: float | None = None
    note: str | None = None

    def public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "rule": self.rule,
            "t": self.t,
            "details": self.details,
            "status": self.status,
            "by": self.by,
            "decided_at": self.decided_at,
            "note": self.note,
        }


@dataclass(slots=True)
class Op:
    """A confirmed operation on the tables, carried out in stages as the tables allow."""

    id: int
    kind: str  # move, break, final, start
    proposal: int | None
    tables: list[str]  # the tables it holds while it runs
    stage: str = "hold"  # hold -> sent -> done (or blocked)
    details: dict[str, Any] = field(default_factory=dict)
    sent: set[str] = field(default_factory=set)  # command ids not answered yet
    error: str | None = None


@dataclass(frozen=True, slots=True)
class LogEntry:
    """What happened, for the floor page and the record."""

    t: float
    kind: str
    text: str
    rule: str | None = None
    severity: str = "info"

    def public(self) -> dict[str, Any]:
        return {
            "t": self.t,
            "kind": self.kind,
            "text": self.text,
            "rule": self.rule,
            "severity": self.severity,
        }
