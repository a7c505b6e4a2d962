"""The room kit as shipped (examples/mosquitto/mosquitto.conf and mosquitto-mtls.conf) against
the attacks of issue 12: no identity takes a table's session over, client certificates
(and their revocation), the ACL pinned to the room, a 100 MB command refused by the broker,
and `tablectl sim` printing over the broker's TLS with its own identity.

Real mosquitto with the shipped configuration files (only paths and ports moved), the
daemon with its simulated boards on real ptys.
"""

from __future__ import annotations

import dataclasses
import json
import os
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
    EXAMPLE_MTLS_CONF,
    ROOT,
    USERS,
    RoomPki,
    ShippedBroker,
    Subscriber,
    TlsFiles,
    install_kit,
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
        if not reason.is_failure:
            with self.lock:
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
    default, tablectl-t01), again and again: the table is never disconnected, and every
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
        # The room identity itself, before the room server connects (one connection per
        # identity: a second `room` would take over the room's own session).
        room_intruder = Intruder(kit, "table-t01", username="room")
        time.sleep(1.0)
        room_intruder.close()
        for client_id in ("table-t01", "tablectl-t01"):
            intruders.append(Intruder(kit, client_id, username="tv"))
            t02 = Intruder(kit, client_id, username="table-t02", password=T02["table-t02"])
            intruders.append(t02)
        with Subscriber(kit, f"{PREFIX}/#", username="room") as room:
            _commands_all_reach_the_table(room)
        assert all(i.connects >= 1 for i in intruders)
        _no_takeover(kit, daemon)
    finally:
        for intruder in intruders:
            intruder.close()
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
                "--cafile", str(kit.tls.ca_file), "-u", "room", "-P", USERS["room"],
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
    args = [sys.executable, "-m", "controller.cli", "sim", "--config", str(config)]
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
