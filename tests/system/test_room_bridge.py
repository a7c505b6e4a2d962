"""Beyond one room: a room broker bridged to a central one (never a hole card), and two room
servers writing to one PostgreSQL."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from room.config import load_room_config
from room.schema import LATEST
from room.server import RoomServer
from tests.broker import EXAMPLE_ACL, EXAMPLE_DIR, USERS, Mosquitto, Subscriber, TlsFiles
from tests.postgres import PostgresServer
from tests.room_helpers import write_room_config
from tests.table_rig import poll

pytestmark = pytest.mark.timeout(120)

SHIPPED_BRIDGE = EXAMPLE_DIR / "bridge.conf"
CENTRAL_USERS = {"bridge-r1": "bridge-secret", "central": "central-secret"}


def bridge_section(central: Mosquitto) -> str:
    """The shipped bridge.conf with this test's address, CA and password."""
    assert central.tls is not None
    local = {
        "address": f"address {central.host}:{central.port}",
        "bridge_cafile": f"bridge_cafile {central.tls.ca_file}",
        "remote_password": f"remote_password {CENTRAL_USERS['bridge-r1']}",
    }
    lines = []
    for line in SHIPPED_BRIDGE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key = line.split()[0]
        lines.append(local.get(key, line))
    return "\n".join(lines)


def room_acl(tmp_path: Path, room: str) -> Path:
    """The shipped ACL put to work for `room`, as docs/security.md tells a room to do."""
    acl = tmp_path / f"acl-{room}"
    acl.write_text(EXAMPLE_ACL.read_text().replace("poker/sim/", f"poker/{room}/"))
    return acl


def _event(seq: int, table: str = "t01") -> bytes:
    payload = {"type": "tick", "seq": seq, "hand": None, "t": float(seq), "table": table}
    return json.dumps(payload).encode()


def test_a_bridged_room_never_forwards_hole_cards(tmp_path: Path, tls_files: TlsFiles) -> None:
    shipped = SHIPPED_BRIDGE.read_text()
    topics = [ln.split()[1] for ln in shipped.splitlines() if ln.startswith("topic ")]
    assert not any(t.endswith("#") or "holecards" in t for t in topics)
    with (
        Mosquitto(tmp_path / "central", users=CENTRAL_USERS, tls=tls_files) as central,
        Mosquitto(
            tmp_path / "room",
            users=USERS,
            acl_file=room_acl(tmp_path, "r1"),
            extra=bridge_section(central),
        ) as room_broker,
    ):
        seen = Subscriber(central, "#", username="central", password="central-secret")
        table = Subscriber(room_broker, "poker/r1/t01/cmd/#", username="table-t01")
        tv = Subscriber(room_broker, "poker/r1/t01/holecards", username="tv")
        try:
            # The bridge connects on its own: probe until an event crosses it.
            seq = 0

            def crossed() -> bool:
                nonlocal seq
                seq += 1
                table.publish("poker/r1/t01/events", _event(seq))
                return any(m.topic.endswith("/events") for m in seen.messages())

            assert poll(crossed, 30, 0.3), "the bridge did not connect"
            hole = {"table": "t01", "hand": 1, "seat": 3, "cards": ["As", "Kd"], "t": 1.0}
            table.publish("poker/r1/t01/holecards", json.dumps(hole).encode())
            state = {"table": "t01", "seq": seq, "hand": None, "t": 2.0}
            table.publish("poker/r1/t01/state", json.dumps(state).encode(), retain=True)
            table.publish("poker/r1/t01/events", _event(seq + 1))  # after the hole card
            assert seen.wait_for(
                lambda ms: any(json.loads(m.payload).get("seq") == seq + 1 for m in ms), 20
            )
            assert tv.wait_for(lambda ms: len(ms) == 1, 10), "TV reads it on the room broker"
            topics_seen = {m.topic.rsplit("/", 1)[-1] for m in seen.messages()}
            assert topics_seen == {"events", "state"}
            assert not any(b"As" in m.payload for m in seen.messages())
            # A command from the central side reaches the table through the bridge.
            seen.publish("poker/r1/t01/cmd/pause", b'{"reason":"central","id":"c-1"}')
            assert table.wait_for(lambda ms: any(b"c-1" in m.payload for m in ms), 20)
        finally:
            for client in (seen, table, tv):
                client.close()


def test_two_room_servers_write_to_one_postgresql(tmp_path: Path, postgres: PostgresServer) -> None:
    url = postgres.create_database()
    brokers = [Mosquitto(tmp_path / f"mq{i}").start() for i in (1, 2)]
    servers: list[RoomServer] = []
    try:
        configs = [
            load_room_config(
                write_room_config(tmp_path / f"room{i}.toml", broker, url, room=f"r{i}")
            )
            for i, broker in zip((1, 2), brokers, strict=True)
        ]
        servers = [RoomServer(c) for c in configs]
        starts = [threading.Thread(target=s.start) for s in servers]  # migrate at the same time
        for thread in starts:
            thread.start()
        for thread in starts:
            thread.join(30)
        assert all(s.ingest.connected.wait(10) for s in servers)
        tables = [Subscriber(b, "#") for b in brokers]
        try:
            for i, client in enumerate(tables, start=1):
                for seq in range(1, 11 * i + 1):  # r1: 11 events, r2: 22, both at table t01
                    client.publish(f"poker/r{i}/t01/events", _event(seq))
            for i, server in enumerate(servers, start=1):
                assert poll(lambda s=server, n=11 * i: s.store.event_counts()["rows"] == n, 20)
            rows = servers[0].store.query(
                "SELECT room, COUNT(*) AS n FROM events GROUP BY room ORDER BY room"
            )
            assert [(r["room"], r["n"]) for r in rows] == [("r1", 11), ("r2", 22)]
            assert servers[0].store.schema_version() == servers[1].store.schema_version()
            migrations = servers[0].store.query("SELECT * FROM schema_version")
            assert len(migrations) == LATEST  # each migration applied once, not once a server
            assert [t["max_seq"] for t in servers[0].store.tables()] == [11]
            assert [t["max_seq"] for t in servers[1].store.tables()] == [22]
        finally:
            for client in tables:
                client.close()
    finally:
        for server in servers:
            server.stop()
        for broker in brokers:
            broker.stop()
