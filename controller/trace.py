"""Input trace events (docs/trace-format.md): typed records, parsing and canonical JSON."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from kernel.errors import TraceError
from kernel.inputs import (
    BUTTON_NAMES,
    DEVICE_NAMES,
    DEVICE_STATES,
    Badge,
    ButtonPress,
    Command,
    Device,
    Event,
    TagIn,
    TagOut,
    Tick,
)

# The input types live in kernel.inputs (import them from there): this module parses
# and writes them.
__all__ = [
    "ANTENNA_RE",
    "CARD_RE",
    "COMMAND_NAMES",
    "STAFF_ROLES",
    "event_to_dict",
    "event_to_json",
    "iter_trace",
    "load_trace",
    "parse_event",
    "parse_line",
]

CARD_RE = re.compile(r"^[23456789TJQKA][cdhs]$")
ANTENNA_RE = re.compile(r"^(seat|bet)([1-9]|10)$|^(board|burn|muck|pot|register)$")

COMMAND_NAMES = frozenset(
    {
        "seat",
        "unseat",
        "level",
        "button",
        "stack",
        "pause",
        "resume",
        "penalty",
        "away",
        "staff",
        "draw",
        "hold",
        "release",
    }
)
STAFF_ROLES = frozenset({"dealer", "floor"})

_COMMAND_FIELDS: dict[str, dict[str, type]] = {
    "seat": {"seat": int, "player": str, "stack": int},
    "unseat": {"seat": int},
    "level": {"small_blind": int, "big_blind": int, "ante": int},
    "button": {"seat": int},
    "stack": {"seat": int, "stack": int},
    "pause": {},
    "resume": {},
    "penalty": {"seat": int},
    "away": {"seat": int},
    "staff": {"uid": str},
    "draw": {"purpose": str, "pick": int, "of": int},
    "hold": {},
    "release": {},
}
_COMMAND_OPTIONAL: dict[str, dict[str, type]] = {
    "level": {"level": int, "bb_ante": bool, "announced": float, "event_heads_up": bool},
    "away": {"away": bool},
    "seat": {"player_id": str},
    "pause": {"reason": str},
    "penalty": {"hands": int, "rounds": int},
    "staff": {"person": str, "role": str, "remove": bool},
    "hold": {"reason": str, "hand_for_hand": bool},
    "release": {"hand_for_hand": bool},
}
# Every command may carry a request id; the engine answers it on `replies`.
_COMMAND_COMMON: dict[str, type] = {"id": str}


def _num(obj: dict[str, Any], key: str) -> float:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TraceError(f"field {key!r} must be a finite number, got {value!r}")
    return float(value)


def _int(obj: dict[str, Any], key: str, *, required: bool = True) -> int | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TraceError(f"field {key!r} must be an integer, got {value!r}")
    return value


def _str(obj: dict[str, Any], key: str, *, required: bool = True) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise TraceError(f"field {key!r} must be a non-empty string, got {value!r}")
    return value


def _parse_tick(_obj: dict[str, Any], t: float) -> Tick:
    return Tick(t=t)


def _parse_tag(obj: dict[str, Any], t: float, cls: type[TagIn] | type[TagOut]) -> TagIn | TagOut:
    antenna = _str(obj, "antenna")
    assert antenna is not None
    if not ANTENNA_RE.match(antenna):
        raise TraceError(f"unknown antenna {antenna!r}")
    card = _str(obj, "card", required=False)
    chip = _str(obj, "chip", required=False)
    uid = _str(obj, "uid", required=False)
    value = _int(obj, "value", required=False)
    if card is not None and not CARD_RE.match(card):
        raise TraceError(f"bad card name {card!r} (rank 23456789TJQKA + suit cdhs)")
    if value is not None and value <= 0:
        raise TraceError(f"chip value must be positive, got {value}")
    if chip is not None and value is None:
        raise TraceError("a chip needs its 'value'")
    if sum(x is not None for x in (card, chip, uid)) != 1:
        raise TraceError("a tag event carries exactly one of 'card', 'chip' or 'uid'")
    return cls(t=t, antenna=antenna, card=card, chip=chip, value=value, uid=uid)


def _parse_tag_in(obj: dict[str, Any], t: float) -> TagIn | TagOut:
    return _parse_tag(obj, t, TagIn)


def _parse_tag_out(obj: dict[str, Any], t: float) -> TagIn | TagOut:
    return _parse_tag(obj, t, TagOut)


def _parse_button(obj: dict[str, Any], t: float) -> ButtonPress:
    name = _str(obj, "name")
    if name not in BUTTON_NAMES:
        raise TraceError(f"unknown button {name!r}")
    seat = _int(obj, "seat", required=name == "allin")
    return ButtonPress(t=t, name=name, seat=seat)


def _parse_badge(obj: dict[str, Any], t: float) -> Badge:
    uid = _str(obj, "uid")
    assert uid is not None
    if not re.fullmatch(r"[0-9A-Fa-f]{2,40}", uid):
        raise TraceError(f"badge uid must be hex digits, got {uid!r}")
    removed = obj.get("removed", False)
    if not isinstance(removed, bool):
        raise TraceError("field 'removed' must be true or false")
    return Badge(t=t, uid=uid.upper(), removed=removed)


def _parse_device(obj: dict[str, Any], t: float) -> Device:
    device = _str(obj, "name")
    state = _str(obj, "state")
    if device not in DEVICE_NAMES:
        raise TraceError(f"unknown device {device!r} (one of {', '.join(sorted(DEVICE_NAMES))})")
    if state not in DEVICE_STATES:
        raise TraceError(f"device state must be 'offline' or 'online', got {state!r}")
    return Device(t=t, name=device, state=state)


def _field(obj: dict[str, Any], key: str, typ: type) -> Any:
    """The value of a command field of type `typ` (int, float, str or bool); raise TraceError."""
    if typ is bool:
        value = obj.get(key)
        if not isinstance(value, bool):
            raise TraceError(f"field {key!r} must be true or false")
        return value
    if typ is int:
        return _int(obj, key)
    if typ is float:
        return _num(obj, key)
    return _str(obj, key)


def _parse_command(obj: dict[str, Any], t: float) -> Command:
    name = _str(obj, "name")
    assert name is not None
    if name not in COMMAND_NAMES:
        raise TraceError(f"unknown command {name!r}")
    required = _COMMAND_FIELDS[name]
    optional = _COMMAND_OPTIONAL.get(name, {}) | _COMMAND_COMMON
    args = {key: _field(obj, key, typ) for key, typ in required.items()}
    args.update((key, _field(obj, key, typ)) for key, typ in optional.items() if key in obj)
    unknown = sorted(set(obj) - {"t", "event", "name", *required, *optional})
    if unknown:
        raise TraceError(f"command {name!r} has no field {', '.join(map(repr, unknown))}")
    check = _COMMAND_CHECKS.get(name)
    if check is not None:
        check(args)
    return Command(t=t, name=name, args=args)


def _check_staff(args: dict[str, Any]) -> None:
    """A staff entry names a person and a role; a removal names only the badge."""
    if not re.fullmatch(r"[0-9A-F]{2,40}", str(args["uid"]).upper()):
        raise TraceError(f"staff uid must be hex digits, got {args['uid']!r}")
    args["uid"] = str(args["uid"]).upper()
    if args.get("remove"):
        if "role" in args or "person" in args:
            raise TraceError("a staff removal takes only 'uid'")
    elif "role" not in args or "person" not in args:
        raise TraceError("a staff entry needs 'person' and 'role' (or 'remove': true)")
    elif args["role"] not in STAFF_ROLES:
        raise TraceError(f"staff role must be 'dealer' or 'floor', got {args['role']!r}")


def _check_penalty(args: dict[str, Any]) -> None:
    """A penalty lasts some hands or some rounds, at least one."""
    if ("hands" in args) == ("rounds" in args):
        raise TraceError("a penalty gives exactly one of 'hands' or 'rounds'")
    if args.get("hands", 1) < 1 or args.get("rounds", 1) < 1:
        raise TraceError("a penalty is at least one hand or one round")


def _check_draw(args: dict[str, Any]) -> None:
    """A draw's pick is one of its `of` outcomes."""
    if not 0 <= args["pick"] < args["of"]:
        raise TraceError(f"draw pick {args['pick']} is not in 0..{args['of'] - 1}")


#: Commands whose fields are well typed but may still mean nothing on any table.
_COMMAND_CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "staff": _check_staff,
    "penalty": _check_penalty,
    "draw": _check_draw,
}

#: `event` -> the parser of that kind of line (after its `t` was checked).
_PARSERS: dict[str, Callable[[dict[str, Any], float], Event]] = {
    "tick": _parse_tick,
    "tag_in": _parse_tag_in,
    "tag_out": _parse_tag_out,
    "button": _parse_button,
    "badge": _parse_badge,
    "device": _parse_device,
    "command": _parse_command,
}


def parse_event(obj: Any) -> Event:
    """Validate one decoded JSON object and return the typed event; raise TraceError."""
    if not isinstance(obj, dict):
        raise TraceError(f"a trace line must be a JSON object, got {type(obj).__name__}")
    t = _num(obj, "t")
    if t < 0:
        raise TraceError(f"'t' must not be negative, got {t}")
    kind = obj.get("event")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise TraceError(f"unknown event kind {kind!r}")
    return parser(obj, t)


def parse_line(line: str) -> Event:
    """Parse one JSON Lines trace line."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise TraceError(f"not JSON: {exc.msg} at column {exc.colno}") from exc
    return parse_event(obj)


def event_to_dict(event: Event) -> dict[str, Any]:
    """The canonical trace object of an event (inverse of parse_event)."""
    out: dict[str, Any] = {"t": event.t}
    if isinstance(event, Tick):
        out["event"] = "tick"
    elif isinstance(event, TagIn | TagOut):
        out["event"] = "tag_in" if isinstance(event, TagIn) else "tag_out"
        out["antenna"] = event.antenna
        for key in ("card", "chip", "value", "uid"):
            value = getattr(event, key)
            if value is not None:
                out[key] = value
    elif isinstance(event, ButtonPress):
        out["event"] = "button"
        out["name"] = event.name
        if event.seat is not None:
            out["seat"] = event.seat
    elif isinstance(event, Badge):
        out["event"] = "badge"
        out["uid"] = event.uid
        if event.removed:
            out["removed"] = True
    elif isinstance(event, Device):
        out["event"] = "device"
        out["name"] = event.name
        out["state"] = event.state
    else:
        out["event"] = "command"
        out["name"] = event.name
        out.update(event.args)
    return out


def event_to_json(event: Event) -> str:
    """One canonical JSON Lines line (no newline) for an event."""
    return json.dumps(event_to_dict(event), separators=(",", ":"))


def iter_trace(lines: Iterable[str], *, source: str = "<trace>") -> Iterator[Event]:
    """Parse a trace; blank lines and lines starting with '#' are skipped.

    Raises TraceError naming the source and line number, and if `t` decreases.
    """
    last_t = 0.0
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            event = parse_line(line)
        except TraceError as exc:
            raise TraceError(f"{source}:{number}: {exc}") from exc
        if event.t < last_t:
            raise TraceError(f"{source}:{number}: 't' went backwards ({event.t} < {last_t})")
        last_t = event.t
        yield event


def load_trace(path: Path) -> list[Event]:
    """Read a whole trace file."""
    try:
        with path.open(encoding="utf-8") as fh:
            return list(iter_trace(fh, source=str(path)))
    except OSError as exc:
        raise TraceError(f"{path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: not UTF-8 text ({exc.reason})") from exc
