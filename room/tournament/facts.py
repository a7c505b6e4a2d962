"""What the tournament takes from a table's messages: the few fields of the events it uses, the
hold and the hand of its state, the answer to a command. Everything else is left out (the
tournament journal keeps these inputs, not the tables' traffic). Never a card: no field taken
here can hold one."""

from __future__ import annotations

from typing import Any

from room.tournament.tournament import FACT_TYPES

#: The fields kept of each fact event (besides table, type, hand, seq).
FIELDS = {
    "hand_started": ("button", "small_blind_seat", "big_blind_seat", "seats"),
    "hand_completed": ("stacks",),
    "room_hold": ("hand_for_hand",),
    "room_release": ("instructed", "hand_for_hand"),
    "hands_face_down": ("seats",),
}


def from_event(table: str, payload: dict[str, Any], t: float) -> dict[str, Any] | None:
    """The tournament input for one of a table's events, or None if it needs none."""
    kind = payload.get("type")
    if kind not in FACT_TYPES:
        return None
    fact: dict[str, Any] = {
        "kind": "event",
        "t": t,
        "table": table,
        "type": kind,
        "hand": payload.get("hand"),
        "seq": payload.get("seq"),
    }
    for key in FIELDS[str(kind)]:
        if key in payload:
            fact[key] = payload[key]
    return fact


def from_state(table: str, payload: dict[str, Any], t: float) -> dict[str, Any]:
    """The tournament input for a table's retained state: its hand and the room's hold."""
    held = payload.get("held") or []
    return {
        "kind": "state",
        "t": t,
        "table": table,
        "hand": payload.get("hand"),
        "seq": payload.get("seq"),
        "held_by_room": "room" in held,
    }


def from_reply(table: str, payload: dict[str, Any], t: float) -> dict[str, Any]:
    """The tournament input for a table's answer to a command."""
    return {
        "kind": "reply",
        "t": t,
        "table": table,
        "id": payload.get("id"),
        "ok": bool(payload.get("ok")),
        "error": payload.get("error"),
        "command": payload.get("command"),
    }
