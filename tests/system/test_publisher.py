"""The MQTT publisher against a real mosquitto: order, retain, outages, last will, ACL, TLS."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.config import BrokerConfig
from controller.publisher import CommandSink, Publisher, PublishError
from kernel.messages import ALERTS, EVENTS, HOLECARDS, STATE, Message
from tests.broker import (
    EXAMPLE_ACL,
    EXAMPLE_PASSWD,
    ROOT,
    Mosquitto,
    Received,
    Subscriber,
    free_port,
)

pytestmark = pytest.mark.timeout(60)

PREFIX = "poker/sim/t01"  # the room of the shipped ACL (examples/mosquitto/acl)
STATUS = {"table": "t01", "room": "sim", "version": "0.1.0"}


def event(seq: int) -> Message:
    payload = {"type": "action", "seq": seq, "hand": 1, "t": float(seq), "table": "t01"}
    payload |= {"seat": 3, "action": "call", "amount": 200, "rule": None}
    return Message(EVENTS, payload, qos=1, retain=False)


def state(seq: int) -> Message:
    return Message(STATE, {"table": "t01", "seq": seq}, qos=1, retain=True)


def holecards(seat: int) -> Message:
    payload = {"table": "t01", "hand": 1, "seat": seat, "cards": ["As", "Kd"], "t": 1.0}
    return Message(HOLECARDS, payload, qos=1, retain=False)


def alert(n: int) -> Message:
    payload = {"table": "t01", "type": "floor", "severity": "info", "message": f"a{n}"}
    return Message(ALERTS, payload | {"hand": None, "t": 1.0}, qos=1, retain=False)


def payloads(received: list[Received], topic: str) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in received if m.topic == f"{PREFIX}/{topic}"]


def seqs(received: list[Received]) -> list[int]:
    return [p["seq"] for p in payloads(received, EVENTS)]


def first_seen(values: list[int]) -> list[int]:
    """The values in order of first arrival (what a subscriber de-duplicating by seq keeps)."""
    seen: set[int] = set()
    out = []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


@pytest.fixture
def publishers() -> Iterator[list[Publisher]]:
    """Publishers created by a test, stopped at the end whatever happened."""
    created: list[Publisher] = []
    yield created
    for pub in created:
        pub.stop(timeout=0.5)


def make(
    publishers: list[Publisher], config: BrokerConfig, prefix: str = PREFIX, **kwargs: Any
) -> Publisher:
    kwargs.setdefault("reconnect_max_delay", 1)
    pub = Publisher(config, prefix, f"tablectl-test-{len(publishers)}", dict(STATUS), **kwargs)
    publishers.append(pub)
    return pub


def wait_until(predicate: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_events_arrive_in_order_with_qos1_not_retained(
    mosquitto: Mosquitto, publishers: list[Publisher]
) -> None:
    with Subscriber(mosquitto, f"{PREFIX}/#") as sub:
        connections: list[bool] = []
        pub = make(publishers, mosquitto.broker_config(), on_connection=connections.append)
        pub.start()
        for seq in range(1, 301):
            pub.publish(event(seq))
        pub.publish(holecards(3))
        pub.publish(alert(1))
        assert pub.wait_idle(10)
        assert sub.wait_for(lambda r: len(seqs(r)) >= 300)
        received = sub.messages()
        assert seqs(received) == list(range(1, 301))
        for m in received:
            assert m.qos == 1
            assert not m.retain  # live delivery
        assert payloads(received, HOLECARDS)[0]["cards"] == ["As", "Kd"]
        assert payloads(received, ALERTS)[0]["message"] == "a1"
        status = payloads(received, "status")
        assert status[0]["state"] == "online" and status[0]["table"] == "t01"
        assert pub.connected and connections == [True]
        stats = pub.stats()
        assert stats["pending"] == 0 and stats["dropped"] == 0 and stats["reconnects"] == 0
        assert stats["acked"] == stats["published"] == 303  # 300 events, holecards, alert, status


def test_late_subscriber_gets_retained_status_and_latest_state_only(
    mosquitto: Mosquitto, publishers: list[Publisher]
) -> None:
    pub = make(publishers, mosquitto.broker_config())
    pub.start()
    for seq in range(1, 4):
        pub.publish(event(seq))
        pub.publish(state(seq))
    pub.publish(holecards(5))
    assert pub.wait_idle(10)
    with Subscriber(mosquitto, f"{PREFIX}/#") as late:
        assert late.wait_for(lambda r: len(r) >= 2)
        time.sleep(0.3)  # anything else retained would have arrived by now
        received = late.messages()
        assert sorted(m.topic for m in received) == [f"{PREFIX}/state", f"{PREFIX}/status"]
        assert all(m.retain and m.qos == 1 for m in received)
        assert payloads(received, STATE) == [{"table": "t01", "seq": 3}]
        assert payloads(received, "status")[0]["state"] == "online"


def test_retained_hole_cards_are_refused(mosquitto: Mosquitto, publishers: list[Publisher]) -> None:
    pub = make(publishers, mosquitto.broker_config())
    with pytest.raises(PublishError):
        pub.publish(Message(HOLECARDS, {"seat": 1}, retain=True))


def test_broker_outage_loses_nothing_and_keeps_order(
    tmp_path: Path, publishers: list[Publisher]
) -> None:
    broker = Mosquitto(tmp_path / "broker", persistence=True).start()
    try:
        # A room server with a persistent session: the broker queues for it while it is away.
        sub = Subscriber(broker, f"{PREFIX}/events", client_id="room-server", persistent=True)
        pub = make(publishers, broker.broker_config())
        pub.start()
        for seq in range(1, 51):
            pub.publish(event(seq))
        assert pub.wait_idle(10)

        broker.stop()
        assert wait_until(lambda: not pub.connected)
        began = time.monotonic()
        for seq in range(51, 151):
            pub.publish(event(seq))  # never raises, never blocks
        assert time.monotonic() - began < 1.0
        assert not pub.wait_idle(0.5)
        assert pub.stats()["pending"] >= 100

        broker.start()  # same port, same persistence file
        assert pub.wait_idle(20)
        assert sub.wait_for(lambda r: 150 in seqs(r), 20)
        got = seqs(sub.messages())
        assert first_seen(got) == list(range(1, 151))  # none lost, in order (dups allowed)
        stats = pub.stats()
        assert stats["reconnects"] >= 1 and stats["dropped"] == 0 and stats["pending"] == 0
        sub.close()
    finally:
        broker.stop()


def test_broker_restart_while_messages_are_in_flight(
    tmp_path: Path, publishers: list[Publisher]
) -> None:
    broker = Mosquitto(tmp_path / "broker", persistence=True).start()
    try:
        sub = Subscriber(broker, f"{PREFIX}/events", client_id="room-server", persistent=True)
        pub = make(publishers, broker.broker_config())
        pub.start()
        assert wait_until(lambda: pub.connected)
        total = 3000

        def produce() -> None:
            for seq in range(1, total + 1):
                pub.publish(event(seq))
                if seq % 50 == 0:
                    time.sleep(0.005)

        producer = threading.Thread(target=produce)
        producer.start()
        assert wait_until(lambda: pub.stats()["acked"] >= 300)
        broker.stop()  # mid-stream: some messages are in flight, unacknowledged
        time.sleep(0.3)
        broker.start()
        producer.join(10)
        assert pub.wait_idle(30)
        # the subscriber reconnects on its own (every second) and the broker then sends
        # what it queued for its session at once: here about a second in all
        assert sub.wait_for(lambda r: total in seqs(r), 20), (
            f"the subscriber saw {len(set(seqs(sub.messages())))} of {total} events"
        )
        assert first_seen(seqs(sub.messages())) == list(range(1, total + 1))
        assert pub.stats()["reconnects"] >= 1
        sub.close()
    finally:
        broker.stop()


def test_outbox_limit_drops_oldest_non_events_first_and_coalesces_state(
    tmp_path: Path, publishers: list[Publisher]
) -> None:
    port = free_port()  # nothing listens there yet
    broker = Mosquitto(tmp_path / "late-broker", port=port)
    pub = make(publishers, broker.broker_config(), outbox_limit=10)
    pub.start()
    for n in range(1, 9):
        pub.publish(alert(n))
        pub.publish(event(n))
    for seq in range(1, 4):
        pub.publish(state(seq))  # coalesced: only the latest retained one is kept
    stats = pub.stats()
    assert stats["pending"] == 10
    assert stats["coalesced"] == 2
    assert stats["dropped"] == 7  # kept: 8 events, the latest state, the last alert
    with broker:
        with Subscriber(broker, f"{PREFIX}/#") as sub:
            assert pub.wait_idle(20)
            assert sub.wait_for(lambda r: len(seqs(r)) == 8)
            time.sleep(0.2)
            received = sub.messages()
            assert seqs(received) == list(range(1, 9))
            # the last alert gave way to "status online", queued at connection time
            assert payloads(received, ALERTS) == []
            assert payloads(received, "status")[0]["state"] == "online"
            assert payloads(received, STATE) == [{"table": "t01", "seq": 3}]
        pub.stop()


def test_a_full_outbox_of_events_drops_the_oldest_and_keeps_the_mark_there(
    tmp_path: Path, publishers: list[Publisher]
) -> None:
    """Nothing but events and no broker: the oldest give way (and the acknowledged mark
    stays before them, so a restart sends them again from the journal)."""
    broker = Mosquitto(tmp_path / "late-broker", port=free_port())
    pub = make(publishers, broker.broker_config(), outbox_limit=5)
    pub.start()
    for seq in range(1, 9):
        pub.publish(event(seq))
    assert pub.stats()["dropped"] == 3
    with broker, Subscriber(broker, f"{PREFIX}/events") as sub:
        assert pub.wait_idle(20)
        assert sub.wait_for(lambda r: len(seqs(r)) >= 4)
        time.sleep(0.2)
        assert seqs(sub.messages()) == [5, 6, 7, 8]  # the status took one place
        assert pub.acked_seq == 0  # 1..4 never acknowledged: the mark stays
        pub.stop()


def test_graceful_stop_leaves_retained_offline(
    mosquitto: Mosquitto, publishers: list[Publisher]
) -> None:
    pub = make(publishers, mosquitto.broker_config())
    pub.start()
    assert wait_until(lambda: pub.connected)
    pub.stop()
    assert not pub.connected
    with Subscriber(mosquitto, f"{PREFIX}/status") as late:
        assert late.wait_for(lambda r: len(r) >= 1)
        (status,) = late.messages()
        assert status.retain
        assert json.loads(status.payload)["state"] == "offline"


CHILD = """
import sys, time
from controller.config import BrokerConfig
from kernel.messages import Message
from controller.publisher import Publisher
pub = Publisher(BrokerConfig(host="127.0.0.1", port=int(sys.argv[1])), sys.argv[2], "child",
                {"table": "t01", "room": "r1", "version": "0.1.0"})
pub.start()
pub.publish(Message("events", {"type": "x", "seq": 1, "hand": None, "t": 0.0, "table": "t01"}))
assert pub.wait_idle(10)
print("ready", flush=True)
time.sleep(60)
"""


def test_last_will_offline_when_the_daemon_dies(mosquitto: Mosquitto) -> None:
    with Subscriber(mosquitto, f"{PREFIX}/status") as live:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(mosquitto.port), PREFIX],
            stdout=subprocess.PIPE,
            env=env,
            cwd=ROOT,
        )
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == b"ready"
            assert live.wait_for(lambda r: len(r) == 1)
            assert json.loads(live.messages()[0].payload)["state"] == "online"
            child.send_signal(signal.SIGKILL)  # no DISCONNECT: the broker sends the will
            child.wait(10)
            assert live.wait_for(lambda r: len(r) == 2)
            will = json.loads(live.messages()[1].payload)
            assert will["state"] == "offline"
            assert {will["table"], will["room"], will["version"]} == {"t01", "r1", "0.1.0"}
        finally:
            child.kill()
            child.wait(10)
    with Subscriber(mosquitto, f"{PREFIX}/status") as late:
        assert late.wait_for(lambda r: len(r) == 1)
        assert late.messages()[0].retain
        assert json.loads(late.messages()[0].payload)["state"] == "offline"


def test_acl_room_never_sees_hole_cards_tv_does_and_commands_arrive(
    mosquitto_acl: Mosquitto, publishers: list[Publisher]
) -> None:
    broker = mosquitto_acl
    commands: list[tuple[str, bytes]] = []
    got_command = threading.Event()

    def on_command(
        name: str, payload: bytes, ack: Callable[[], None], *, retained: bool = False
    ) -> None:
        commands.append((name, payload))
        ack()
        got_command.set()

    room = Subscriber(broker, "poker/#", username="room")
    tv = Subscriber(broker, ["poker/+/+/holecards", "poker/+/+/state"], username="tv")
    try:
        pub = make(publishers, broker.broker_config("table-t01"), on_command=on_command)
        pub.start()
        pub.publish(event(1))
        pub.publish(holecards(4))
        pub.publish(state(1))
        pub.publish(event(2))
        assert pub.wait_idle(10)
        assert pub.stats()["rejected"] == 0
        assert room.wait_for(lambda r: seqs(r) == [1, 2])
        assert tv.wait_for(lambda r: len(payloads(r, HOLECARDS)) == 1 and len(r) >= 2)

        # The room may not forge events, but may send commands to the table.
        forged = json.dumps({"type": "action", "seq": 99, "hand": 1, "t": 0, "table": "t01"})
        room.publish(f"{PREFIX}/events", forged.encode())
        seat = {"name": "seat", "seat": 3, "player": "Alice", "stack": 20000}
        room.publish(f"{PREFIX}/cmd/seat", json.dumps(seat).encode())
        assert got_command.wait(10)
        assert commands == [("seat", json.dumps(seat).encode())]
        # The room reads its own command back, after where the forged event would be.
        assert room.wait_for(lambda r: any(m.topic.endswith("/cmd/seat") for m in r))

        assert seqs(room.messages()) == [1, 2]  # the forged event never arrived
        assert payloads(room.messages(), HOLECARDS) == []
        assert {m.topic for m in room.messages()} == {
            f"{PREFIX}/{t}" for t in ("status", "events", "state", "cmd/seat")
        }
        assert {m.topic for m in tv.messages()} == {f"{PREFIX}/holecards", f"{PREFIX}/state"}
        assert payloads(tv.messages(), HOLECARDS)[0]["seat"] == 4
    finally:
        room.close()
        tv.close()


def test_acl_table_cannot_write_another_table(
    mosquitto_acl: Mosquitto, publishers: list[Publisher]
) -> None:
    with Subscriber(mosquitto_acl, "poker/#", username="room") as room:
        pub = make(publishers, mosquitto_acl.broker_config("table-t01"), prefix="poker/sim/t02")
        pub.start()
        pub.publish(event(1))
        assert pub.wait_idle(10)  # acknowledged with a failure reason code (MQTT v5)
        assert pub.stats()["rejected"] == 2  # status online and the event
        time.sleep(0.3)
        assert room.messages() == []


def test_wrong_password_never_connects_and_never_raises(
    mosquitto_acl: Mosquitto, publishers: list[Publisher]
) -> None:
    pub = make(publishers, mosquitto_acl.broker_config("table-t01", password="wrong"))
    pub.start()
    pub.publish(event(1))
    time.sleep(1.0)
    assert not pub.connected
    assert pub.stats()["pending"] == 1


def test_tls_listener(mosquitto_tls: Mosquitto, publishers: list[Publisher]) -> None:
    config = mosquitto_tls.broker_config("table-t01")
    assert config.tls and config.ca_file is not None
    with Subscriber(mosquitto_tls, f"{PREFIX}/holecards", username="tv") as tv:
        pub = make(publishers, config)
        pub.start()
        pub.publish(holecards(2))
        assert pub.wait_idle(10)
        assert tv.wait_for(lambda r: len(r) == 1)
        assert payloads(tv.messages(), HOLECARDS)[0]["cards"] == ["As", "Kd"]


def test_tls_refuses_an_untrusted_server(
    mosquitto_tls: Mosquitto, publishers: list[Publisher]
) -> None:
    config = mosquitto_tls.broker_config("table-t01", ca_file=None)  # system CAs only
    assert config.tls and config.ca_file is None
    pub = make(publishers, config)
    pub.start()
    pub.publish(event(1))
    time.sleep(1.0)
    assert not pub.connected
    assert pub.stats()["pending"] == 1


def test_shipped_example_password_file_authenticates(tmp_path: Path) -> None:
    shipped = Mosquitto(tmp_path / "shipped", password_file=EXAMPLE_PASSWD, acl_file=EXAMPLE_ACL)
    with shipped, Subscriber(shipped, "poker/#", username="room") as room:
        assert room.granted == [1]
        with pytest.raises(RuntimeError):
            Subscriber(shipped, "poker/#", username="room", password="wrong", timeout=1.5)


def test_a_command_not_acknowledged_comes_again_to_the_next_run(
    mosquitto: Mosquitto, publishers: list[Publisher]
) -> None:
    """The table acknowledges a command only once it has it (journaled): one it had not
    taken when it went away is delivered again to its next run (same client id, session
    kept by the broker), and so is one sent while no run was connected."""
    got: list[tuple[int, bytes]] = []
    runs = 0
    taken = threading.Event()

    def handler(run: int, ack_it: bool) -> CommandSink:
        def on_command(
            name: str, payload: bytes, ack: Callable[[], None], *, retained: bool = False
        ) -> None:
            got.append((run, payload))
            if ack_it:
                ack()
            taken.set()

        return on_command

    def run(ack_it: bool) -> Publisher:
        nonlocal runs
        runs += 1
        pub = Publisher(
            mosquitto.broker_config(),
            PREFIX,
            "tablectl-same-table",
            dict(STATUS),
            on_command=handler(runs, ack_it),
            reconnect_max_delay=1,
        )
        publishers.append(pub)
        pub.start()
        assert wait_until(lambda: pub.connected)
        return pub

    room = Subscriber(mosquitto, f"{PREFIX}/status")
    try:
        first = run(ack_it=False)
        time.sleep(0.3)  # its subscription is in place
        room.publish(f"{PREFIX}/cmd/pause", b'{"id": "p1"}')
        assert taken.wait(10)
        first.stop()  # gone before taking it: no PUBACK was sent
        room.publish(f"{PREFIX}/cmd/resume", b'{"id": "r1"}')  # sent while no run is up
        taken.clear()
        run(ack_it=True)
        assert wait_until(lambda: len(got) >= 3)
        assert [(r, json.loads(p)["id"]) for r, p in got] == [(1, "p1"), (2, "p1"), (2, "r1")]
        # Taken this time: a third run gets nothing again.
        publishers[-1].stop()
        run(ack_it=True)
        time.sleep(1.0)
        assert len(got) == 3
    finally:
        room.close()


def test_a_command_the_broker_kept_comes_flagged_retained_once_per_subscription(
    mosquitto: Mosquitto, publishers: list[Publisher]
) -> None:
    """A command published with retain=true is kept by the broker and would be sent to every
    new subscriber. The table subscribes with Retain As Published and Retain Handling 1: a
    kept command reaches it flagged `retained` (so it can refuse it: the daemon does), once
    for a new subscription, not again when it resumes its session; a live command comes
    unflagged; an empty retained message (the clearing of one) comes flagged too."""
    got: list[tuple[str, bool]] = []

    def on_command(
        name: str, payload: bytes, ack: Callable[[], None], *, retained: bool = False
    ) -> None:
        got.append((json.loads(payload)["id"] if payload else "", retained))
        ack()

    def table() -> Publisher:
        pub = Publisher(
            mosquitto.broker_config(),
            PREFIX,
            "tablectl-kept",
            dict(STATUS),
            on_command=on_command,
            reconnect_max_delay=1,
        )
        publishers.append(pub)
        pub.start()
        assert wait_until(lambda: pub.connected)
        return pub

    room = Subscriber(mosquitto, f"{PREFIX}/status")
    try:
        room.publish(f"{PREFIX}/cmd/pause", b'{"id": "stale"}', retain=True)
        first = table()
        assert wait_until(lambda: got == [("stale", True)]), got
        room.publish(f"{PREFIX}/cmd/resume", b'{"id": "live"}')
        room.publish(f"{PREFIX}/cmd/level", b'{"id": "kept-now"}', retain=True)
        assert wait_until(lambda: len(got) == 3), got
        assert got[1:] == [("live", False), ("kept-now", True)]
        first.stop()
        # The same table again within its session: what the broker kept is not sent again.
        table()
        time.sleep(0.5)  # its subscription is in place: a copy would be here by now
        room.publish(f"{PREFIX}/cmd/resume", b'{"id": "live-2"}')
        assert wait_until(lambda: len(got) == 4), got
        assert got[3] == ("live-2", False)
        room.publish(f"{PREFIX}/cmd/pause", b"", retain=True)  # clear them
        room.publish(f"{PREFIX}/cmd/level", b"", retain=True)
        assert wait_until(lambda: len(got) == 6), got
        assert got[4:] == [("", True), ("", True)]
        # ... and the broker keeps nothing now.
        with Subscriber(mosquitto, f"{PREFIX}/cmd/#") as other:
            assert not other.wait_for(lambda r: len(r) > 0, 0.5)
    finally:
        room.publish(f"{PREFIX}/cmd/pause", b"", retain=True)
        room.publish(f"{PREFIX}/cmd/level", b"", retain=True)
        room.close()


# --------------------------------------------------------------------------- the watermark


def _acking_publisher(broker: Mosquitto, acked: int = 0) -> Publisher:
    return Publisher(
        broker.broker_config(),
        PREFIX,
        "tablectl-t01",
        STATUS,
        acked_seq=acked,
        reconnect_min_delay=1,
        reconnect_max_delay=1,
    )


def test_the_watermark_follows_the_pubacks_and_stops_during_an_outage(
    mosquitto: Mosquitto,
) -> None:
    pub = _acking_publisher(mosquitto, acked=10)  # a restart that found 10 in the mark file
    pub.start()
    try:
        assert pub.acked_seq == 10
        for seq in range(11, 31):
            pub.publish(event(seq))
            pub.publish(holecards(seq))
        assert pub.wait_idle(20)
        assert pub.acked_seq == 30

        mosquitto.stop()
        for seq in range(31, 36):
            pub.publish(event(seq))
        time.sleep(0.5)  # give acks a chance to (wrongly) appear
        assert pub.acked_seq == 30  # nothing the broker did not acknowledge

        mosquitto.start()
        assert pub.wait_idle(30)
        assert pub.acked_seq == 35
    finally:
        pub.stop()
