"""The TV service's TOML file (`tablectl tv --config FILE`): strict, like the table's.

Unknown keys and impossible values are refused with a message naming the file and the
key. Every key is described in docs/configuration.md (*TV production*) and docs/tv.md.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from broadcast.delay import MAX_DELAY
from controller.config import BrokerConfig
from kernel.configkit import (
    NAME_RE,
    Section,
    Where,
    existing_file,
    load_credentials,
    read_sections,
    section,
    type_name,
)
from kernel.errors import ConfigError

SECTIONS = ("tv", "broker", "tables")
DEFAULT_PORT = 8088
DEFAULT_DELAY = 30.0


@dataclass(frozen=True, slots=True)
class TvTable:
    """[[tables]]: one table on the production desk."""

    id: str
    prefix: str
    label: str | None = None


@dataclass(frozen=True, slots=True)
class TvConfig:
    """A whole TV service configuration."""

    path: Path
    delay: float
    listen: str
    port: int
    true_outs: bool
    control_token: str | None
    broker: BrokerConfig
    tables: tuple[TvTable, ...]


_TV_KEYS = ("room", "delay", "listen", "port", "true_outs", "control_token_file")
_BROKER_KEYS = (
    "host",
    "port",
    "client_id",
    "keepalive",
    "tls",
    "ca_file",
    "cert_file",
    "key_file",
    "credentials_file",
)
_TABLE_KEYS = ("id", "prefix", "label")


def load_tv_config(path: Path) -> TvConfig:
    """Read and check a TV service file; ConfigError names what is wrong."""
    data = read_sections(path, SECTIONS)
    base = path.resolve().parent
    tv = section(path, data, "tv", _TV_KEYS)
    room = tv.name("room") or "main"
    delay = tv.float_("delay", DEFAULT_DELAY)
    if not 0 <= delay <= MAX_DELAY:
        raise tv.error("delay", f"{delay:g} is out of range 0..{MAX_DELAY:g} seconds")
    listen = tv.str_("listen") or "127.0.0.1"
    try:
        ipaddress.ip_address(listen)
    except ValueError:
        if listen != "localhost":
            raise tv.error("listen", f"{listen!r} is not an IP address (or localhost)") from None
    port = tv.int_("port", DEFAULT_PORT, lo=1, hi=65535)
    true_outs = tv.bool_("true_outs", True)
    token = None
    token_file = existing_file(tv, "control_token_file", base)
    if token_file is not None:
        token = token_file.read_text(encoding="utf-8").strip()
        if len(token) < 16:
            raise tv.error("control_token_file", f"{token_file}: the token needs 16 characters")
    broker = _load_broker(path, data, base)
    tables = _load_tables(path, data, room)
    return TvConfig(
        path=path,
        delay=delay,
        listen=listen,
        port=port,
        true_outs=true_outs,
        control_token=token,
        broker=broker,
        tables=tables,
    )


def _load_broker(path: Path, data: dict[str, Any], base: Path) -> BrokerConfig:
    s = section(path, data, "broker", _BROKER_KEYS)
    host = s.str_("host", required=True)
    tls = s.bool_("tls", False)
    port = s.int_("port", 8883 if tls else 1883, lo=1, hi=65535)
    files = {k: existing_file(s, k, base) for k in ("ca_file", "cert_file", "key_file")}
    for key, value in files.items():
        if value is not None and not tls:
            raise s.error(key, "given but tls = false (set tls = true or remove it)")
    if (files["cert_file"] is None) != (files["key_file"] is None):
        missing = "key_file" if files["key_file"] is None else "cert_file"
        raise s.error(missing, "required with the other (client certificate and its key)")
    cred_path, username, password = load_credentials(s, base)
    return BrokerConfig(
        host=host,
        port=port,
        # The broker kit binds each identity to its own client id (docs/security.md).
        client_id=s.str_("client_id") or username or "tablectl-tv",
        keepalive=s.int_("keepalive", 30, lo=1, hi=65535),
        session_expiry=0,
        tls=tls,
        ca_file=files["ca_file"],
        cert_file=files["cert_file"],
        key_file=files["key_file"],
        credentials_file=cred_path,
        username=username,
        password=password,
    )


def _load_tables(path: Path, data: dict[str, Any], room: str) -> tuple[TvTable, ...]:
    raw = data.get("tables")
    if raw is None:
        raise ConfigError(f"{path}: [[tables]]: at least one table is required")
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: [[tables]] must be an array of tables, got {type_name(raw)}")
    tables: list[TvTable] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict):
            raise ConfigError(f"{path}: [[tables]] #{i + 1} must be a table")
        s = Section(Where(path, f"tables #{i + 1}"), entry, _TABLE_KEYS)
        table_id = s.name("id", required=True)
        assert table_id is not None
        if table_id in seen:
            raise s.error("id", f"table {table_id!r} is listed twice")
        seen.add(table_id)
        prefix = s.str_("prefix") or f"poker/{room}/{table_id}"
        if "+" in prefix or "#" in prefix or prefix.endswith("/"):
            raise s.error("prefix", f"{prefix!r}: no wildcard, no trailing '/'")
        label = s.str_("label")
        tables.append(TvTable(id=table_id, prefix=prefix, label=label))
    if not tables:
        raise ConfigError(f"{path}: [[tables]]: at least one table is required")
    assert all(NAME_RE.match(t.id) for t in tables)
    return tuple(tables)
