"""What the room server accepts and holds: table ids, room commands, live streams, per-table
storage, and the headers of every response (docs/room.md, *Limits*).

The room publishes nothing the broker could refuse: a command is checked here (table id,
name, size, text) before it is published, so a bad request is answered 400/404/413 and
never reaches the MQTT client, which would otherwise send it again at every reconnection.
Live streams are counted per client address and in all; a table's stored bytes are
metered per hour, and what does not fit the contract or the quota is refused, counted and
alerted, never stored whole.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import HTTPException, Request

from controller.commands import ACCEPTED_COMMANDS, MAX_PAYLOAD

#: A table id: what the tables' prefixes hold (poker/<room>/<table>); never an MQTT
#: wildcard (`+`, `#`), a level separator, a NUL or any other control character.
TABLE_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
#: A room command's name (the topic's last level).
COMMAND_NAME_RE = re.compile(r"[a-z][a-z0-9_-]{0,63}")
#: The largest command payload the room publishes: what the table accepts.
MAX_COMMAND_BYTES = MAX_PAYLOAD


def valid_table_id(table: str) -> bool:
    """True for a table id that can name a topic level of a table."""
    return TABLE_ID_RE.fullmatch(table) is not None


def table_path_ids(request: Request) -> None:
    """A route dependency: a `{table}` path parameter that cannot be a table id (a wildcard,
    a NUL, a slash ...) is answered 404 before any route looks it up."""
    table = request.path_params.get("table")
    if isinstance(table, str) and not valid_table_id(table):
        raise HTTPException(404, "no such table: a table id is letters, digits, '_', '.', '-'")


class CommandRefused(HTTPException):
    """A room command the server will not publish (HTTP status and why)."""


def command_payload(table: str, name: str, body: dict[str, Any]) -> bytes:
    """The bytes to publish on `<prefix>/<table>/cmd/<name>`; CommandRefused when the table
    id, the name or the body could not be published as it is (a name the tables do not take
    is one the broker's ACL refuses; a body the table would refuse for its size)."""
    if not valid_table_id(table):
        raise CommandRefused(404, f"no table {table!r}")
    if COMMAND_NAME_RE.fullmatch(name) is None:
        raise CommandRefused(404, "not a command name")
    if name not in ACCEPTED_COMMANDS:  # the broker's ACL lets the room write no other
        known = ", ".join(sorted(ACCEPTED_COMMANDS))
        raise CommandRefused(404, f"no command {name!r}: a table takes {known}")
    try:
        payload = json.dumps(body, ensure_ascii=True, allow_nan=False).encode("ascii")
    except (TypeError, ValueError) as exc:
        raise CommandRefused(400, f"the command body cannot be sent as JSON: {exc}") from None
    if len(payload) > MAX_COMMAND_BYTES:
        raise CommandRefused(
            413, f"command body of {len(payload)} bytes: a table takes {MAX_COMMAND_BYTES} at most"
        )
    return payload


# ---------------------------------------------------------------- live streams


@dataclass(slots=True)
class LiveLimits:
    """How many live streams: per client address and in all; how far one may fall behind."""

    per_client: int = 4
    total: int = 64
    backlog: int = 256  # committed batches waiting for a stream: past it, the stream is cut
    write_timeout: float = 15.0  # seconds a write may wait for a client that does not read


@dataclass(slots=True)
class LiveSlots:
    """The live streams open now, by client address (thread-safe)."""

    limits: LiveLimits = field(default_factory=LiveLimits)
    by_client: dict[str, int] = field(default_factory=dict)
    refused: int = 0
    cut: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, client: str) -> None:
        """Count a new stream of `client`; HTTPException 429 when a cap is reached."""
        with self._lock:
            mine = self.by_client.get(client, 0)
            if mine >= self.limits.per_client or self.open() >= self.limits.total:
                self.refused += 1
                which = "this client" if mine >= self.limits.per_client else "the server"
                cap = self.limits.per_client if which == "this client" else self.limits.total
                raise HTTPException(
                    429, f"too many live streams for {which} ({cap} at most)",
                    headers={"Retry-After": "15"},
                )  # fmt: skip
            self.by_client[client] = mine + 1

    def give(self, client: str) -> None:
        """A stream of `client` ended."""
        with self._lock:
            left = self.by_client.get(client, 0) - 1
            if left > 0:
                self.by_client[client] = left
            else:
                self.by_client.pop(client, None)

    def open(self) -> int:
        """Streams open now."""
        return sum(self.by_client.values())


# ---------------------------------------------------------------- per-table storage


@dataclass(slots=True)
class TableQuota:
    """Bytes a table may have stored per hour, and how many refused messages are kept (as
    an excerpt) per table per hour; past them, messages are counted, not stored."""

    bytes_per_hour: int = 64 * 1024 * 1024
    rejected_kept_per_hour: int = 100
    excerpt: int = 256  # bytes of a refused message kept, base64 in the `rejected` table


@dataclass(slots=True)
class _Meter:
    window: int  # the hour (epoch seconds // 3600)
    stored: int = 0
    kept_rejected: int = 0
    over: int = 0
    rejected: int = 0
    alerted_over: bool = False
    alerted_rejected: bool = False


class QuotaMeter:
    """Per table and per hour: bytes stored, refusals kept and counted (one writer thread)."""

    def __init__(self, quota: TableQuota | None = None, clock: Callable[[], float] = time.time):
        self.quota = quota or TableQuota()
        self.clock = clock
        self._meters: dict[str, _Meter] = {}
        self.totals = {"over_quota": 0, "rejected": 0, "rejected_not_kept": 0}

    def _meter(self, table: str) -> _Meter:
        window = int(self.clock() // 3600)
        meter = self._meters.get(table)
        if meter is None or meter.window != window:
            meter = self._meters[table] = _Meter(window)
        return meter

    def fits(self, table: str, size: int) -> bool:
        """True (and counted) if `size` more bytes of `table` fit this hour's quota."""
        meter = self._meter(table)
        if meter.stored + size > self.quota.bytes_per_hour:
            meter.over += 1
            self.totals["over_quota"] += 1
            return False
        meter.stored += size
        return True

    def keep_rejected(self, table: str) -> bool:
        """Count a refused message of `table`; True while this hour's excerpts are kept."""
        meter = self._meter(table)
        meter.rejected += 1
        self.totals["rejected"] += 1
        if meter.kept_rejected >= self.quota.rejected_kept_per_hour:
            self.totals["rejected_not_kept"] += 1
            return False
        meter.kept_rejected += 1
        return True

    def alert_over(self, table: str) -> int | None:
        """The messages refused over quota this hour, once per table and hour (else None)."""
        meter = self._meter(table)
        if meter.over and not meter.alerted_over:
            meter.alerted_over = True
            return meter.over
        return None

    def alert_rejected(self, table: str) -> int | None:
        """The refused messages this hour, once per table and hour, once they are no longer
        all kept (else None)."""
        meter = self._meter(table)
        if meter.rejected > self.quota.rejected_kept_per_hour and not meter.alerted_rejected:
            meter.alerted_rejected = True
            return meter.rejected
        return None


# ---------------------------------------------------------------- response headers

#: Sent with every response: no framing by another site, no MIME sniffing, no referrer to
#: other sites, and a policy that loads scripts, styles, fonts and images from this server
#: only (the monitor uses no inline script or CDN).
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        b"form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


class SecurityHeaders:
    """ASGI middleware: SECURITY_HEADERS on every HTTP response (unless a route set one)."""

    def __init__(self, app: App, headers: tuple[tuple[bytes, bytes], ...] = SECURITY_HEADERS):
        self.app = app
        self.headers = headers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _v in message.get("headers", [])}
                extra = [(k, v) for k, v in self.headers if k not in present]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)
