"""Retained messages on the shipped broker kit: a command the broker kept is never applied
by the table (refused, answered, journaled, alerted once), the ACL leaves no identity a
topic of its choosing to retain anything on, and the room server clears a retained command
it finds.

Real parts: mosquitto with examples/mosquitto/mosquitto.conf (the kit's client file and
shipped ACL), the table daemon on its simulated boards, the room server (SQLite).
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from controller.commands import ACCEPTED_COMMANDS
from controller.config import Config, load_config
from controller.daemon import Daemon
from room.config import load_room_config
from room.server import RoomServer
from tests.broker import ROOT, USERS, ShippedBroker, Subscriber, TlsFiles, install_kit
from tests.room_helpers import TOKEN, write_room_config
from tests.table_rig import poll

pytestmark = pytest.mark.timeout(180)

EXAMPLE = ROOT / "examples" / "sim-table.toml"
PREFIX = "poker/sim/t01"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def kit(tmp_path: Path, room_certs: TlsFiles) -> Iterator[ShippedBroker]:
    """examples/mosquitto/mosquitto.conf with the shipped ACL and the example identities."""
    poker = install_kit(tmp_path / "poker", room_certs, users=USERS)
    with ShippedBroker(tmp_path / "broker", poker) as broker:
        yield broker


def _config(tmp_path: Path) -> Config:
    config = load_config(EXAMPLE)
    return dataclasses.replace(
        config, journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal")
    )


class V5:
    """One identity's MQTT v5 connection (its own client id, as the kit requires): each
    publication's PUBACK reason code (0x87: refused by the ACL)."""

    def __init__(self, broker: ShippedBroker, user: str) -> None:
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=user, protocol=MQTTProtocolVersion.MQTTv5
        )
        self.client.username_pw_set(user, USERS[user])
        assert broker.tls is not None
        self.client.tls_set(ca_certs=str(broker.tls.ca_file))
        self._acks: dict[int, int] = {}
        self._cond = threading.Condition()
        self.client.on_publish = self._on_publish
        self.client.connect(broker.host, broker.port, keepalive=10)
        self.client.loop_start()

    def _on_publish(self, _c: Any, _u: Any, mid: int, reason: Any, _p: Any) -> None:
        with self._cond:
            self._acks[mid] = reason.value
            self._cond.notify_all()

    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> int:
        """Publish at QoS 1; the PUBACK's reason code."""
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        with self._cond:
            assert self._cond.wait_for(lambda: info.mid in self._acks, 10), topic
            return self._acks.pop(info.mid)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _payloads(sub: Subscriber, topic: str) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in sub.messages(f"{PREFIX}/{topic}")]


def _journal_text(tmp_path: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in tmp_path.glob("t01.journal*"))


# ---------------------------------------------------------------- the table


def test_a_command_left_retained_before_the_table_connects_is_refused_and_said_so(
    tmp_path: Path, kit: ShippedBroker
) -> None:
    """The room identity leaves `seat` and `resend` retained before the table connects:
    when it connects, the broker sends it both (a new subscription), flagged retained. The
    table applies neither: each gets an ok:false reply saying why (journaled), one
    command_retained alert stands for them, and the seat stays empty. A live command is
    applied; one published retained now is refused all the same, with no second alert."""
    room = V5(kit, "room")
    seat = {"seat": 7, "player": "Zed", "stack": 500, "id": "left-1"}
    assert room.publish(f"{PREFIX}/cmd/seat", json.dumps(seat).encode(), retain=True) == 0x10
    resend = {"from_seq": 1, "to_seq": 5, "id": "left-2"}
    assert room.publish(f"{PREFIX}/cmd/resend", json.dumps(resend).encode(), retain=True) == 0x10
    room.close()

    daemon = Daemon(_config(tmp_path), broker=kit.broker_config("table-t01", prefix=PREFIX))
    with Subscriber(kit, [f"{PREFIX}/replies", f"{PREFIX}/alerts"], username="room") as sub:
        daemon.start()
        try:
            assert sub.wait_for(lambda _m: len(_payloads(sub, "replies")) >= 2, 30)
            replies = {r["id"]: r for r in _payloads(sub, "replies")}
            assert set(replies) == {"left-1", "left-2"}
            for rid, command in (("left-1", "seat"), ("left-2", "resend")):
                assert replies[rid]["ok"] is False and replies[rid]["command"] == command
                assert replies[rid]["error"].startswith("retained:"), replies[rid]
            assert "resent" not in replies["left-2"]  # not answered from the journal
            assert daemon.engine.seats[7].player is None
            assert sub.wait_for(lambda _m: len(_payloads(sub, "alerts")) >= 1, 10)
            alerts = [a for a in _payloads(sub, "alerts") if a["type"] == "command_retained"]
            assert len(alerts) == 1 and alerts[0]["severity"] == "warning"
            assert daemon.commands.retained.refused == 2

            live = {"seat": 5, "player": "Ann", "stack": 20000, "id": "live-1"}
            sub.publish(f"{PREFIX}/cmd/seat", json.dumps(live).encode())
            kept = {"id": "kept-now"}
            sub.publish(f"{PREFIX}/cmd/pause", json.dumps(kept).encode(), retain=True)
            assert sub.wait_for(lambda _m: len(_payloads(sub, "replies")) >= 4, 15)
            replies = {r["id"]: r for r in _payloads(sub, "replies")}
            assert replies["live-1"]["ok"] is True
            assert daemon.engine.seats[5].player == "Ann"
            assert replies["kept-now"]["ok"] is False
            assert replies["kept-now"]["error"].startswith("retained:")
            time.sleep(0.5)
            kinds = [a["type"] for a in _payloads(sub, "alerts")]
            assert kinds.count("command_retained") == 1  # one a minute stands for the rest
            assert "command_malformed" not in kinds
        finally:
            daemon.stop()
    journal = _journal_text(tmp_path)
    for rid in ("left-1", "left-2", "kept-now"):
        assert rid in journal, f"the refusal of {rid} was not journaled"
    assert "command_retained" in journal


# ---------------------------------------------------------------- the ACL


def test_no_identity_can_publish_retained_or_not_outside_its_own_topics(
    kit: ShippedBroker,
) -> None:
    """The room may write cmd/<name> for the commands a table takes, to the tables of the
    ACL, and nothing else, retained or not (PUBACK 0x87: dropped, nothing kept); a table its
    own outputs, TV its two requests. What the room left retained on its own topics is all
    a fresh subscriber that reads every command topic of the room finds."""
    refused = {
        "room": [
            f"{PREFIX}/cmd/flush",
            f"{PREFIX}/cmd/draw",  # a trace command, but the table's own
            f"{PREFIX}/cmd/seat/extra",
            f"{PREFIX}/cmd",
            "poker/sim/t02/cmd/seat",  # a table the ACL does not list
            "poker/sim/junk-table-0001/cmd/pause",
            "poker/main/t01/cmd/seat",  # another room
            f"{PREFIX}/state",
            f"{PREFIX}/junk",
        ],
        "table-t01": [f"{PREFIX}/junk", f"{PREFIX}/cmd/seat", f"{PREFIX}/state/extra"],
        "tv": [f"{PREFIX}/tvreq/other", "poker/sim/t02/tvreq/holecards", f"{PREFIX}/state"],
    }
    for user, topics in refused.items():
        client = V5(kit, user)
        try:
            for topic in topics:
                for retain in (True, False):
                    code = client.publish(topic, b'{"id": "junk"}', retain=retain)
                    assert code == 0x87, (user, topic, retain, code)
            if user == "room":
                for name in sorted(ACCEPTED_COMMANDS):
                    body = json.dumps({"id": f"kept-{name}"}).encode()
                    assert client.publish(f"{PREFIX}/cmd/{name}", body, retain=True) == 0x10
        finally:
            client.close()
    # Everything retained that the room can read under any table's commands: exactly the
    # one message per command name it was allowed (the room reads poker/sim/+/cmd/#).
    with Subscriber(kit, "poker/sim/+/cmd/#", username="room") as sub:
        n = len(ACCEPTED_COMMANDS)
        assert sub.wait_for(lambda m: len(m) >= n, 10)
        time.sleep(0.5)
        got = {m.topic for m in sub.messages() if m.retain}
        assert got == {f"{PREFIX}/cmd/{name}" for name in ACCEPTED_COMMANDS}
        assert len(sub.messages()) == n
        for name in ACCEPTED_COMMANDS:  # cleared
            sub.publish(f"{PREFIX}/cmd/{name}", b"", retain=True)


# ---------------------------------------------------------------- the room server


@dataclasses.dataclass
class Room:
    server: RoomServer
    url: str


def _start_room(tmp_path: Path, kit: ShippedBroker) -> Room:
    db = tmp_path / "room" / "room.db"
    path = write_room_config(tmp_path / "room.toml", kit, f"sqlite:///{db}", room="sim")
    server = RoomServer(load_room_config(path))
    server.start()
    assert server.ingest.connected.wait(20), "the room server did not connect"
    return Room(server, server.url.rstrip("/"))


def _retained_alerts(room: Room) -> list[dict[str, Any]]:
    alerts = httpx.get(room.url + "/api/alerts", timeout=5).json()
    return [a for a in alerts if a["type"] == "retained_command"]


def test_the_room_server_clears_a_retained_command_it_finds(
    tmp_path: Path, kit: ShippedBroker
) -> None:
    """A command left retained before the room server starts, and one published retained
    while it runs (by whoever holds the room's identity: here the server's own connection),
    are cleared at once: the table finds nothing kept when it subscribes, and one
    retained_command room alert a minute per table says so. The server never asks the
    broker to write a command a table does not take (404, nothing published)."""
    room_id = V5(kit, "room")
    body = json.dumps({"seat": 7, "player": "Zed", "stack": 500, "id": "left-1"}).encode()
    assert room_id.publish(f"{PREFIX}/cmd/seat", body, retain=True) == 0x10
    room_id.close()
    room = _start_room(tmp_path, kit)
    try:
        assert poll(lambda: room.server.ingest.counters["retained_commands_cleared"] == 1, 10)
        assert poll(lambda: len(_retained_alerts(room)) == 1, 10)
        alert = _retained_alerts(room)[0]
        assert alert["table_id"] == "t01" and alert["severity"] == "warning"
        assert "cmd/seat" in alert["message"]
        with Subscriber(kit, f"{PREFIX}/cmd/#", username="table-t01") as table:
            assert not table.wait_for(lambda m: len(m) > 0, 1.0), table.messages()

            # Published retained while the server runs: cleared as soon as it is seen; the
            # table (subscribed) gets the command, then its clearing (an empty payload).
            info = room.server.ingest._client.publish(
                f"{PREFIX}/cmd/pause", b'{"id": "kept-now"}', qos=1, retain=True
            )
            info.wait_for_publish(10)
            assert poll(lambda: room.server.ingest.counters["retained_commands_cleared"] == 2, 10)
            assert table.wait_for(lambda m: len(m) >= 2, 10)
            assert [m.payload for m in table.messages()][-1] == b""
        with Subscriber(kit, f"{PREFIX}/cmd/#", username="table-t01") as fresh:
            assert not fresh.wait_for(lambda m: len(m) > 0, 1.0), fresh.messages()
        time.sleep(0.5)
        assert len(_retained_alerts(room)) == 1  # the second one is counted in the next

        with httpx.Client(base_url=room.url, timeout=15, headers=AUTH) as http:
            answer = http.post("/api/tables/t01/commands/flush", json={"id": "x"})
            assert answer.status_code == 404 and "a table takes" in answer.text
            answer = http.post("/api/tables/t01/commands/draw", json={"id": "x"})
            assert answer.status_code == 404
    finally:
        room.server.stop()
