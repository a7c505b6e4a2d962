"""The broker security kit (examples/mosquitto/) on a real mosquitto: TLS, passwords, the
shipped ACL, with the daemon playing a whole hand; the shipped config and scripts too."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion, MQTTProtocolVersion
from paho.mqtt.reasoncodes import ReasonCode

from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.schema import validate
from controller.seal import open_sealed
from kernel.messages import Message
from sim.dealer import DealerClock, Decision, HandPlan, TableDealer, seat_players
from sim.player import ScriptPlayer
from tests.broker import (
    EXAMPLE_ACL,
    MAKE_CERTS,
    MAKE_PASSWD,
    USERS,
    Mosquitto,
    Received,
    ShippedBroker,
    Subscriber,
    TlsFiles,
    free_port,
    install_kit,
    make_room_certs,
    make_room_passwd,
    make_tls_files,
    password_env,
)

pytestmark = pytest.mark.timeout(120)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim-table.toml"
PREFIX = "poker/sim/t01"
OTHER = "poker/sim/t02"
OTHER_ROOM = "poker/main/t01"  # the same table id in another room sharing the broker
CARD = re.compile(r'"([23456789TJQKA][cdhs])"')


# ---------------------------------------------------------------- helpers


class V5Client:
    """A paho MQTT v5 client over the broker's TLS: CONNACK and PUBACK reason codes."""

    def __init__(
        self,
        broker: Mosquitto,
        username: str | None,
        password: str | None = None,
        *,
        ca_file: Path | None = None,
        tls: bool = True,
        port: int | None = None,
        client_id: str | None = None,
    ) -> None:
        self._cond = threading.Condition()
        self.connack: ReasonCode | None = None
        self._acks: dict[int, ReasonCode] = {}
        if client_id is None:  # the kit's broker takes an identity with its own id only
            client_id = username if username and broker.identity_client_ids else ""
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id, protocol=MQTTProtocolVersion.MQTTv5
        )
        if username is not None:
            self.client.username_pw_set(username, password or USERS.get(username))
        if tls:
            assert broker.tls is not None
            self.client.tls_set(ca_certs=str(ca_file or broker.tls.ca_file))
        self.client.on_connect = self._on_connect
        self.client.on_publish = self._on_publish
        # Synchronous: a failed TLS handshake raises here.
        self.client.connect(broker.host, port or broker.port, keepalive=10)
        self.client.loop_start()
        with self._cond:
            self._cond.wait_for(lambda: self.connack is not None, 10)

    def _on_connect(
        self, client: mqtt.Client, userdata: Any, flags: Any, rc: ReasonCode, props: Any
    ) -> None:
        with self._cond:
            self.connack = rc
            self._cond.notify_all()

    def _on_publish(
        self, client: mqtt.Client, userdata: Any, mid: int, rc: ReasonCode, props: Any
    ) -> None:
        with self._cond:
            self._acks[mid] = rc
            self._cond.notify_all()

    def publish(self, topic: str, payload: bytes = b"x") -> ReasonCode:
        """Publish at QoS 1 and return the PUBACK's reason code (0x87: not authorised)."""
        info = self.client.publish(topic, payload, qos=1)
        with self._cond:
            assert self._cond.wait_for(lambda: info.mid in self._acks, 10), f"no PUBACK on {topic}"
            return self._acks.pop(info.mid)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def connack(broker: Mosquitto, username: str | None, password: str | None = None) -> ReasonCode:
    client = V5Client(broker, username, password)
    try:
        assert client.connack is not None, "no CONNACK"
        return client.connack
    finally:
        client.close()


def peer_certificate(host: str, port: int, ca_file: Path, server_hostname: str) -> bytes:
    """The server certificate (DER) after a verified TLS handshake, as a client sees it."""
    context = ssl.create_default_context(cafile=str(ca_file))
    with (
        socket.create_connection((host, port), timeout=10) as raw_socket,
        context.wrap_socket(raw_socket, server_hostname=server_hostname) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
        assert der is not None
        return der


def der(pem_file: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(pem_file.read_text())


def _config(tmp_path: Path) -> Config:
    config = load_config(EXAMPLE)
    return dataclasses.replace(
        config, journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal")
    )


def _payloads(sub: Subscriber, topic: str) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in sub.messages(f"{PREFIX}/{topic}")]


@pytest.fixture
def table(
    tmp_path: Path, mosquitto_room: Mosquitto
) -> Iterator[tuple[Daemon, Subscriber, Subscriber]]:
    """The daemon over TLS as table-t01; the room on '#' and TV on its topics, all over TLS."""
    daemon = Daemon(
        _config(tmp_path),
        broker=mosquitto_room.broker_config("table-t01", prefix=PREFIX, client_id="tablectl-t01"),
    )
    assert mosquitto_room.tls is not None
    assert daemon.broker.tls and daemon.broker.ca_file == mosquitto_room.tls.ca_file
    room = Subscriber(mosquitto_room, "#", username="room")
    tv = Subscriber(
        mosquitto_room,
        ["poker/+/+/holecards", "poker/+/+/holekeys", "poker/+/+/state"],
        username="tv",
    )
    daemon.start()
    try:
        assert daemon.devices.readers[0].wait_synced(10.0)
        yield daemon, room, tv
    finally:
        daemon.stop()
        room.close()
        tv.close()


# ---------------------------------------------------------------- a whole hand over TLS


def test_whole_hand_over_tls_room_never_sees_a_hidden_hole_card_tv_sees_them_all(
    table: tuple[Daemon, Subscriber, Subscriber],
) -> None:
    daemon, room, tv = table
    assert room.granted == [1], "the room may subscribe to '#' (the ACL filters delivery)"
    events = seat_players(
        [(1, "Alice", 20000), (2, "Bruno", 20000), (3, "Chiara", 20000)], (100, 200, 0), button=3
    )
    D = Decision
    checks = [D(1, "check"), D(2, "check")]
    hole = {1: ["As", "Ad"], 2: ["7h", "7c"], 3: ["Qs", "Jd"]}
    board = ["2d", "9c", "5s", "Kh", "3c"]
    plan = HandPlan(
        dealt_in=[1, 2, 3],
        button=3,
        small_blind_seat=1,
        big_blind_seat=2,
        blinds=(100, 200, 0),
        stacks={1: 20000, 2: 20000, 3: 20000},
        hole=hole,
        board=board,
        burns=["4c", "8c", "Tc"],
        # Seat 3 folds; seats 1 and 2 check it down: seat 1's aces win at showdown and are
        # tabled (rule 13-A), seat 2's losing sevens stay private, seat 3's never show.
        streets=[[D(3, "fold"), D(1, "call"), D(2, "check")], checks, checks, checks],
    )
    events += TableDealer(DealerClock(0.5), step=0.1, settle=0.2).play(plan)
    ScriptPlayer(daemon, speed=1.0).play(events)

    def hand_over(msgs: list[Received]) -> bool:
        kinds = [json.loads(m.payload)["type"] for m in msgs if m.topic.endswith("/events")]
        return "hand_completed" in kinds

    assert room.wait_for(hand_over, 60), "the hand did not complete"
    got = _payloads(room, "events")
    awarded = [e for e in got if e["type"] == "pot_awarded"]
    assert awarded and awarded[0]["winners"] == [1] and awarded[0]["amount"] == 400

    # The room, subscribed to '#', got zero holecards messages, and no key ...
    assert not [m for m in room.messages() if m.topic.endswith(("/holecards", "/holekeys"))]
    # ... and no hole card of a seat that was never shown, in any payload on any topic.
    hidden = set(hole[2]) | set(hole[3])
    shown_at: int | None = None
    for i, m in enumerate(room.messages()):
        cards = set(CARD.findall(m.payload.decode()))
        assert not cards & hidden, f"hidden hole card leaked on {m.topic}: {m.payload!r}"
        if cards & set(hole[1]) and shown_at is None:
            shown_at = i
            assert json.loads(m.payload)["type"] == "pot_awarded", "aces shown before showdown"
        assert cards <= set(board) | set(hole[1])
    assert shown_at is not None, "the winning hand is public once it won (rule 13-A)"
    # Everything the room got, command replies included, matches its schema.
    for m in room.messages():
        kind = m.topic.rsplit("/", 1)[1]
        validate(Message(kind, json.loads(m.payload), 1, kind in ("state", "status")))

    # TV production got every hole card, sealed, and every key once released; never retained.
    def opened(msgs: list[Received]) -> dict[int, list[str]]:
        keys = {
            json.loads(m.payload)["seq"]: json.loads(m.payload)["key"]
            for m in msgs
            if m.topic.endswith("/holekeys")
        }
        out: dict[int, list[str]] = {}
        for m in msgs:
            p = json.loads(m.payload) if m.topic.endswith("/holecards") else None
            if p is not None and p["seq"] in keys:
                cards = open_sealed(p, keys[p["seq"]])
                if len(cards) == 2:
                    out[p["seat"]] = cards
        return out

    assert all("cards" not in h for h in _payloads(tv, "holecards"))
    assert tv.wait_for(lambda msgs: opened(msgs) == hole, 15 + daemon.config.seal.delay)
    assert all(not m.retain for m in tv.messages(f"{PREFIX}/holecards"))
    assert all(not m.retain for m in tv.messages(f"{PREFIX}/holekeys"))
    # the room stores when each became readable, and by whom, never the key
    notices = _payloads(room, "released")
    assert {n["seat"] for n in notices} >= set(hole) and all("key" not in n for n in notices)


def test_a_command_from_tv_never_reaches_the_table_the_same_from_the_room_does(
    table: tuple[Daemon, Subscriber, Subscriber], mosquitto_room: Mosquitto
) -> None:
    daemon, room, _tv = table
    assert daemon.engine.seats[5].player is None
    seat = {"name": "seat", "seat": 5, "player": "Mallory", "stack": 50000}

    # TV may write nothing: an MQTT v5 client is told so (0x87), a v3.1.1 one is not; the
    # broker drops both publications.
    tv = V5Client(mosquitto_room, "tv")
    try:
        refused = tv.publish(f"{PREFIX}/cmd/seat", json.dumps(seat | {"id": "tv-1"}).encode())
        assert refused.value == 0x87
    finally:
        tv.close()
    with Subscriber(mosquitto_room, f"{PREFIX}/state", username="tv") as tv311:
        tv311.publish(f"{PREFIX}/cmd/seat", json.dumps(seat | {"id": "tv-2"}).encode())

    # The very same command from the room is applied and answered. (Had TV's arrived,
    # it would have been routed first and this one would be refused: seat 5 taken.)
    room.publish(f"{PREFIX}/cmd/seat", json.dumps(seat | {"id": "room-1"}).encode())

    def answered(msgs: list[Received]) -> bool:
        return any(r["id"] == "room-1" for r in _payloads(room, "replies"))

    assert room.wait_for(answered, 15), "the room's command was not answered"
    replies = _payloads(room, "replies")
    mine = next(r for r in replies if r["id"] == "room-1")
    assert mine["ok"] is True and mine["error"] is None and mine["command"] == "seat"
    assert not [r for r in replies if r["id"] in ("tv-1", "tv-2")], "TV's command got through"
    assert daemon.engine.seats[5].player == "Mallory"
    assert room.wait_for(
        lambda _m: any(s["seats"]["5"]["player"] == "Mallory" for s in _payloads(room, "state")),
        10,
    )


# ---------------------------------------------------------------- the ACL, topic by topic

TABLE_TOPICS = (
    "status",
    "state",
    "events",
    "holecards",
    "holekeys",
    "released",
    "alerts",
    "replies",
)


def test_who_may_write_what(mosquitto_room: Mosquitto) -> None:
    """MQTT v5 PUBACK reason codes: 0 granted, 0x87 refused by the ACL."""
    allowed = {
        "table-t01": [f"{PREFIX}/{t}" for t in TABLE_TOPICS],
        "room": [f"{PREFIX}/cmd/seat", f"{PREFIX}/cmd/level", f"{PREFIX}/cmd/resend"],
        "tv": [f"{PREFIX}/tvreq/holecards", f"{PREFIX}/tvreq/holekeys"],  # seqs it missed
    }
    refused = {
        "table-t01": [
            f"{PREFIX}/cmd/seat",  # no command to itself
            f"{PREFIX}/tvreq/holecards",  # nor a request to itself
            f"{PREFIX}/holecards/extra",
            f"{PREFIX}/debug",
            *(f"{OTHER}/{t}" for t in TABLE_TOPICS),  # nor into another table's prefix
            f"{OTHER}/cmd/seat",
            # The ACL pins the room: table t01 of this room is not t01 of another room.
            *(f"{OTHER_ROOM}/{t}" for t in TABLE_TOPICS),
        ],
        "room": [
            *(f"{PREFIX}/{t}" for t in TABLE_TOPICS),
            f"{PREFIX}/debug",
            f"{OTHER_ROOM}/cmd/seat",  # the room server commands its own room's tables only
            f"{PREFIX}/tvreq/holecards",  # the room can never ask for hole cards
            f"{PREFIX}/tvreq/holekeys",
            # Only the commands a table takes, to the tables of the ACL (retained junk
            # cannot be left anywhere else; tests/system/test_retained_commands.py).
            f"{PREFIX}/cmd/flush",
            f"{PREFIX}/cmd/draw",
            f"{PREFIX}/cmd/seat/extra",
            f"{OTHER}/cmd/unseat",
        ],
        "tv": [
            *(f"{PREFIX}/{t}" for t in TABLE_TOPICS),
            f"{PREFIX}/cmd/seat",
            f"{PREFIX}/tvreq/other",
            f"{OTHER}/tvreq/holecards",
        ],
    }
    for user in allowed:
        client = V5Client(mosquitto_room, user)
        try:
            assert client.connack is not None and not client.connack.is_failure
            # 0x00 success or 0x10 no matching subscribers: granted; 0x87: not authorised.
            got = {t: client.publish(t).value for t in allowed[user] + refused[user]}
        finally:
            client.close()
        granted = {t: code in (0x00, 0x10) for t, code in got.items()}
        assert granted == {t: t in allowed[user] for t in got}, user
        assert {got[t] for t in refused[user]} <= {0x87}, user


def test_who_may_read_what(mosquitto_room: Mosquitto) -> None:
    """Everyone subscribes to '#'; each identity gets exactly what the ACL lets it read."""
    subs = {user: Subscriber(mosquitto_room, "#", username=user) for user in USERS}
    table = V5Client(mosquitto_room, "table-t01")
    room = V5Client(mosquitto_room, "room")
    tv = V5Client(mosquitto_room, "tv")
    try:
        for topic in TABLE_TOPICS:
            assert not table.publish(f"{PREFIX}/{topic}").is_failure
        for name in ("seat", "unseat"):
            assert not room.publish(f"{PREFIX}/cmd/{name}").is_failure
        assert not tv.publish(f"{PREFIX}/tvreq/holecards").is_failure
        # Everything above was routed before its PUBACK: a marker seen last means the
        # subscriber's queue holds all the rest already.
        assert not room.publish(f"{PREFIX}/cmd/resume").is_failure
        assert not table.publish(f"{PREFIX}/state", b"flush").is_failure
    finally:
        table.close()
        room.close()
        tv.close()
    try:
        last = {
            "table-t01": f"{PREFIX}/cmd/resume",
            "room": f"{PREFIX}/state",
            "tv": f"{PREFIX}/state",
        }
        for user, sub in subs.items():
            assert sub.wait_for(
                lambda m, u=user: any(  # type: ignore[misc]
                    x.topic == last[u] and (u == "table-t01" or x.payload == b"flush") for x in m
                ),
                10,
            ), user
        topics = {user: {m.topic for m in sub.messages()} for user, sub in subs.items()}
    finally:
        for sub in subs.values():
            sub.close()
    public = {
        f"{PREFIX}/{t}" for t in ("status", "state", "events", "alerts", "replies", "released")
    }
    commands = {f"{PREFIX}/cmd/{name}" for name in ("seat", "unseat", "resume")}
    assert topics["room"] == public | commands  # never holecards, their keys or TV's requests
    tv_reads = ("status", "state", "events", "holecards", "holekeys")
    assert topics["tv"] == {f"{PREFIX}/{t}" for t in tv_reads}
    # The table reads its own commands and TV's requests only: nothing else, no output.
    requests = {f"{PREFIX}/tvreq/holecards"}
    assert topics["table-t01"] == commands | requests


# ---------------------------------------------------------------- authentication and TLS


def test_wrong_password_unknown_user_and_anonymous_are_refused(mosquitto_room: Mosquitto) -> None:
    assert not connack(mosquitto_room, "room").is_failure
    for user, password in (
        ("room", "wrong-password"),
        ("table-t01", "room-secret"),
        ("nobody", "whatever-password"),
    ):
        code = connack(mosquitto_room, user, password)
        assert code.is_failure and code.value in (0x86, 0x87), (user, code)
    assert connack(mosquitto_room, None).is_failure


def test_a_client_trusting_another_ca_is_refused(mosquitto_room: Mosquitto, tmp_path: Path) -> None:
    other = make_tls_files(tmp_path / "other-ca")  # another CA, same names
    with pytest.raises(ssl.SSLCertVerificationError):
        V5Client(mosquitto_room, "room", ca_file=other.ca_file)
    with pytest.raises(ssl.SSLCertVerificationError):
        peer_certificate(mosquitto_room.host, mosquitto_room.port, other.ca_file, "localhost")
    # The room's CA, but a broker name the certificate does not carry.
    assert mosquitto_room.tls is not None
    with pytest.raises(ssl.SSLCertVerificationError, match=r"[Hh]ostname"):
        peer_certificate(
            mosquitto_room.host, mosquitto_room.port, mosquitto_room.tls.ca_file, "other.room.lan"
        )
    # And the right CA and name are accepted, for the names make-certs.sh was given.
    for name in ("localhost", "127.0.0.1"):
        assert peer_certificate(
            mosquitto_room.host, mosquitto_room.port, mosquitto_room.tls.ca_file, name
        ) == der(mosquitto_room.tls.cert_file)


def test_plain_mqtt_on_the_tls_port_gets_no_session(mosquitto_room: Mosquitto) -> None:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=MQTTProtocolVersion.MQTTv5)
    client.username_pw_set("room", USERS["room"])
    connected = threading.Event()
    client.on_connect = lambda *_a: connected.set()
    try:
        client.connect(mosquitto_room.host, mosquitto_room.port, keepalive=5)
        client.loop_start()
        connected.wait(3)
    except OSError:
        pass  # the broker may close the socket before paho even sends CONNECT: checked below
    finally:
        client.loop_stop()
        client.disconnect()
    # Whichever way the broker refused it, no session was ever established.
    assert not connected.is_set()


# ---------------------------------------------------------------- shipped config and scripts


def test_shipped_mosquitto_conf_serves_tls_and_loopback_only_plain(
    tmp_path: Path, room_certs: TlsFiles
) -> None:
    poker = install_kit(tmp_path / "poker", room_certs, users=USERS)
    plain = free_port()
    with ShippedBroker(tmp_path / "broker", poker, plain_port=plain) as broker:
        assert not connack(broker, "room").is_failure
        assert connack(broker, "room", "wrong-password").is_failure
        assert connack(broker, None).is_failure  # allow_anonymous false
        local = V5Client(broker, "room", tls=False, port=plain)
        try:
            assert local.connack is not None and not local.connack.is_failure
            assert local.publish(f"{PREFIX}/events").value == 0x87  # the same ACL
        finally:
            local.close()
        assert f"Opening ipv4 listen socket on port {plain}" in broker.log_file.read_text()


def test_certificate_rotation_keeps_the_ca_and_reloads_without_dropping_clients(
    tmp_path: Path,
) -> None:
    certs = make_room_certs(tmp_path / "certs")
    ca_before = certs.ca_file.read_bytes()
    first = der(certs.cert_file)
    workdir = tmp_path / "broker"
    with Mosquitto(workdir, users=USERS, acl_file=EXAMPLE_ACL, tls=certs) as broker:
        assert peer_certificate(broker.host, broker.port, certs.ca_file, "localhost") == first
        with Subscriber(broker, f"{PREFIX}/#", username="room") as room:
            make_room_certs(tmp_path / "certs")  # renew: new server key and certificate
            assert certs.ca_file.read_bytes() == ca_before, "the CA must not change"
            renewed = der(certs.cert_file)
            assert renewed != first
            assert (tmp_path / "certs" / "server.crt.prev").exists()
            broker.reload()  # systemctl reload mosquitto
            deadline = time.monotonic() + 15
            seen = first
            while seen != renewed and time.monotonic() < deadline:
                time.sleep(0.1)
                seen = peer_certificate(broker.host, broker.port, certs.ca_file, "localhost")
            assert seen == renewed, "the broker did not take the renewed certificate"
            # A client connected before the reload is still there.
            table = V5Client(broker, "table-t01")
            try:
                assert not table.publish(f"{PREFIX}/alerts", b"after reload").is_failure
            finally:
                table.close()
            assert room.wait_for(lambda m: any(x.payload == b"after reload" for x in m), 10)


def test_revoking_an_identity_takes_effect_on_reload(mosquitto_room: Mosquitto) -> None:
    assert mosquitto_room.password_file is not None
    room = Subscriber(mosquitto_room, "#", username="room")
    tv = Subscriber(mosquitto_room, f"{PREFIX}/holecards", username="tv")
    table = V5Client(mosquitto_room, "table-t01")
    try:
        assert not table.publish(f"{PREFIX}/holecards", b"before").is_failure
        assert tv.wait_for(lambda m: len(m) == 1, 10)
        # TV's password leaked: a new password file without it, then a reload.
        make_room_passwd(
            mosquitto_room.password_file, {"table-t01": USERS["table-t01"], "room": USERS["room"]}
        )
        mosquitto_room.reload()
        deadline = time.monotonic() + 10
        while connack(mosquitto_room, "tv").value == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert connack(mosquitto_room, "tv").is_failure, "tv can still log in"
        # The connected TV client was cut off at the reload; the others were not.
        assert not table.publish(f"{PREFIX}/holecards", b"after").is_failure
        assert not table.publish(f"{PREFIX}/events", b"after").is_failure
        assert room.wait_for(lambda m: any(x.payload == b"after" for x in m), 10)
        assert [m.payload for m in tv.messages()] == [b"before"]
    finally:
        table.close()
        room.close()
        tv.close()


def _script(
    script: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(script), *args],
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_make_certs_needs_the_broker_names(tmp_path: Path) -> None:
    done = _script(MAKE_CERTS, "--dir", str(tmp_path / "c"))
    assert done.returncode == 2 and "--san" in done.stderr
    assert not (tmp_path / "c").exists()
    done = _script(
        MAKE_CERTS, "--dir", str(tmp_path / "c"), env={"SANS": "broker.room.lan,10.1.2.3"}
    )
    assert done.returncode == 0, done.stderr
    text = subprocess.run(
        ["openssl", "x509", "-in", str(tmp_path / "c" / "server.crt"), "-noout", "-text"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "DNS:broker.room.lan" in text and "IP Address:10.1.2.3" in text
    assert oct((tmp_path / "c" / "ca.key").stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "c" / "server.key").stat().st_mode & 0o777) == "0o600"


def test_make_passwd_refuses_missing_or_short_passwords(tmp_path: Path) -> None:
    target = tmp_path / "passwd"
    env = password_env(USERS)
    missing = {k: v for k, v in env.items() if k != "TV_PASSWORD"} | {"TV_PASSWORD": ""}
    done = _script(MAKE_PASSWD, str(target), env=missing)
    assert done.returncode == 2 and "TV_PASSWORD" in done.stderr
    done = _script(MAKE_PASSWD, str(target), env=env | {"ROOM_PASSWORD": "short"})
    assert done.returncode == 2 and "shorter than 8" in done.stderr
    assert list(tmp_path.iterdir()) == [], "nothing written on a refusal"
    done = _script(MAKE_PASSWD, str(target), env=env)
    assert done.returncode == 0, done.stderr
    assert [line.split(":")[0] for line in target.read_text().splitlines()] == list(USERS)
    assert "secret" not in target.read_text()
    assert oct(target.stat().st_mode & 0o777) == "0o600"
