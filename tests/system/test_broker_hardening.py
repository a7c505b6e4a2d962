"""The room kit as shipped (examples/mosquitto/mosquitto.conf and mosquitto-mtls.conf) against
the attacks it is hardened for: no identity takes a table's session over, client certificates
(and their revocation), the ACL pinned to the room, a 100 MB command refused by the broker,
and `tablectl sim` printing over the broker's TLS with its own identity.

Real mosquitto with the shipped configuration files (only paths and ports moved), the
daemon with its simulated boards on real ptys.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion

from controller.config import Config, load_config
from controller.daemon import Daemon
from tests.broker import (
    EXAMPLE_ACL,
    EXAMPLE_CONF,
    EXAMPLE_MTLS_CONF,
    MOSQUITTO,
    ROOT,
    USERS,
    RoomPki,
    ShippedBroker,
    Subscriber,
    TlsFiles,
    install_kit,
    make_room_clients,
    make_room_passwd,
    make_room_pki,
)

pytestmark = pytest.mark.timeout(180)

EXAMPLE = ROOT / "examples" / "sim-table.toml"
PREFIX = "poker/sim/t01"
T02 = {"table-t02": "table-t02-secret"}  # another table of the room: a password, no grant


def _config(tmp_path: Path) -> Config:
    config = load_config(EXAMPLE)
    return dataclasses.replace(
        config, journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal")
    )


class Intruder:
    """A client of another identity that connects with the table's client id, and keeps
    reconnecting (paho's loop) whenever it is thrown out."""

    def __init__(
        self,
        broker: ShippedBroker,
        client_id: str,
        *,
        username: str | None = None,
        password: str | None = None,
        cert: tuple[Path, Path] | None = None,
    ) -> None:
        self.connects = 0
        self.refusals = 0
        self.lock = threading.Lock()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id, protocol=MQTTProtocolVersion.MQTTv5
        )
        if username is not None:
            self.client.username_pw_set(username, password or USERS.get(username))
        assert broker.tls is not None
        certfile, keyfile = cert if cert else (None, None)
        self.client.tls_set(
            ca_certs=str(broker.tls.ca_file),
            certfile=str(certfile) if certfile else None,
            keyfile=str(keyfile) if keyfile else None,
        )
        self.client.reconnect_delay_set(1, 1)
        self.client.on_connect = self._on_connect
        self.client.connect_async(broker.host, broker.port, keepalive=10)
        self.client.loop_start()

    def _on_connect(self, _c: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        with self.lock:
            if reason.is_failure:
                self.refusals += 1
            else:
                self.connects += 1

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _replies(room: Subscriber) -> dict[str, dict[str, Any]]:
    return {
        json.loads(m.payload)["id"]: json.loads(m.payload)
        for m in room.messages(f"{PREFIX}/replies")
    }


def _commands_all_reach_the_table(room: Subscriber, count: int = 20) -> None:
    """`count` room commands, each acknowledged by the broker, each answered by the table."""
    for n in range(count):
        level = {"name": "level", "small_blind": 100 + n, "big_blind": 200 + 2 * n, "ante": 0}
        room.publish(f"{PREFIX}/cmd/level", json.dumps(level | {"id": f"c{n}"}).encode())
        time.sleep(0.1)
    wanted = {f"c{n}" for n in range(count)}
    assert room.wait_for(lambda _m: wanted <= set(_replies(room)), 30), (
        f"commands that never reached the table: {sorted(wanted - set(_replies(room)))}"
    )
    assert all(_replies(room)[i]["ok"] for i in wanted)


def _no_takeover(broker: ShippedBroker, daemon: Daemon) -> None:
    assert daemon.publisher is not None
    assert daemon.publisher.connected
    assert daemon.publisher.stats()["reconnects"] == 0, "the table was thrown off the broker"
    log = broker.log_file.read_text()
    assert "Client table-t01 already connected" not in log


# ---------------------------------------------------------------- the password kit


@pytest.fixture
def kit(tmp_path: Path, room_certs: TlsFiles) -> Iterator[ShippedBroker]:
    """examples/mosquitto/mosquitto.conf with the shipped ACL, make-certs.sh certificates and
    a password file made by make-passwd.sh (the example identities and table-t02)."""
    poker = install_kit(tmp_path / "poker", room_certs, users=USERS | T02)
    with ShippedBroker(tmp_path / "broker", poker) as broker:
        yield broker


def test_no_other_identity_can_take_the_tables_session(tmp_path: Path, kit: ShippedBroker) -> None:
    """TV, the room and another table connect with the table's client id (and with its old
    default, tablectl-t01), again and again: the broker refuses each of them (the client
    file binds table-t01's id to table-t01), the table is never disconnected, and every
    command the broker acknowledged reaches it."""
    broker = kit.broker_config("table-t01", prefix=PREFIX, client_id="table-t01")
    daemon = Daemon(_config(tmp_path), broker=broker)
    daemon.start()
    intruders: list[Intruder] = []
    try:
        assert daemon.devices.readers[0].wait_synced(10.0)
        deadline = time.monotonic() + 10
        while not (daemon.publisher and daemon.publisher.connected):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        intruders.append(Intruder(kit, "table-t01", username="room"))
        for client_id in ("table-t01", "tablectl-t01"):
            intruders.append(Intruder(kit, client_id, username="tv"))
            t02 = Intruder(kit, client_id, username="table-t02", password=T02["table-t02"])
            intruders.append(t02)
        deadline = time.monotonic() + 10
        while not all(i.refusals >= 2 for i in intruders):  # each tried, refused, tried again
            assert time.monotonic() < deadline, [i.refusals for i in intruders]
            time.sleep(0.1)
        intruders[0].close()  # the room's own identity, before the room server connects
        with Subscriber(kit, f"{PREFIX}/#", username="room") as room:
            _commands_all_reach_the_table(room)
        assert all(i.connects == 0 for i in intruders), "another identity got a session"
        _no_takeover(kit, daemon)
    finally:
        for intruder in intruders:
            intruder.close()
        daemon.stop()


# ------------------------------------------- a CONNECT without a username (mosquitto 2.0.11)


def _anonymous_connect(broker: ShippedBroker, client_id: str, protocol: int) -> str:
    """One CONNECT with no username and `client_id` over the broker's TLS: the CONNACK's
    reason ('Not authorized' expected), or how the broker ended the connection."""
    client = mqtt.Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id,
        clean_session=False if protocol != mqtt.MQTTv5 else None,
        protocol=MQTTProtocolVersion(protocol),
    )
    assert broker.tls is not None
    client.tls_set(ca_certs=str(broker.tls.ca_file))
    answer: list[str] = []
    done = threading.Event()

    def on_connect(_c: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        answer.append(str(reason))
        done.set()

    client.on_connect = on_connect
    client.on_disconnect = lambda *_a: done.set()
    try:
        client.connect(broker.host, broker.port, keepalive=10)
    except OSError as exc:
        return f"refused: {exc}"
    client.loop_start()
    done.wait(5)
    client.loop_stop()
    client.disconnect()
    return answer[0] if answer else "closed"


def _attack(broker: ShippedBroker, client_id: str = "table-t01") -> None:
    """The session takeover: CONNECTs without credentials, with the table's client id."""
    for protocol in (mqtt.MQTTv311, mqtt.MQTTv5, mqtt.MQTTv311):
        answer = _anonymous_connect(broker, client_id, protocol)
        assert answer != "Success", "a CONNECT without a username was accepted"


class SessionTable:
    """A table's MQTT side alone: client id and identity table-t01, a persistent session
    subscribed to its commands, counting the commands it receives."""

    def __init__(self, broker: ShippedBroker, users: dict[str, str]) -> None:
        self.broker = broker
        self.commands: list[bytes] = []
        self.lock = threading.Lock()
        self.connected = threading.Event()
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id="table-t01",
            clean_session=False,
            protocol=MQTTProtocolVersion.MQTTv311,
        )
        self.client.username_pw_set("table-t01", users["table-t01"])
        assert broker.tls is not None
        self.client.tls_set(ca_certs=str(broker.tls.ca_file))
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_disconnect = lambda *_a: self.connected.clear()

    def _on_connect(self, client: mqtt.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if not reason.is_failure:
            client.subscribe(f"{PREFIX}/cmd/#", qos=1)
            self.connected.set()

    def _on_message(self, _c: mqtt.Client, _u: Any, msg: mqtt.MQTTMessage) -> None:
        with self.lock:
            self.commands.append(bytes(msg.payload))

    def up(self) -> None:
        self.client.connect(self.broker.host, self.broker.port, keepalive=10)
        self.client.loop_start()
        assert self.connected.wait(10), "the table could not connect"
        time.sleep(0.3)  # its SUBSCRIBE is through

    def down(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def received(self) -> int:
        with self.lock:
            return len(self.commands)


def _queued_commands_kept(broker: ShippedBroker, users: dict[str, str], reload: bool) -> int:
    """The attack, then the table away while the room sends it 5 commands (QoS 1, queued
    in its session), then (`reload`) `systemctl reload mosquitto`, then the table back:
    how many of the 5 it receives."""
    table = SessionTable(broker, users)
    table.up()
    _attack(broker)
    table.down()
    with Subscriber(broker, f"{PREFIX}/replies", username="room") as room:
        for n in range(5):
            room.publish(f"{PREFIX}/cmd/level", json.dumps({"id": f"q{n}"}).encode())
    if reload:
        broker.reload()
        time.sleep(1.0)
        assert broker.running, "the broker died at the reload"
    table.up()
    deadline = time.monotonic() + 5
    while table.received() < 5 and time.monotonic() < deadline:
        time.sleep(0.1)
    table.down()
    return table.received()


@pytest.mark.parametrize("reload", [False, True], ids=["no-reload", "reload"])
def test_a_connect_without_a_username_cannot_detach_a_table_session(
    kit: ShippedBroker, reload: bool
) -> None:
    """The critical finding: one CONNECT with no username and a table's client id. With the
    kit's client file the broker refuses it without touching the table's session: the 5
    commands queued while the table is away all reach it, reload (SIGHUP) or not."""
    assert _queued_commands_kept(kit, USERS | T02, reload) == 5
    assert kit.running


def test_the_attack_is_real_on_this_broker_with_use_username_as_clientid(
    tmp_path: Path, room_certs: TlsFiles
) -> None:
    """What the test above would see without the kit's fix: the previous kit (password file
    and use_username_as_clientid) on this very broker loses the queued commands. On a
    mosquitto that fixed the defect (2.0.13 and later) this is skipped."""
    if _mosquitto_version() >= (2, 0, 13):
        pytest.skip(f"mosquitto {_mosquitto_version()} does not have the defect")
    conf = tmp_path / "previous.conf"
    text = EXAMPLE_CONF.read_text()
    plugin = (
        "plugin mosquitto_dynamic_security.so\n"
        "plugin_opt_config_file /etc/mosquitto/poker/clients.json\n"
    )
    assert plugin in text
    text = text.replace(plugin, "password_file /etc/mosquitto/poker/passwd\n")
    text = text.replace("listener 8883\n", "listener 8883\nuse_username_as_clientid true\n")
    conf.write_text(text)
    poker = install_kit(tmp_path / "poker", room_certs, users=USERS)
    with ShippedBroker(tmp_path / "broker", poker, conf=conf) as broker:
        broker.identity_client_ids = False  # the previous kit took any client id
        assert _queued_commands_kept(broker, USERS, reload=False) == 0


def _mosquitto_version() -> tuple[int, ...]:
    out = subprocess.run(
        [MOSQUITTO, "-h"], capture_output=True, text=True, timeout=10, check=False
    ).stdout
    found = re.search(r"mosquitto version (\d+)\.(\d+)\.(\d+)", out)
    assert found, out
    return tuple(int(x) for x in found.groups())


def test_a_daemon_keeps_its_commands_through_the_attack_and_two_reloads(
    tmp_path: Path, kit: ShippedBroker
) -> None:
    """The whole table under the attack: the daemon connected, attacked, the broker
    reloaded; the room's command still answered; the daemon stopped, 5 commands sent to
    it, attacked and reloaded again; the daemon back: every command answered, the broker
    alive all along, the daemon never refused a publication."""
    config = _config(tmp_path)
    broker = kit.broker_config("table-t01", prefix=PREFIX)
    daemon = Daemon(config, broker=broker)
    daemon.start()
    try:
        assert daemon.devices.readers[0].wait_synced(10.0)
        with Subscriber(kit, f"{PREFIX}/#", username="room") as room:
            assert room.wait_for(lambda m: any(x.topic.endswith("/status") for x in m), 10)
            _attack(kit)
            kit.reload()
            time.sleep(1.0)
            assert kit.running, "the broker died at the reload"
            _commands_all_reach_the_table(room, count=3)
            daemon.stop()
            for n in range(5):
                body = {"name": "level", "small_blind": 50, "big_blind": 100, "ante": 0}
                room.publish(f"{PREFIX}/cmd/level", json.dumps(body | {"id": f"away{n}"}).encode())
            _attack(kit)
            kit.reload()
            time.sleep(1.0)
            assert kit.running, "the broker died at the second reload"
            daemon = Daemon(config, broker=broker)
            daemon.start()
            wanted = {f"away{n}" for n in range(5)}
            assert room.wait_for(lambda _m: wanted <= set(_replies(room)), 30), (
                f"commands lost: {sorted(wanted - set(_replies(room)))}"
            )
        assert daemon.publisher is not None and daemon.publisher.connected
        assert daemon.publisher.stats()["rejected"] == 0, "the broker refused the table"
    finally:
        daemon.stop()


def test_a_100_mb_command_is_refused_by_the_broker_and_never_reaches_the_table(
    tmp_path: Path, kit: ShippedBroker
) -> None:
    """max_packet_size: the broker disconnects the sender of an oversized packet before
    storing it; the table's memory does not move and it takes the next command."""
    daemon = Daemon(_config(tmp_path), broker=kit.broker_config("table-t01", prefix=PREFIX))
    daemon.start()
    try:
        assert daemon.devices.readers[0].wait_synced(10.0)
        huge = tmp_path / "huge.json"
        with huge.open("wb") as fh:
            fh.write(b'{"name": "seat", "player": "')
            fh.truncate(100 * 1024 * 1024)
        Path("/proc/self/clear_refs").write_text("5")  # reset this process's peak RSS
        before = _peak_rss_kb()
        assert kit.tls is not None
        sent = subprocess.run(
            # MQTT 3.1.1: the client is not told the limit, so it really sends the packet.
            [
                "mosquitto_pub", "-h", kit.host, "-p", str(kit.port),
                "--cafile", str(kit.tls.ca_file), "-u", "room", "-P", USERS["room"], "-i", "room",
                "-V", "mqttv311", "-q", "1", "-t", f"{PREFIX}/cmd/seat", "-f", str(huge),
            ],
            capture_output=True,
            timeout=120,
            check=False,
        )  # fmt: skip
        assert sent.returncode != 0, "the broker accepted a 100 MB publication"
        assert "oversize packet" in kit.log_file.read_text()
        time.sleep(1.0)
        grown = _peak_rss_kb() - before
        assert grown < 30 * 1024, f"the daemon's process grew by {grown // 1024} MB"
        with Subscriber(kit, f"{PREFIX}/replies", username="room") as room:
            _commands_all_reach_the_table(room, count=1)
        assert daemon.journal is not None
        journal = Path(daemon.journal.path).read_text()
        assert "command_malformed" not in journal and '"seat"' not in journal
    finally:
        daemon.stop()


def _peak_rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc/self/status")


def test_no_identity_can_change_the_client_file_over_mqtt(kit: ShippedBroker) -> None:
    """The dynamic-security plugin answers commands on $CONTROL/dynamic-security/v1; the kit
    names no administrator and the ACL grants no $CONTROL topic: the room's attempt to
    create a client is refused (PUBACK 0x87) and the client it asked for cannot log in."""
    create = {
        "commands": [
            {"command": "createClient", "username": "intruder", "password": "intruder-pw"},
            {"command": "setClientPassword", "username": "table-t01", "password": "stolen-pw"},
        ]
    }
    for user in ("room", "table-t01", "tv"):
        reason = _puback(kit, user, "$CONTROL/dynamic-security/v1", json.dumps(create).encode())
        assert reason == 0x87, f"{user}: the $CONTROL publication was not refused"
    assert _connack_password(kit, "intruder", "intruder-pw").is_failure
    assert _connack_password(kit, "table-t01", "stolen-pw").is_failure
    assert not _connack_password(kit, "table-t01").is_failure


def _puback(broker: ShippedBroker, user: str, topic: str, payload: bytes) -> int:
    """The PUBACK reason code of one QoS 1 publication by `user` (MQTT v5)."""
    client = mqtt.Client(
        CallbackAPIVersion.VERSION2, client_id=user, protocol=MQTTProtocolVersion.MQTTv5
    )
    client.username_pw_set(user, (USERS | T02)[user])
    assert broker.tls is not None
    client.tls_set(ca_certs=str(broker.tls.ca_file))
    acks: list[int] = []
    done = threading.Event()

    def on_publish(_c: Any, _u: Any, _m: int, reason: Any, _p: Any) -> None:
        acks.append(reason.value)
        done.set()

    client.on_publish = on_publish
    client.connect(broker.host, broker.port, keepalive=10)
    client.loop_start()
    client.publish(topic, payload, qos=1)
    assert done.wait(10), f"no PUBACK for {user}"
    client.disconnect()
    client.loop_stop()
    return acks[0]


def test_removing_an_identity_from_the_client_file_takes_a_restart(
    tmp_path: Path, kit: ShippedBroker
) -> None:
    """TV's password leaked: a password file without it, the client file made again, and
    `systemctl restart mosquitto` (mosquitto 2.0.11 reads the plugin's file at start only,
    not on reload). TV is cut off and refused; the room's persistent session comes back."""
    poker = kit.poker
    tv = Subscriber(kit, f"{PREFIX}/holecards", username="tv")
    room = Subscriber(kit, f"{PREFIX}/events", username="room", persistent=True)
    try:
        users = {u: p for u, p in (USERS | T02).items() if u != "tv"}
        make_room_clients(make_room_passwd(poker / "passwd", users), poker / "clients.json")
        kit.reload()
        time.sleep(1.0)
        if _mosquitto_version() == (2, 0, 11):  # what docs/security.md says of a reload
            assert not _connack_password(kit, "tv").is_failure
        kit.restart()
        assert _connack_password(kit, "tv").is_failure, "tv still logs in after the restart"
        table = Subscriber(kit, f"{PREFIX}/cmd/#", username="table-t01")
        try:  # until the room's client has reconnected (paho, 1 s apart) and subscribed
            deadline = time.monotonic() + 15
            while not room.wait_for(lambda m: any(b"restart" in x.payload for x in m), 0.5):
                assert time.monotonic() < deadline, "the room never came back"
                table.publish(f"{PREFIX}/events", b'{"after": "restart"}')
        finally:
            table.close()
        assert tv.messages() == []
    finally:
        tv.close()
        room.close()


def _connack_password(broker: ShippedBroker, user: str, password: str | None = None) -> Any:
    """The CONNACK reason of `user` (its example password unless `password`) with client id
    `user`, over the broker's TLS (MQTT v5)."""
    client = mqtt.Client(
        CallbackAPIVersion.VERSION2, client_id=user, protocol=MQTTProtocolVersion.MQTTv5
    )
    client.username_pw_set(user, password or (USERS | T02)[user])
    assert broker.tls is not None
    client.tls_set(ca_certs=str(broker.tls.ca_file))
    answer: list[Any] = []
    got = threading.Event()
    client.on_connect = lambda _c, _u, _f, rc, _p: (answer.append(rc), got.set())
    client.connect(broker.host, broker.port, keepalive=10)
    client.loop_start()
    got.wait(10)
    client.disconnect()
    client.loop_stop()
    assert answer, "no CONNACK"
    return answer[0]


def test_the_acl_pins_the_room_for_readers_too(tmp_path: Path, room_certs: TlsFiles) -> None:
    """Another room's table on the same broker (its own ACL block, added by its staff):
    this room's server and TV never read it, and its table never reads this room's."""
    acl = tmp_path / "acl"
    acl.write_text(
        EXAMPLE_ACL.read_text()
        + "\nuser table-main-t01\ntopic write poker/main/t01/#\ntopic read poker/main/t01/#\n"
    )
    users = USERS | {"table-main-t01": "main-t01-secret"}
    poker = install_kit(tmp_path / "poker", room_certs, users=users, acl=acl)
    with ShippedBroker(tmp_path / "broker", poker) as broker:
        room = Subscriber(broker, "#", username="room")
        tv = Subscriber(broker, "#", username="tv")
        other = Subscriber(broker, "#", username="table-main-t01", password="main-t01-secret")
        ours = Subscriber(broker, f"{PREFIX}/cmd/#", username="table-t01")
        try:
            for topic in ("status", "events", "holecards"):
                other.publish(f"poker/main/t01/{topic}", b"other room")
            room.publish(f"{PREFIX}/cmd/seat", b"this room")
            other.publish("poker/main/t01/state", b"flush")  # its own read-back: all routed
            assert other.wait_for(lambda m: any(x.payload == b"flush" for x in m), 10)
            assert ours.wait_for(lambda m: len(m) == 1, 10)
            time.sleep(0.5)
            assert [m.topic for m in room.messages()] == [f"{PREFIX}/cmd/seat"]
            assert tv.messages() == []
            assert not [m for m in other.messages() if m.topic.startswith("poker/sim/")]
        finally:
            for sub in (room, tv, other, ours):
                sub.close()


# ---------------------------------------------------------------- mutual TLS


@pytest.fixture
def mtls(tmp_path: Path, room_pki: RoomPki) -> Iterator[ShippedBroker]:
    """examples/mosquitto/mosquitto-mtls.conf: a client certificate per identity."""
    poker = install_kit(tmp_path / "poker", room_pki.tls, crl=room_pki.directory / "crl.pem")
    with ShippedBroker(tmp_path / "broker", poker, conf=EXAMPLE_MTLS_CONF) as broker:
        yield broker


def test_client_certificates_a_whole_table_and_no_takeover(
    tmp_path: Path, mtls: ShippedBroker, room_pki: RoomPki
) -> None:
    """The daemon with its certificate (CN table-t01, no password): it publishes, takes the
    room's commands, and TV's certificate with the table's client id cannot throw it off."""
    for identity in ("table-t01", "room", "tv"):
        assert room_pki.key(identity).stat().st_mode & 0o777 == 0o600
    broker = mtls.broker_config(
        None,
        prefix=PREFIX,
        client_id="table-t01",
        cert_file=room_pki.cert("table-t01"),
        key_file=room_pki.key("table-t01"),
    )
    daemon = Daemon(_config(tmp_path), broker=broker)
    daemon.start()
    tv = Intruder(mtls, "table-t01", cert=(room_pki.cert("tv"), room_pki.key("tv")))
    try:
        assert daemon.devices.readers[0].wait_synced(10.0)
        with Subscriber(
            mtls, f"{PREFIX}/#", cert_file=room_pki.cert("room"), key_file=room_pki.key("room")
        ) as room:
            assert room.wait_for(
                lambda m: any(json.loads(x.payload).get("state") == "online" for x in m
                              if x.topic.endswith("/status")),
                10,
            )  # fmt: skip
            _commands_all_reach_the_table(room)
            assert not [m for m in room.messages() if m.topic.endswith("/holecards")]
        assert tv.connects >= 1
        _no_takeover(mtls, daemon)
    finally:
        tv.close()
        daemon.stop()


def _connack(broker: ShippedBroker, cert: tuple[Path, Path] | None, ca: Path) -> str:
    """What a client with `cert` (None: none) trusting `ca` gets: 'connected', or why not."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5)
    client.tls_set(
        ca_certs=str(ca),
        certfile=str(cert[0]) if cert else None,
        keyfile=str(cert[1]) if cert else None,
    )
    result: list[str] = []
    done = threading.Event()

    def on_connect(_c: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        result.append("connected" if not reason.is_failure else str(reason))
        done.set()

    def on_disconnect(*_a: Any) -> None:
        result.append("disconnected")
        done.set()

    client.on_connect = on_connect
    client.on_disconnect = on_disconnect
    try:
        client.connect(broker.host, broker.port, keepalive=5)
    except OSError as exc:
        return f"refused: {exc}"
    client.loop_start()
    done.wait(10)
    client.disconnect()
    client.loop_stop()
    return result[0] if result else "no answer"


def test_no_certificate_another_cas_or_a_revoked_one_gets_no_session(tmp_path: Path) -> None:
    pki = make_room_pki(tmp_path / "pki", identities=("table-t01", "tv"))
    other = make_room_pki(tmp_path / "other", identities=("table-t01",))  # same CN, other CA
    poker = install_kit(tmp_path / "poker", pki.tls, crl=pki.directory / "crl.pem")
    ca = pki.tls.ca_file
    with ShippedBroker(tmp_path / "broker", poker, conf=EXAMPLE_MTLS_CONF) as broker:
        tv = (pki.cert("tv"), pki.key("tv"))
        assert _connack(broker, tv, ca) == "connected"
        assert _connack(broker, None, ca) != "connected"
        assert _connack(broker, (other.cert("table-t01"), other.key("table-t01")), ca) != (
            "connected"
        )
        # TV's key leaked: revoke it, install the new list, reload the broker.
        kept = tmp_path / "tv.crt", tmp_path / "tv.key"
        for src, dst in zip(tv, kept, strict=True):
            dst.write_bytes(src.read_bytes())
        subprocess.run(
            ["bash", str(ROOT / "examples/mosquitto/make-certs.sh"), "--dir", str(pki.directory),
             "--revoke", "tv"],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        assert not pki.cert("tv").exists()
        (poker / "crl.pem").write_bytes((pki.directory / "crl.pem").read_bytes())
        broker.reload()
        deadline = time.monotonic() + 10
        while _connack(broker, kept, ca) == "connected" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _connack(broker, kept, ca) != "connected", "a revoked certificate still connects"
        table = (pki.cert("table-t01"), pki.key("table-t01"))
        assert _connack(broker, table, ca) == "connected", "the others are not affected"


def test_make_certs_makes_one_client_certificate_per_identity(tmp_path: Path) -> None:
    pki = make_room_pki(tmp_path / "pki", identities=("table-t01", "room"))
    for identity in ("table-t01", "room"):
        text = subprocess.run(
            ["openssl", "x509", "-in", str(pki.cert(identity)), "-noout", "-subject", "-ext",
             "extendedKeyUsage"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert f"CN = {identity}" in text and "TLS Web Client Authentication" in text
        assert pki.key(identity).stat().st_mode & 0o777 == 0o600
    # Renewing one client leaves the CA and the server certificate alone.
    ca, server = pki.tls.ca_file.read_bytes(), pki.tls.cert_file.read_bytes()
    first = pki.cert("room").read_bytes()
    subprocess.run(
        ["bash", str(ROOT / "examples/mosquitto/make-certs.sh"), "--dir", str(pki.directory),
         "--client", "room"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    assert pki.cert("room").read_bytes() != first
    assert (pki.directory / "clients" / "room.crt.prev").read_bytes() == first
    assert (pki.tls.ca_file.read_bytes(), pki.tls.cert_file.read_bytes()) == (ca, server)


# ---------------------------------------------------------------- tablectl sim's printer


def test_sim_against_a_configured_broker_prints_over_tls_as_its_own_identity(
    tmp_path: Path, kit: ShippedBroker
) -> None:
    assert kit.tls is not None
    creds = tmp_path / "table.toml"
    creds.write_text(f'username = "table-t01"\npassword = "{USERS["table-t01"]}"\n')
    creds.chmod(0o600)
    watch = tmp_path / "room.toml"
    watch.write_text(f'username = "room"\npassword = "{USERS["room"]}"\n')
    watch.chmod(0o600)
    text = EXAMPLE.read_text()
    for rel in ("staff/sim-staff.toml", "decks/sim-deck.toml", "chips/sim-chips.toml"):
        text = text.replace(f'"{rel}"', f'"{ROOT / "examples" / rel}"')
    text += (
        f'\n[broker]\nhost = "127.0.0.1"\nport = {kit.port}\ntls = true\n'
        f'ca_file = "{kit.tls.ca_file}"\ncredentials_file = "{creds}"\n'
    )
    config = tmp_path / "t01.toml"
    config.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "tablectl.cli", "sim", "--config", str(config)]
    args += ["--hands", "1", "--speed", "20", "--seed", "3", "--json", "--exit-when-done"]
    done = subprocess.run(
        [*args, "--watch-credentials", str(watch)],
        capture_output=True, text=True, timeout=150, cwd=tmp_path, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    printed = [line.split()[0] for line in lines if line.split() and line.split()[0] in
               ("events", "status", "holecards", "replies")]  # fmt: skip
    assert "events" in printed and "status" in printed, done.stdout[-2000:]
    assert "holecards" not in printed, "the room's identity never reads hole cards"
    assert any('"hand_started"' in line for line in lines)
    # Without a reading identity it says why it prints nothing, and the table still plays.
    done = subprocess.run(
        args, capture_output=True, text=True, timeout=150, cwd=tmp_path, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "not printing the messages" in done.stdout and "--watch-credentials" in done.stdout
    assert "sim: played" in done.stdout


# ---------------------------------------------------------------- slow-loris


def _loris(tmp_path: Path, *args: str) -> dict[str, Any]:
    """tests/loris_rig.py in a network namespace of its own (`unshare --net`): the shipped
    broker, 1,500 idle sockets, a table that restarts and the room's command to it."""
    if os.geteuid() != 0:
        pytest.skip("a network namespace and its firewall need root (CI runs as root)")
    for tool in ("unshare", "nft", "ip", "prlimit"):
        assert shutil.which(tool), f"{tool} is missing: scripts/setup.sh installs it"
    workdir = tmp_path / "loris"
    workdir.mkdir(mode=0o700)
    done = subprocess.run(
        ["unshare", "--net", sys.executable, "-m", "tests.loris_rig", "--workdir", str(workdir),
         *args],
        capture_output=True, text=True, timeout=240, cwd=ROOT, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps(result))
    return result


def test_slow_loris_without_the_front_locks_the_room_out(tmp_path: Path) -> None:
    """The finding, reproduced: 1,500 idle sockets from one host against the broker as the
    distribution runs it (1024 open files, no front): the broker runs out of descriptors
    and the room server cannot get in to command the table that restarted."""
    result = _loris(tmp_path, "--nofile", "1024")
    assert result["held"] > 1000
    assert result["during"]["fds"] >= 1020  # every descriptor taken
    assert result["answered_after"] is None, "the room got in: the attack did not bite"


def test_slow_loris_from_one_host_gets_16_sockets_and_the_table_gets_back_in(
    tmp_path: Path,
) -> None:
    """The kit's front (nftables-mqtt.conf) and the unit's LimitNOFILE (mosquitto-limits.conf):
    of 1,500 idle sockets from one host, 16 are held and the rest reset; the table restarts,
    is back and answers the room's command within seconds."""
    result = _loris(tmp_path, "--guard", "--nofile", "drop-in")
    assert result["nofile"] == 8192
    assert result["held"] == 16 and result["refused"] == 1484
    assert result["during"]["fds"] - result["before"]["fds"] <= 16 + 2
    assert result["table_back_after"] is not None and result["table_back_after"] < 10
    assert result["answered_after"] is not None and result["answered_after"] < 15


def test_slow_loris_from_100_hosts_leaves_room_for_the_table(tmp_path: Path) -> None:
    """1,500 idle sockets from 100 hosts (15 each, under the per-host cap): the broker holds
    every one it accepts (descriptors to spare under the unit's LimitNOFILE) and the table
    that restarts is back and answers within seconds."""
    result = _loris(tmp_path, "--guard", "--nofile", "drop-in", "--sources", "100")
    assert result["held"] == 1500 and result["refused"] == 0
    assert result["during"]["fds"] > 900  # the attack is inside the broker
    assert result["table_back_after"] is not None and result["table_back_after"] < 10
    assert result["answered_after"] is not None and result["answered_after"] < 15


# ---------------------------------------------------------------- rate limits at the table


def test_a_flood_of_room_commands_is_refused_at_the_table_with_replies(
    tmp_path: Path, kit: ShippedBroker
) -> None:
    """The finding: 5,000 room commands in 5.5 s, each applied and journaled. Now the table
    takes 50 at once (then 10 a second): every other one gets an ok:false reply saying it
    was rate limited, one commands_rate_limited alert stands for them, the journal grows by
    the replies only, and 20 full-range resends get 2 answered and 18 refused at once."""
    daemon = Daemon(_config(tmp_path), broker=kit.broker_config("table-t01", prefix=PREFIX))
    daemon.start()
    try:
        assert daemon.devices.readers[0].wait_synced(10.0)
        with Subscriber(kit, [f"{PREFIX}/replies", f"{PREFIX}/alerts"], username="room") as room:
            assert room.wait_for(lambda m: True, 0.5) or True
            for n in range(400):
                body = {"name": "level", "small_blind": 100, "big_blind": 200, "ante": 0}
                room._client.publish(
                    f"{PREFIX}/cmd/level", json.dumps(body | {"id": f"f{n}"}), qos=1
                )
            assert room.wait_for(lambda _m: len(_replies(room)) >= 400, 60), len(_replies(room))
            replies = _replies(room)
            ok = [r for r in replies.values() if r["ok"]]
            limited = [r for r in replies.values() if "rate limited" in str(r.get("error"))]
            assert 50 <= len(ok) < 150, len(ok)
            assert len(ok) + len(limited) == 400
            alerts = [json.loads(m.payload) for m in room.messages(f"{PREFIX}/alerts")]
            kinds = [a["type"] for a in alerts]
            assert kinds.count("commands_rate_limited") == 1
            assert "command_malformed" not in kinds
            began = time.monotonic()
            for n in range(20):
                body = {"from_seq": 1, "to_seq": 10_000, "id": f"r{n}"}
                room._client.publish(f"{PREFIX}/cmd/resend", json.dumps(body), qos=1)
            wanted = {f"r{n}" for n in range(20)}
            assert room.wait_for(lambda _m: wanted <= set(_replies(room)), 30)
            answered = time.monotonic() - began
            resends = [_replies(room)[i] for i in sorted(wanted)]
            refused = [r for r in resends if "rate limited" in str(r.get("error"))]
            assert len(refused) >= 17, [r.get("error") for r in resends]
            assert answered < 10
        assert daemon.commands.limit.refused["commands"] == len(limited)
    finally:
        daemon.stop()
