"""The shipped broker ACL (examples/mosquitto/acl) against the table's own lists: the room
may write exactly the commands a table takes, TV exactly its requests, a table exactly its
outputs, and no identity may write a wildcard (what it leaves retained is bounded)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from controller.commands import ACCEPTED_COMMANDS, COMMAND_NAMES
from controller.config import load_config
from controller.daemon import Daemon
from controller.holeresend import KINDS
from controller.items import FromRoom, RefusedCommand
from controller.resend import ResendRequest
from kernel.inputs import Command
from kernel.messages import (
    ALERTS,
    EVENTS,
    HOLECARDS,
    HOLEKEYS,
    RELEASED,
    REPLIES,
    STATE,
    STATUS,
)
from tests.broker import EXAMPLE_ACL, ROOT

EXAMPLE = ROOT / "examples" / "sim-table.toml"
ROOM = "sim"  # the room the shipped ACL is written for
#: Everything a table daemon publishes (kernel/messages.py).
TABLE_OUTPUTS = {STATUS, STATE, EVENTS, HOLECARDS, ALERTS, REPLIES, HOLEKEYS, RELEASED}


def grants(acl: Path) -> dict[str, dict[str, set[str]]]:
    """user -> access (read, write, deny) -> topics, as mosquitto's acl_file reads it: a
    `user` line starts (or continues) that user's grants; `topic <access> <topic>`, or
    `topic <topic>` for readwrite. Fails on anything else (a `pattern` line, say)."""
    out: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    user: str | None = None
    for number, line in enumerate(acl.read_text().splitlines(), 1):
        words = line.split("#", 1)[0].split() if not line.lstrip().startswith("#") else []
        if not words:
            continue
        if words[0] == "user" and len(words) == 2:
            user = words[1]
        elif words[0] == "topic" and user is not None and len(words) in (2, 3):
            access, topic = ("readwrite", words[1]) if len(words) == 2 else words[1:]
            for kind in ("read", "write") if access == "readwrite" else (access,):
                out[user][kind].add(topic)
        else:
            pytest.fail(f"{acl.name} line {number}: not understood here: {line!r}")
    return out


def tables(acl: dict[str, dict[str, set[str]]]) -> set[str]:
    """The table ids of the ACL: one `table-<id>` identity each."""
    return {user.removeprefix("table-") for user in acl if user.startswith("table-")}


def test_the_room_may_write_exactly_the_commands_the_table_takes() -> None:
    """Built from the table's own list (controller/commands.py, ACCEPTED_COMMANDS: every
    trace command the room may send, plus resend), so a command added to the table and not
    to the ACL fails here, as does a line the table would refuse."""
    acl = grants(EXAMPLE_ACL)
    assert tables(acl) == {"t01"}
    want = {f"poker/{ROOM}/{t}/cmd/{name}" for t in tables(acl) for name in ACCEPTED_COMMANDS}
    assert acl["room"]["write"] == want


def test_tv_and_each_table_write_exactly_their_own_topics() -> None:
    acl = grants(EXAMPLE_ACL)
    tv = {f"poker/{ROOM}/{t}/tvreq/{kind}" for t in tables(acl) for kind in KINDS}
    assert acl["tv"]["write"] == tv
    for table in tables(acl):
        own = {f"poker/{ROOM}/{table}/{topic}" for topic in TABLE_OUTPUTS}
        assert acl[f"table-{table}"]["write"] == own


def test_no_identity_may_write_a_wildcard_so_what_it_retains_is_bounded() -> None:
    """mosquitto 2.0.11 cannot limit retained messages: each write grant names one topic, so
    an identity can leave at most one retained message (64 KiB at most) on each."""
    acl = grants(EXAMPLE_ACL)
    for user, access in acl.items():
        for topic in access["write"]:
            assert not {"+", "#"} & set(topic.split("/")), (user, topic)
            assert topic.startswith(f"poker/{ROOM}/"), (user, topic)
    per_table = len(TABLE_OUTPUTS) + len(ACCEPTED_COMMANDS) + len(KINDS)
    written = sum(len(access["write"]) for access in acl.values())
    assert written == per_table * len(tables(acl))


def _schema_names() -> set[str]:
    schema = json.loads((ROOT / "controller" / "schemas" / "command.json").read_text())
    return set(schema["properties"]["name"]["enum"])


def _documented_names() -> set[str]:
    """The command names of docs/mqtt.md's table of room commands."""
    text = (ROOT / "docs" / "mqtt.md").read_text()
    section = text.split("## Room commands", 1)[1].split("\n### ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)` \|", section, re.MULTILINE))


def _taken(daemon: Daemon, name: str) -> Any:
    """What the daemon queues for `cmd/<name>` with an empty JSON object."""
    daemon.commands.submit(name, b"{}", lambda: None)
    item = daemon.queue.get_nowait()
    return item.item if isinstance(item, FromRoom) else item


def test_the_table_takes_exactly_the_names_of_the_acl_the_schema_and_the_docs(
    tmp_path: Path,
) -> None:
    """Every name the table's code knows, the schema and the docs list: the daemon takes it
    (a command, a resend, or a refusal for its fields) if and only if it is one of
    ACCEPTED_COMMANDS, which is what the ACL grants."""
    candidates = (
        set(COMMAND_NAMES) | ACCEPTED_COMMANDS | _schema_names() | _documented_names()
    ) | {"flush", "hold", "release", "debug"}
    assert _schema_names() == ACCEPTED_COMMANDS
    assert _documented_names() == ACCEPTED_COMMANDS
    daemon = Daemon(load_config(EXAMPLE), clock=lambda: 1_700_000_000.0)
    taken = set()
    for name in sorted(candidates):
        item = _taken(daemon, name)
        refused_by_name = isinstance(item, RefusedCommand) and (
            "unknown command" in item.error or "internal to the table" in item.error
        )
        assert isinstance(item, Command | ResendRequest | RefusedCommand), (name, item)
        if not refused_by_name:
            taken.add(name)
    assert taken == ACCEPTED_COMMANDS
