"""Room commands from MQTT `cmd/<name>`: checked here, before the daemon queues them."""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.resend import RESEND, ResendRequest, check_resend
from controller.text import is_unicode, text_problem
from controller.trace import (
    _COMMAND_COMMON,
    _COMMAND_FIELDS,
    _COMMAND_OPTIONAL,
    CARD_RE,
    COMMAND_NAMES,
    parse_event,
)
from kernel.errors import TraceError
from kernel.inputs import Command

#: The largest payload accepted on `cmd/<name>`, in bytes.
MAX_PAYLOAD = 8 * 1024
#: The longest request id accepted (it is echoed in the reply).
MAX_ID = 128
#: Commands the table makes for itself (journaled) and never takes from the room.
INTERNAL_COMMANDS = frozenset({"draw"})
#: Commands the room server may send.
ROOM_COMMANDS = COMMAND_NAMES - INTERNAL_COMMANDS
#: Every name the table takes on `cmd/<name>`: the room commands and `resend` (answered
#: from the journal). The broker's ACL lets the room write exactly these topics and no other
#: (examples/mosquitto/acl; tests/unit/test_acl.py keeps the two the same).
ACCEPTED_COMMANDS = ROOM_COMMANDS | {RESEND}
#: Seats are numbered 1..10 on every table (docs/configuration.md, [table] seats).
SEAT_RANGE = (1, 10)
#: Chip amounts and counts: not negative, and exact in any JSON consumer (2**53 - 1).
AMOUNT_RANGE = (0, 2**53 - 1)
#: Fields the table sets itself; a room payload carrying them is refused.
TABLE_FIELDS = ("t", "event")
#: What a topic's command name must look like to be echoed in replies and alerts.
COMMAND_NAME_RE = re.compile(r"[a-z][a-z0-9_/-]{0,63}")
#: The command name echoed for a topic whose name is not shaped like a command name.
UNKNOWN_COMMAND = "<unknown>"

_TYPE_NAMES = {
    int: "an integer",
    float: "a number",
    str: "a non-empty string",
    bool: "true or false",
}


class CommandError(TraceError):
    """A room command refused before the engine; `request_id` is the payload's string `id`."""

    def __init__(self, message: str, request_id: str | None = None) -> None:
        super().__init__(message)
        self.request_id = request_id


def _json_kind(value: Any) -> str:
    """The JSON name of a decoded value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _shown(value: Any) -> str:
    """A short JSON rendering of a field value for an error message, in ASCII (escapes for
    anything else, so a lone surrogate or control character is shown, never sent)."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 40 else text[:37] + "..."


def command_label(name: str) -> str:
    """The topic's command name as replies and alerts echo it: the name itself when it is
    shaped like a command name (COMMAND_NAME_RE), else UNKNOWN_COMMAND, so a topic such as
    `cmd/As` never puts a card-shaped or unprintable string on a public topic."""
    return name if COMMAND_NAME_RE.fullmatch(name) else UNKNOWN_COMMAND


def _holds_non_unicode(value: Any) -> bool:
    """True if a string anywhere in the decoded JSON `value` (keys included) is not UTF-8
    encodable (a lone surrogate)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not is_unicode(item):
                return True
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
    return False


def _check_unicode(obj: dict[str, Any], request_id: str | None) -> None:
    """Refuse a payload holding a string that cannot be published (lone surrogate)."""
    for key, value in obj.items():
        if not is_unicode(key):
            raise CommandError(
                f"field name {_shown(key)} is not Unicode text "
                "(a lone surrogate: a \\uD800-\\uDFFF escape without its pair)",
                request_id,
            )
        if _holds_non_unicode(value):
            raise CommandError(
                f"field {key!r} holds text that is not Unicode "
                "(a lone surrogate: a \\uD800-\\uDFFF escape without its pair)",
                request_id,
            )


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _decode(payload: bytes) -> Any:
    if len(payload) > MAX_PAYLOAD:
        raise CommandError(f"payload too large: {len(payload)} bytes (at most {MAX_PAYLOAD})")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"payload is not UTF-8 text ({exc.reason})") from exc
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise CommandError(f"not JSON: {exc.msg} at column {exc.colno}") from exc
    except ValueError as exc:
        raise CommandError(f"not JSON: {exc}") from exc
    except RecursionError as exc:
        raise CommandError("not JSON: nested too deeply") from exc


def _well_typed(value: Any, typ: type) -> bool:
    """True if the decoded JSON `value` is of the trace field type `typ` (never a bool for
    a number)."""
    if typ is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if typ is int:
        return isinstance(value, int)
    if typ is float:  # an int of any size is a number (the range check refuses a huge one)
        return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))
    if typ is str:
        return isinstance(value, str) and value != ""
    return True  # a type this shell does not know: the trace parser checks it


def _check_type(name: str, key: str, value: Any, typ: type, request_id: str | None) -> None:
    if not _well_typed(value, typ):
        raise CommandError(
            f"command {name!r}: field {key!r} must be {_TYPE_NAMES.get(typ, typ.__name__)}, "
            f"got {_json_kind(value)} ({_shown(value)})",
            request_id,
        )
    if typ in (int, float):
        low, high = SEAT_RANGE if key == "seat" else AMOUNT_RANGE
        if not low <= value <= high:
            raise CommandError(
                f"command {name!r}: field {key!r} must be in {low}..{high}, got {_shown(value)}",
                request_id,
            )
    if typ is str:
        problem = text_problem(value)
        if problem is not None:
            raise CommandError(f"command {name!r}: field {key!r} {problem}", request_id)


def _request_id(obj: dict[str, Any]) -> str | None:
    """The payload's request id when it is a usable string, else None (and no echo).

    Usable: 1..MAX_ID printable characters (so no lone surrogate), not a card name.
    """
    value = obj.get("id")
    if not isinstance(value, str) or not value:
        return None
    if len(value) > MAX_ID or not value.isprintable() or CARD_RE.fullmatch(value):
        return None
    return value


def _decode_object(payload: bytes) -> tuple[dict[str, Any], str | None]:
    """A command payload's JSON object and its request id; raise CommandError if the payload
    is not an object, its `id` is malformed or its text is not publishable."""
    obj = _decode(payload)
    if not isinstance(obj, dict):
        raise CommandError(f"a command must be a JSON object, got {_json_kind(obj)}")
    request_id = _request_id(obj)
    if "id" in obj and request_id is None:
        value = obj["id"]
        raise CommandError(
            f"field 'id' must be a printable string of 1..{MAX_ID} characters that is not "
            f"a card name, got {_json_kind(value)} ({_shown(value)})"
        )
    _check_unicode(obj, request_id)
    return obj, request_id


def parse_room_command(
    name: str, payload: bytes, *, t: float, next_id: Callable[[], str]
) -> Command:
    """The `Command` for a payload received on `cmd/<name>`; raise CommandError if malformed.

    The payload is the trace `command` line without `t` and `event`; `name` may be left
    out (the topic gives it). A payload without `id` is given `next_id()`, so the engine
    answers every room command on `replies`. `draw` is the table's own random draw and is
    refused from the room, like any unknown command.
    """
    obj, request_id = _decode_object(payload)
    if name in INTERNAL_COMMANDS:
        raise CommandError(
            f"command {name!r} is internal to the table (its own random draw) "
            "and is not accepted from the room",
            request_id,
        )
    if name not in ROOM_COMMANDS:
        known = ", ".join(sorted(ROOM_COMMANDS))
        if command_label(name) == UNKNOWN_COMMAND:
            raise CommandError(
                f"unknown command: the topic's name ({len(name)} characters) is not a command "
                f"name (one of {known})",
                request_id,
            )
        raise CommandError(f"unknown command {name!r} (one of {known})", request_id)
    said = obj.get("name", name)
    if said != name:
        raise CommandError(f"topic says {name!r} but payload says {_shown(said)}", request_id)
    for key in TABLE_FIELDS:
        if key in obj:
            raise CommandError(f"field {key!r} is set by the table, not by the room", request_id)
    required = _COMMAND_FIELDS[name]
    optional = _COMMAND_OPTIONAL.get(name, {}) | _COMMAND_COMMON
    unknown = sorted(set(obj) - {"name", *required, *optional})
    if unknown:
        takes = ", ".join(repr(k) for k in [*required, *optional]) or "no field"
        raise CommandError(
            f"command {name!r} has no field {', '.join(map(repr, unknown))} (it takes {takes})",
            request_id,
        )
    missing = [key for key in required if key not in obj]
    if missing:
        raise CommandError(
            f"command {name!r} needs field {', '.join(map(repr, missing))}", request_id
        )
    for key, typ in (required | optional).items():
        if key in obj:
            _check_type(name, key, obj[key], typ, request_id)
    line = {k: v for k, v in obj.items() if k != "name"}
    line |= {"t": t, "event": "command", "name": name}
    try:
        event = parse_event(line)
    except TraceError as exc:
        raise CommandError(str(exc), request_id) from exc
    if not isinstance(event, Command):  # pragma: no cover - the line says "command"
        raise CommandError(f"not a command: {event!r}", request_id)
    if request_id is None:  # only a valid command uses up an automatic id
        event = Command(t=event.t, name=event.name, args={**event.args, "id": next_id()})
    return event


def parse_resend(payload: bytes) -> ResendRequest:
    """The request in a payload received on `cmd/resend`; raise CommandError if malformed.

    `resend` is answered by the daemon's shell from the journal (controller/resend.py), not
    applied by the engine: it is not an input and is not journaled, only its reply is.
    """
    obj, request_id = _decode_object(payload)
    try:
        return check_resend(obj, request_id)
    except ValueError as exc:
        raise CommandError(str(exc), request_id) from exc


# ---------------------------------------------------------------- rate limits


@dataclass(frozen=True, slots=True)
class Bucket:
    """A token bucket: `burst` at once, then `rate` a second."""

    rate: float
    burst: float


#: Room commands: a tournament's start seats a whole table and sets its level at once (a
#: dozen), the staff sync sends one per badge; past 50 at once, 10 a second.
COMMAND_BUCKET = Bucket(rate=10.0, burst=50.0)
#: `resend`, counted in events asked for: two full ranges (MAX_RANGE) at once, then 2,000
#: events a second. Reading and publishing a full range again costs the table's loop about
#: 0.4 s on a Pi; twenty of them back to back stalled a dealing table for 8 s.
RESEND_BUCKET = Bucket(rate=2_000.0, burst=20_000.0)
#: How long one alert about refused commands stands for the ones that follow it.
RATE_ALERT_EVERY = 60.0


@dataclass(frozen=True, slots=True)
class RateRefusal:
    """Why a room command is refused for its rate, and whether to raise the alert now."""

    error: str
    alert: bool
    refused: int  # refused since the last alert (this one included)


class AlertThrottle:
    """One alert every `every` seconds stands for the refusals that follow it: `note()`
    counts a refusal and says whether to raise the alert now, and for how many. The clock is
    the machine's (monotonic). Thread-safe."""

    def __init__(
        self, every: float = RATE_ALERT_EVERY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._every = every
        self._clock = clock
        self._alerted_at: float | None = None
        self._since_alert = 0
        self._lock = threading.Lock()

    def note(self) -> tuple[bool, int]:
        """Count one refusal: (raise the alert now?, refusals it stands for, this one
        included; when no alert is due, the refusals counted since the last one)."""
        with self._lock:
            now = self._clock()
            self._since_alert += 1
            refused = self._since_alert
            alert = self._alerted_at is None or now - self._alerted_at >= self._every
            if alert:
                self._alerted_at = now
                self._since_alert = 0
            return alert, refused


class CommandRateLimit:
    """The table's rate limits on room commands and on `resend` (docs/mqtt.md, *Room
    commands*): a command past its bucket is refused with an `ok: false` reply (journaled
    like every reply), and one `commands_rate_limited` alert a minute says how many were.
    The clock is the machine's (monotonic), not the engine's: a flood is a matter of real
    time. Thread-safe (the MQTT thread checks, the tests read)."""

    def __init__(
        self,
        *,
        commands: Bucket = COMMAND_BUCKET,
        resend: Bucket = RESEND_BUCKET,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._buckets = {"commands": commands, "resend": resend}
        self._clock = clock
        now = clock()
        self._level = {k: b.burst for k, b in self._buckets.items()}
        self._at = dict.fromkeys(self._buckets, now)
        self._alerts = AlertThrottle(clock=clock)
        self._lock = threading.Lock()
        self.refused = {"commands": 0, "resend": 0}

    def admit(self, name: str, cost: float = 1.0) -> RateRefusal | None:
        """None if command `name` (`resend`: `cost` events) may go ahead, else the refusal."""
        kind = "resend" if name == RESEND else "commands"
        bucket = self._buckets[kind]
        with self._lock:
            now = self._clock()
            level = min(bucket.burst, self._level[kind] + (now - self._at[kind]) * bucket.rate)
            self._at[kind] = now
            cost = min(cost, bucket.burst)  # a request as large as the burst can always pass
            if level >= cost:
                self._level[kind] = level - cost
                return None
            self._level[kind] = level
            self.refused[kind] += 1
            wait = (cost - level) / bucket.rate
        alert, refused = self._alerts.note()
        unit = "events of resend" if kind == "resend" else "room commands"
        what = f"{bucket.burst:g} at once, then {bucket.rate:g} a second"
        return RateRefusal(
            f"rate limited: at most {what} {unit}; send it again in {max(wait, 0.1):.1f} s",
            alert,
            refused,
        )


# ---------------------------------------------------------------- retained commands

#: Why a command that came with the MQTT retain flag is refused.
RETAINED_ERROR = (
    "retained: a command published with retain is kept by the broker and sent again to "
    "every new subscriber, so the table never applies one; publish commands with retain "
    "false, and clear this one with an empty retained message on its topic"
)


@dataclass(frozen=True, slots=True)
class RetainedRefusal:
    """A retained room command refused: its request id (for the reply, when the payload
    has a usable one), why, and whether to raise the alert now (and for how many)."""

    request_id: str | None
    error: str
    alert: bool
    refused: int


class RetainedCommands:
    """The table never acts on a retained room command (docs/mqtt.md, *Room commands*).

    The table subscribes to `cmd/#` with MQTT v5 Retain As Published, so a command arrives
    with the retain flag exactly when the broker keeps it: a copy left on the broker (sent
    at a new subscription) or one published with retain now. Either way it is not a live
    request of the room server, which never retains: it is refused with an `ok: false`
    reply (journaled like every reply), and one `command_retained` alert a minute says how
    many were. An empty retained message is the clearing of one (the broker deletes what it
    kept): nothing to answer. Thread-safe (the MQTT thread refuses, the tests read)."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._alerts = AlertThrottle(clock=clock)
        self._lock = threading.Lock()
        self.refused = 0
        self.cleared = 0

    def refuse(self, payload: bytes) -> RetainedRefusal | None:
        """The refusal of a retained command with `payload`; None for an empty payload (a
        retained command cleared: not a command, nothing to answer)."""
        if not payload:
            with self._lock:
                self.cleared += 1
            return None
        with self._lock:
            self.refused += 1
        try:
            _, request_id = _decode_object(payload)
        except CommandError as exc:  # answered all the same, with the id when it has one
            request_id = exc.request_id
        alert, refused = self._alerts.note()
        return RetainedRefusal(request_id, RETAINED_ERROR, alert, refused)
