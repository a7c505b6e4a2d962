"""The room server end to end: a real table daemon over TLS, the `room` identity, the HTTP API."""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pokerkit import HandHistory

from controller.config import load_config
from controller.daemon import Daemon
from controller.journal import read_trace_file
from controller.seal import open_sealed
from room.config import load_room_config
from room.server import RoomServer
from sim.demo import demo_script
from tests.broker import Mosquitto, Subscriber
from tests.room_helpers import TOKEN, write_room_config
from tests.table_rig import poll

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"
PREFIX = "poker/sim/t01"  # the room the shipped ACL pins


@dataclasses.dataclass
class Room:
    server: RoomServer
    daemon: Daemon
    journal: Path
    url: str


def _journaled_events(journal: Path) -> dict[int, str]:
    """The events the table published, by seq, as the bytes it published."""
    segment = read_trace_file(journal)
    return {
        o.message.payload["seq"]: o.message.payload_bytes().decode()
        for outs in segment.outputs.values()
        for o in outs
        if o.message.topic == "events"
    }


@pytest.fixture
def room(tmp_path: Path, mosquitto_tls: Mosquitto, database_url: str) -> Iterator[Room]:
    config = load_config(EXAMPLE)
    journal = tmp_path / "t01.journal"
    config = dataclasses.replace(
        config, journal=dataclasses.replace(config.journal, path=journal)
    )
    broker = mosquitto_tls.broker_config("table-t01", prefix=PREFIX, client_id="tablectl-t01")
    daemon = Daemon(config, broker=broker)
    path = write_room_config(tmp_path / "room.toml", mosquitto_tls, database_url, room="sim")
    server = RoomServer(load_room_config(path))
    server.start()
    assert server.ingest.connected.wait(20), "the room server did not connect over TLS"
    daemon.start()

    def table_online() -> bool:  # the table is connected and subscribed to its commands
        tables = httpx.get(server.url.rstrip("/") + "/api/tables", timeout=5).json()
        return any(t["table"] == "t01" and t["status"] == "online" for t in tables)

    try:
        assert poll(table_online, 30), "the table never came online"
        yield Room(server, daemon, journal, server.url.rstrip("/"))
    finally:
        daemon.stop()
        server.stop()


def _wait_hands(room: Room, count: int) -> None:
    def done() -> bool:
        rows = room.server.store.hands("t01")
        return sum(1 for r in rows if r["completed_t"] is not None) >= count

    assert poll(done, 90), room.server.ingest.counters


def test_every_event_stored_once_and_served(room: Room) -> None:
    config = room.daemon.config
    for event in demo_script(config, 2, 21):
        room.daemon.submit(event)
    _wait_hands(room, 2)
    published = _journaled_events(room.journal)
    assert poll(lambda: room.server.store.event_counts()["rows"] == len(published), 30)
    rows = room.server.store.query("SELECT seq, payload FROM events ORDER BY seq")
    assert {r["seq"]: r["payload"] for r in rows} == published  # every event, the same bytes
    with httpx.Client(base_url=room.url, timeout=10) as http:
        tables = http.get("/api/tables").json()
        assert [t["table"] for t in tables] == ["t01"]
        assert tables[0]["status"] == "online" and tables[0]["max_seq"] == max(published)
        hands = http.get("/api/tables/t01/hands").json()
        assert [h["id"] for h in hands] == ["t01.2", "t01.1"]
        hand = http.get("/api/hands/t01.1").json()
        assert hand["events"][0]["type"] == "hand_started"
        assert hand["events"][-1]["type"] == "hand_completed"
        phh = http.get("/api/hands/t01.1.phh")
        assert phh.status_code == 200 and phh.headers["content-type"].startswith("application/toml")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            states = list(HandHistory.loads(phh.text))
        final = {int(k): v for k, v in hand["events"][-1]["stacks"].items()}
        seats = HandHistory.loads(phh.text).seats
        assert seats is not None
        assert list(states[-1].stacks) == [final[s] for s in seats]
        assert http.get("/api/hands/t01.99").status_code == 404
        assert http.get("/api/hands/nonsense").status_code == 404
        stats = http.get("/api/stats/dealers").json()
        assert sum(d["hands"] for d in stats["dealers"]) == 2
        assert http.get("/api/stats/tables?by=shift").status_code == 200
        assert http.get("/api/stats/tables?by=week").status_code == 422
        assert http.get("/openapi.json").json()["info"]["title"].startswith("tablectl room")
        assert "t01" in http.get("/").text
        health = http.get("/api/health").json()
        assert health["connected"] is True and health["counters"]["conflicts"] == 0


def test_commands_need_the_token_and_return_the_tables_reply(room: Room) -> None:
    body = {"seat": 4, "player": "Dora", "stack": 5000, "id": "api-1"}
    with httpx.Client(base_url=room.url, timeout=20) as http:
        assert http.post("/api/tables/t01/commands/seat", json=body).status_code == 401
        bad = {"Authorization": "Bearer wrong-token-0000000000"}
        assert http.post("/api/tables/t01/commands/seat", json=body, headers=bad).status_code == 401
        auth = {"Authorization": f"Bearer {TOKEN}"}
        reply = http.post("/api/tables/t01/commands/seat", json=body, headers=auth).json()
        assert reply == {**reply, "id": "api-1", "command": "seat", "ok": True, "table": "t01"}
        again = http.post("/api/tables/t01/commands/seat", json=body, headers=auth).json()
        assert again["duplicate"] is True  # the same id: applied once
        refused = http.post(
            "/api/tables/t01/commands/unseat", json={"seat": 8}, headers=auth
        ).json()
        assert refused["ok"] is False and "seat 8 is empty" in refused["error"]
        stored = http.get("/api/tables/t01/replies").json()
        assert {r["payload"]["id"] for r in stored} >= {"api-1", refused["id"]}


def _outputs(path: Path) -> list[Any]:
    """The `out` records of a journal file (with their keys)."""
    from controller.journal import read_trace_file

    segment = read_trace_file(path)
    return [o for k in sorted(segment.outputs) for o in segment.outputs[k]]


def test_the_room_identity_never_sees_a_hole_card(room: Room, mosquitto_tls: Mosquitto) -> None:
    tv = Subscriber(mosquitto_tls, f"{PREFIX}/holecards", username="tv")
    try:
        for event in demo_script(room.daemon.config, 1, 4):
            room.daemon.submit(event)
        _wait_hands(room, 1)
        assert tv.messages(), "the table published hole cards (TV got them)"
        topics = room.server.store.query("SELECT DISTINCT topic FROM messages")
        assert "holecards" not in {t["topic"] for t in topics}
        everything: list[Any] = room.server.store.query("SELECT payload FROM messages")
        everything += room.server.store.query("SELECT payload FROM events")
        shown = set()
        for row in everything:
            payload = json.loads(row["payload"])
            for key in ("showdown",):
                for value in (payload.get(key) or {}).values():
                    cards = value.get("cards") if isinstance(value, dict) else value
                    shown.update(cards or [])
        # the cards TV got, sealed: opened with the keys the table journaled beside them
        journal = room.daemon.journal
        assert journal is not None
        keys = {
            o.message.payload["seq"]: o.key
            for o in _outputs(journal.path)
            if o.message.topic == "holecards"
        }
        for message in tv.messages():
            sealed = json.loads(message.payload)
            assert "cards" not in sealed
            for card in open_sealed(sealed, keys[sealed["seq"]] or ""):
                if card not in shown:  # as a JSON string (hex chains hold "7c" ...)
                    assert all(f'"{card}"' not in row["payload"] for row in everything)
    finally:
        tv.close()


def test_room_export_writes_every_completed_hand(room: Room, tmp_path: Path) -> None:
    import subprocess

    from tests.table_rig import tablectl

    for event in demo_script(room.daemon.config, 2, 8):
        room.daemon.submit(event)
    _wait_hands(room, 2)
    out = tmp_path / "export"
    config = room.server.config.path
    done = subprocess.run(
        [*tablectl(), "room", "export", "--phh", str(out), "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.glob("*.phh")) == ["t01-000001.phh", "t01-000002.phh"]
    for path in out.glob("*.phh"):
        history = HandHistory.loads(path.read_text())
        assert history.table == "t01" and history.seats is not None
        assert list(list(history)[-1].stacks) == history.finishing_stacks
    assert "2 hand(s) written" in done.stdout


def test_room_export_only_reads_and_refuses_what_is_not_there(room: Room, tmp_path: Path) -> None:
    import re
    import subprocess

    from tests.table_rig import tablectl

    for event in demo_script(room.daemon.config, 1, 8):
        room.daemon.submit(event)
    _wait_hands(room, 1)
    config = room.server.config.path
    text = config.read_text()

    def export(conf: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        out = tmp_path / "export"
        args = [*tablectl(), "room", "export", "--phh", str(out), "--config", str(conf), *extra]
        return subprocess.run(args, capture_output=True, text=True, timeout=120)

    done = export(config, "--table", "t09")
    assert done.returncode == 2 and "has no table 't09' (tables: t01)" in done.stderr
    other = tmp_path / "other-room.toml"
    other.write_text(re.sub(r'(?m)^name = ".*"$', 'name = "elsewhere"', text))
    done = export(other)
    assert done.returncode == 2
    assert (
        f"room 'elsewhere' has no table in this database (rooms in it: {room.server.config.name})"
        in done.stderr
    )
    missing = tmp_path / "typo" / "room.db"
    mistyped = tmp_path / "mistyped.toml"
    mistyped.write_text(re.sub(r'(?m)^url = ".*"$', f'url = "sqlite:///{missing}"', text))
    done = export(mistyped)
    assert done.returncode == 2 and f"no database at {missing}" in done.stderr
    assert not missing.exists() and not missing.parent.exists()  # nothing created
    assert not (tmp_path / "export").exists()
