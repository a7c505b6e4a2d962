"""The tables of `tablectl sim --tables N`: each its own id, topics, identity and journal."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from controller.config import Config
from controller.errors import ConfigError

#: The most tables one `tablectl sim` runs (each has two reader-board simulators on ptys).
MAX_TABLES = 64

_NUMBERED = re.compile(r"^(?P<stem>.*?)(?P<number>[0-9]+)$")


def table_id(base: str, index: int) -> str:
    """The id of the `index`th table (0: `base` itself): a numbered id counts on, keeping
    its width (t01, t02, ...); any other gets a suffix (bar, bar-2, bar-3, ...)."""
    if index == 0:
        return base
    found = _NUMBERED.match(base)
    if found is None:
        return f"{base}-{index + 1}"
    number = found["number"]
    return f"{found['stem']}{int(number) + index:0{len(number)}d}"


def table_config(config: Config, index: int, journal: Path | None) -> Config:
    """The configuration of the `index`th simulated table: its id, its topic prefix (the
    base table's last level replaced), its MQTT identity (the base id in it replaced) and
    `journal` (a file of its own; None keeps the configured one, for table 0 only)."""
    if index > 0 and journal is None:
        raise ConfigError("every simulated table but the first needs a journal of its own")
    base, new = config.table.id, table_id(config.table.id, index)
    broker = config.broker
    parent, _, last = broker.prefix.rpartition("/")
    prefix = f"{parent}/{new}" if last == base and parent else f"{broker.prefix}-{new}"
    if base in broker.client_id:
        client_id = broker.client_id.replace(base, new)
    else:
        client_id = f"{broker.client_id}-{new}"
    if index == 0:
        prefix, client_id = broker.prefix, broker.client_id
    cfg = dataclasses.replace(
        config,
        table=dataclasses.replace(config.table, id=new),
        broker=dataclasses.replace(broker, prefix=prefix, client_id=client_id),
    )
    if journal is None:
        return cfg
    return dataclasses.replace(
        cfg, journal=dataclasses.replace(cfg.journal, path=journal, directory=None)
    )
