"""The room server's TOML file, validated like a table's: an unknown key stops it, named."""

from __future__ import annotations

import datetime
import os
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernel.configkit import (
    NAME_RE,
    existing_file,
    load_credentials,
    read_sections,
    resolve,
    section,
)

SECTIONS = ("room", "broker", "database", "http", "gaps", "stats", "monitor", "keys", "tournament")


@dataclass(frozen=True, slots=True)
class TournamentSettings:
    """[tournament] of the room server's file: the event file and where its journal is."""

    file: Path
    journal: Path
    seed: int | None = None  # None: drawn once, kept in the journal
    time_scale: float = 1.0  # the clock runs this many times real time (rehearsals, the sim)


@dataclass(frozen=True, slots=True)
class Shift:
    """A named shift starting at a local time of day; it ends where the next one starts."""

    name: str
    start: datetime.time


@dataclass(frozen=True, slots=True)
class RoomBroker:
    """[broker]: the room's MQTT broker, reached as the `room` identity."""

    host: str = "127.0.0.1"
    port: int = 1883
    tls: bool = False
    ca_file: Path | None = None
    credentials_file: Path | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    client_id: str = ""  # default: the username (its identity), else tablectl-room-<room>
    keepalive: int = 30
    session_expiry: int = 7 * 86400  # the broker queues events this long while we are away


@dataclass(frozen=True, slots=True)
class DatabaseConfig:
    """[database]: where the rows go; SQLite by default, PostgreSQL by URL."""

    url: str = "sqlite:///room.db"
    batch_size: int = 500  # messages per transaction at most
    batch_ms: int = 50  # a transaction waits this long for more messages at most

    @property
    def is_postgres(self) -> bool:
        """True for a `postgresql://` (or `postgres://`) URL."""
        return self.url.startswith(("postgresql://", "postgres://"))

    @property
    def sqlite_path(self) -> Path:
        """The SQLite file of a `sqlite:///PATH` URL (four slashes: an absolute path)."""
        return Path(self.url.removeprefix("sqlite:///"))


@dataclass(frozen=True, slots=True)
class HttpConfig:
    """[http]: the JSON API and pages."""

    host: str = "127.0.0.1"
    port: int = 8080
    token: str | None = field(default=None, repr=False)  # from token_file; None: no commands
    token_file: Path | None = None
    command_timeout: float = 10.0  # seconds a command waits for the table's reply


@dataclass(frozen=True, slots=True)
class GapsConfig:
    """[gaps]: holes in a table's seq, asked for again with `resend`."""

    grace: float = 2.0  # a hole this old is asked for (late copies may still be arriving)
    retry: float = 15.0  # asked again after this long without the events
    backfill: bool = True  # a table seen for the first time: ask for its events from seq 1


@dataclass(frozen=True, slots=True)
class StatsConfig:
    """[stats]: the room's clock and shifts, for statistics by day and by shift."""

    timezone: str = "UTC"
    shifts: tuple[Shift, ...] = (Shift("day", datetime.time(0, 0)),)


@dataclass(frozen=True, slots=True)
class MonitorConfig:
    """[monitor]: the floor's pages."""

    stalled_after: float = 180.0  # seconds without an event in a hand: a STALLED HAND banner


@dataclass(frozen=True, slots=True)
class KeysConfig:
    """[keys]: the tables' public keys, checked against every signed chain (room/chain.py)."""

    directory: Path | None = None  # `<table>.pub` per table (`tablectl keygen` makes them)


@dataclass(frozen=True, slots=True)
class RoomConfig:
    """A whole room server file."""

    path: Path
    name: str
    broker: RoomBroker
    database: DatabaseConfig
    http: HttpConfig
    gaps: GapsConfig
    stats: StatsConfig
    monitor: MonitorConfig = MonitorConfig()
    keys: KeysConfig = KeysConfig()
    tournament: TournamentSettings | None = None  # [tournament]: docs/tournament.md

    @property
    def topic_filter(self) -> str:
        """What the server subscribes to: every table of the room."""
        return f"poker/{self.name}/+/#"


def _room(path: Path, data: dict[str, Any]) -> str:
    s = section(path, data, "room", ("name",))
    name = s.name("name", required=True)
    assert name is not None
    return name


def _broker(path: Path, data: dict[str, Any], base: Path, name: str) -> RoomBroker:
    s = section(
        path,
        data,
        "broker",
        (
            "host",
            "port",
            "tls",
            "ca_file",
            "credentials_file",
            "client_id",
            "keepalive",
            "session_expiry",
        ),
    )
    d = RoomBroker()
    tls = s.bool_("tls", d.tls)
    ca_file = existing_file(s, "ca_file", base)
    if ca_file is not None and not tls:
        raise s.error("ca_file", "given but tls = false (set tls = true or remove it)")
    cred, username, password = load_credentials(s, base)
    return RoomBroker(
        host=s.str_("host") or d.host,
        port=s.int_("port", 8883 if tls else d.port, lo=1, hi=65535),
        tls=tls,
        ca_file=ca_file,
        credentials_file=cred,
        username=username,
        password=password,
        # The broker kit binds each identity to its own client id (docs/security.md).
        client_id=s.str_("client_id") or username or f"tablectl-room-{name}",
        keepalive=s.int_("keepalive", d.keepalive, lo=1, hi=65535),
        session_expiry=s.int_("session_expiry", d.session_expiry, lo=0, hi=30 * 86400),
    )


def _database(path: Path, data: dict[str, Any], base: Path) -> DatabaseConfig:
    s = section(path, data, "database", ("url", "path", "batch_size", "batch_ms"))
    d = DatabaseConfig()
    url = s.str_("url")
    file = s.str_("path")
    if url is not None and file is not None:
        raise s.error("path", "give either url (PostgreSQL) or path (SQLite), not both")
    if url is not None and not url.startswith(("postgresql://", "postgres://", "sqlite:///")):
        raise s.error("url", f"{url!r}: expected postgresql://... or sqlite:///PATH")
    if url is None:
        url = f"sqlite:///{resolve(base, file or 'room.db')}"
    return DatabaseConfig(
        url=url,
        batch_size=s.int_("batch_size", d.batch_size, lo=1, hi=100_000),
        batch_ms=s.int_("batch_ms", d.batch_ms, lo=0, hi=10_000),
    )


def _http(path: Path, data: dict[str, Any], base: Path) -> HttpConfig:
    s = section(path, data, "http", ("host", "port", "token_file", "command_timeout"))
    d = HttpConfig()
    token_file = existing_file(s, "token_file", base)
    token: str | None = None
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise s.error("token_file", f"{token_file}: {exc}") from None
        if len(token) < 16 or any(c.isspace() for c in token):
            raise s.error(
                "token_file", f"{token_file}: the token must be 16+ characters, no spaces"
            )
    timeout = s.float_("command_timeout", d.command_timeout)
    if not 0 < timeout <= 300:
        raise s.error("command_timeout", f"must be in (0, 300] seconds, got {timeout:g}")
    return HttpConfig(
        host=s.str_("host") or d.host,
        port=s.int_("port", d.port, lo=0, hi=65535),
        token=token,
        token_file=token_file,
        command_timeout=timeout,
    )


def _gaps(path: Path, data: dict[str, Any]) -> GapsConfig:
    s = section(path, data, "gaps", ("grace", "retry", "backfill"))
    d = GapsConfig()
    grace = s.float_("grace", d.grace)
    retry = s.float_("retry", d.retry)
    if not 0 <= grace <= 3600:
        raise s.error("grace", f"must be in [0, 3600] seconds, got {grace:g}")
    if not 0.1 <= retry <= 86400:
        raise s.error("retry", f"must be in [0.1, 86400] seconds, got {retry:g}")
    return GapsConfig(grace=grace, retry=retry, backfill=s.bool_("backfill", d.backfill))


def _monitor(path: Path, data: dict[str, Any]) -> MonitorConfig:
    s = section(path, data, "monitor", ("stalled_after",))
    stalled = s.float_("stalled_after", MonitorConfig().stalled_after)
    if not 10 <= stalled <= 86400:
        raise s.error("stalled_after", f"must be in [10, 86400] seconds, got {stalled:g}")
    return MonitorConfig(stalled_after=stalled)


def _stats(path: Path, data: dict[str, Any]) -> StatsConfig:
    s = section(path, data, "stats", ("timezone", "shifts"))
    tz = s.str_("timezone") or "UTC"
    try:
        zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise s.error("timezone", f"{tz!r} is not an IANA time zone (e.g. Europe/Rome)") from None
    raw = s.table("shifts")
    if raw is None:
        return StatsConfig(timezone=tz)
    shifts: list[Shift] = []
    for name, start in raw.items():
        if not NAME_RE.match(name):
            raise s.error(f"shifts.{name}", "only letters, digits, '_' and '-' are allowed")
        if not isinstance(start, str):
            raise s.error(f"shifts.{name}", 'expected a time of day as a string, e.g. "18:00"')
        try:
            when = datetime.time.fromisoformat(start)
        except ValueError:
            raise s.error(f"shifts.{name}", f"{start!r} is not a time of day (HH:MM)") from None
        shifts.append(Shift(name, when))
    if not shifts:
        raise s.error("shifts", 'give at least one shift, e.g. day = "10:00"')
    starts = [sh.start for sh in shifts]
    if len(set(starts)) != len(starts):
        raise s.error("shifts", "two shifts start at the same time")
    return StatsConfig(timezone=tz, shifts=tuple(sorted(shifts, key=lambda sh: sh.start)))


def _keys(path: Path, data: dict[str, Any], base: Path) -> KeysConfig:
    s = section(path, data, "keys", ("directory",))
    value = s.str_("directory")
    if value is None:
        return KeysConfig()
    directory = resolve(base, value)
    if not directory.is_dir():
        raise s.error("directory", f"{directory} is not a directory")
    return KeysConfig(directory=directory)


def _tournament(path: Path, data: dict[str, Any], base: Path) -> TournamentSettings | None:
    if "tournament" not in data:
        return None
    s = section(path, data, "tournament", ("file", "journal", "seed", "time_scale"))
    file = existing_file(s, "file", base)
    if file is None:
        raise s.error("file", "missing (required): the tournament file (docs/tournament.md)")
    journal = resolve(base, s.str_("journal") or f"{file.stem}.journal.jsonl")
    seed = s.int_("seed", -1, lo=-1)
    scale = s.float_("time_scale", 1.0)
    if not 0 < scale <= 1000:
        raise s.error("time_scale", f"must be in (0, 1000], got {scale:g}")
    return TournamentSettings(file, journal, None if seed < 0 else seed, scale)


def load_room_config(path: Path) -> RoomConfig:
    """Read and validate a room server's TOML file; ConfigError naming the file and key."""
    path = Path(path)
    data = read_sections(path, SECTIONS)
    base = Path(os.path.abspath(path)).parent
    name = _room(path, data)
    return RoomConfig(
        path=Path(os.path.abspath(path)),
        name=name,
        broker=_broker(path, data, base, name),
        database=_database(path, data, base),
        http=_http(path, data, base),
        gaps=_gaps(path, data),
        stats=_stats(path, data),
        monitor=_monitor(path, data),
        keys=_keys(path, data, base),
        tournament=_tournament(path, data, base),
    )
