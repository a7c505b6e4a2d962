"""Why the table cannot reach its broker, said once and published when it is back; a broker
restart costs seconds, not tens of them; the status heartbeat (real mosquitto, TLS).

Each failure mode is made real: a broker certificate from another CA, one that names another
host, a password file without the table, nothing listening. The publisher logs the cause
once however many attempts fail, and once connected publishes it in the retained `status`
(`last_connect_error`, `reconnected_after`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.config import BrokerConfig
from controller.publisher import Publisher
from controller.schema import validate
from kernel.messages import EVENTS, Message
from tests.broker import (
    EXAMPLE_ACL,
    USERS,
    Mosquitto,
    Received,
    Subscriber,
    free_port,
    make_room_certs,
    write_password_file,
)

pytestmark = pytest.mark.timeout(120)

PREFIX = "poker/sim/t01"
STATUS = {"table": "t01", "room": "sim", "version": "0.1.0"}
LOGGER = "tablectl.connection"


@pytest.fixture
def publishers() -> Iterator[list[Publisher]]:
    created: list[Publisher] = []
    yield created
    for pub in created:
        pub.stop(timeout=0.5)


def make(publishers: list[Publisher], config: BrokerConfig) -> Publisher:
    pub = Publisher(config, PREFIX, "table-t01", dict(STATUS))
    publishers.append(pub)
    pub.start()
    return pub


def wait_until(predicate: Callable[[], bool], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def cannot_connect(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and "cannot" in r.msg]


def statuses(sub: Subscriber) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in sub.messages(f"{PREFIX}/status")]


def online_status(broker: Mosquitto) -> dict[str, Any]:
    """The retained status a room reading it now gets (checked against the schema)."""
    with Subscriber(broker, f"{PREFIX}/status", username="room") as room:

        def got_online(msgs: list[Received]) -> bool:
            return any(json.loads(m.payload)["state"] == "online" for m in msgs)

        assert room.wait_for(got_online, 10)
        status = [json.loads(m.payload) for m in room.messages()][-1]
    validate(Message("status", status, 1, True))
    return status


def fails_then_said_once(
    pub: Publisher, caplog: pytest.LogCaptureFixture, attempts: int = 3
) -> str:
    """Wait for `attempts` failed attempts; the cause was logged exactly once."""
    assert wait_until(lambda: pub.stats()["connect_failures"] >= attempts, 30)
    assert not pub.connected
    said = cannot_connect(caplog)
    assert len(said) == 1, said
    assert pub.connect_error is not None and pub.connect_error in said[0]
    return said[0]


def test_unknown_ca_is_said_once_and_shown_in_status_once_back(
    tmp_path: Path, publishers: list[Publisher], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    room_ca = make_room_certs(tmp_path / "room-ca")  # what the table trusts
    other_ca = make_room_certs(tmp_path / "other-ca")  # same names, another CA
    broker = Mosquitto(tmp_path / "mq", users=USERS, acl_file=EXAMPLE_ACL, tls=other_ca)
    with broker:
        config = broker.broker_config("table-t01", ca_file=room_ca.ca_file)
        pub = make(publishers, config)
        said = fails_then_said_once(pub, caplog)
        assert "unknown CA" in said and "127.0.0.1" in said, said
        broker.tls = room_ca  # the broker gets its certificate from the room CA
        broker.restart()
        assert wait_until(lambda: pub.connected, 15)
        status = online_status(broker)
    assert status["state"] == "online"
    assert "unknown CA" in status["last_connect_error"]
    assert status["reconnected_after"] is None  # its first connection
    assert [m for m in caplog.records if "after" in m.getMessage() and "last error" in m.msg]


def test_wrong_host_name_is_said_once_and_shown_in_status(
    tmp_path: Path, publishers: list[Publisher], caplog: pytest.LogCaptureFixture
) -> None:
    certs = make_room_certs(tmp_path / "ca", sans=("broker.room.lan",))  # not 127.0.0.1
    broker = Mosquitto(tmp_path / "mq", users=USERS, acl_file=EXAMPLE_ACL, tls=certs)
    with broker:
        pub = make(publishers, broker.broker_config("table-t01"))
        said = fails_then_said_once(pub, caplog)
        assert "wrong host name" in said, said
        broker.tls = make_room_certs(tmp_path / "ca", sans=("127.0.0.1",))  # renewed, same CA
        broker.restart()
        assert wait_until(lambda: pub.connected, 15)
        assert "wrong host name" in online_status(broker)["last_connect_error"]


def test_refused_credentials_are_said_once_and_shown_in_status(
    tmp_path: Path, publishers: list[Publisher], caplog: pytest.LogCaptureFixture
) -> None:
    without_table = {u: p for u, p in USERS.items() if u != "table-t01"}
    broker = Mosquitto(tmp_path / "mq", users=without_table, acl_file=EXAMPLE_ACL)
    with broker:
        pub = make(publishers, broker.broker_config("table-t01"))
        said = fails_then_said_once(pub, caplog)
        assert "refused the connection as 'table-t01'" in said, said
        assert "authori" in said.lower() or "password" in said.lower(), said
        assert broker.password_file is not None
        write_password_file(broker.password_file, USERS)  # the table is added ...
        broker.reload()  # ... and the broker reloaded
        assert wait_until(lambda: pub.connected, 15)
        status = online_status(broker)
    assert "refused the connection as 'table-t01'" in status["last_connect_error"]


def test_refused_tcp_connection_is_said_once_and_shown_in_status(
    tmp_path: Path, publishers: list[Publisher], caplog: pytest.LogCaptureFixture
) -> None:
    broker = Mosquitto(tmp_path / "mq", port=free_port(), users=USERS, acl_file=EXAMPLE_ACL)
    pub = make(publishers, broker.broker_config("table-t01"))  # nothing listens yet
    said = fails_then_said_once(pub, caplog, attempts=4)
    assert "connection refused" in said, said
    with broker:
        assert wait_until(lambda: pub.connected, 15)
        assert "connection refused" in online_status(broker)["last_connect_error"]


def test_back_within_seconds_after_a_broker_restart_and_says_how_long_it_was_away(
    tmp_path: Path, publishers: list[Publisher], caplog: pytest.LogCaptureFixture
) -> None:
    """Down for 10 s: paho's default backoff (1 s doubling to 30 s) would wait up to 16 s
    more after the broker is back; ours is capped at 4 s, with jitter."""
    caplog.set_level(logging.INFO)
    broker = Mosquitto(tmp_path / "mq", persistence=True).start()
    try:
        room = Subscriber(broker, f"{PREFIX}/#", client_id="room-server", persistent=True)
        pub = make(publishers, broker.broker_config())
        assert wait_until(lambda: pub.connected)
        caplog.clear()
        broker.stop()
        assert wait_until(lambda: not pub.connected)
        time.sleep(10.0)  # the broker is down: attempts fail meanwhile
        payload = {"type": "x", "seq": 1, "hand": None, "t": 0.0, "table": "t01"}
        pub.publish(Message(EVENTS, payload))  # made while the broker is away
        assert pub.stats()["connect_failures"] >= 4
        broker.start()
        back = time.monotonic()
        assert wait_until(lambda: pub.connected, 15)
        took = time.monotonic() - back
        assert took < 5.0, f"back {took:.1f} s after the broker"
        assert room.wait_for(lambda m: any(x.topic.endswith("/events") for x in m), 10)
        assert pub.wait_idle(5)
        room.close()
        status = online_status(broker)
        assert status["reconnected_after"] >= 10.0
        assert "connection refused" in status["last_connect_error"]
        # One line when the connection went, one for the cause, one when it came back.
        messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
        assert len(messages) == 3, messages
        assert "lost the connection" in messages[0]
        assert "connection refused" in messages[1]
        assert "connected to the broker" in messages[2] and "last error" in messages[2]
    finally:
        broker.stop()


def test_status_heartbeat_lets_the_room_age_a_dead_table_or_broker(
    mosquitto: Mosquitto, publishers: list[Publisher]
) -> None:
    """`status` comes again every `heartbeat` seconds with a new `t`: when the broker itself
    dies no will is sent, and the retained "online" it keeps ages, which the room sees."""
    with Subscriber(mosquitto, f"{PREFIX}/status") as room:
        pub = make(publishers, mosquitto.broker_config(heartbeat=1))
        assert room.wait_for(lambda m: len(m) >= 4, 10)
        got = statuses(room)[:4]
    assert [s["state"] for s in got] == ["online"] * 4
    assert all(s["heartbeat"] == 1 for s in got)
    times = [s["t"] for s in got]
    assert times == sorted(times) and 2.0 <= times[3] - times[0] <= 4.5, times
    for status in got:
        validate(Message("status", status, 1, True))
    assert pub.stats()["rejected"] == 0


def test_no_heartbeat_when_it_is_off(mosquitto: Mosquitto, publishers: list[Publisher]) -> None:
    with Subscriber(mosquitto, f"{PREFIX}/status") as room:
        make(publishers, mosquitto.broker_config(heartbeat=0))
        assert room.wait_for(lambda m: len(m) >= 1, 10)
        time.sleep(2.5)
        (only,) = statuses(room)
    assert "heartbeat" not in only and only["last_connect_error"] is None


def test_backoff_is_short_capped_and_jittered() -> None:
    from controller.connection import Backoff

    low = Backoff(0.5, 4.0, rng=lambda: 0.0)  # the shortest draw: half of each step
    assert [low.next() for _ in range(6)] == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    high = Backoff(0.5, 4.0, rng=lambda: 0.999999)
    waits = [high.next() for _ in range(8)]
    assert max(waits) <= 4.0 and waits[-1] == pytest.approx(4.0)
    high.reset()
    assert high.next() == pytest.approx(0.5)
    with pytest.raises(ValueError):
        Backoff(5.0, 4.0)
