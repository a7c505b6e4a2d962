"""A broker that acknowledged a hand's hole cards and died before passing them on: TV still
ends with every hole card, asked again from the table's journal by hole-card `seq`.

The table is the real daemon on the simulated boards; the broker a real mosquitto without
persistence; the TV service reaches it through a small TCP relay that this test controls,
which holds what the broker sends TV. The hand's hole cards are dealt, the broker
acknowledges every one of them to the table (its outbox is empty), and is then SIGKILLed:
what it held for TV (in the relay, standing for its memory) is gone with it. The broker
starts again empty; the table and TV reconnect. The keys released afterwards (and the
table's `status`) name hole-card seqs TV never got: it asks on `tvreq/holecards`, the table
sends them again from its journal, and every card of the hand goes on air.
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import threading
import time
from pathlib import Path

import pytest

from kernel.inputs import TagIn
from tests.broker import Mosquitto, Subscriber, free_port
from tests.tv_helpers import flop_plan, hand_events
from tests.tv_rig import PREFIX, SimTable, TvRig, wait_until

pytestmark = pytest.mark.timeout(180)

SEAL = 2.0
FINALS = {1: ["Ah", "Kh"], 2: ["Qs", "Qc"], 3: ["7d", "6d"], 4: ["2c", "9s"]}


class Relay:
    """TCP between TV and the broker; `hold` keeps what the broker sends, `drop` loses it
    and cuts every connection (as the broker's death does)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.held = threading.Event()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, up]
            threading.Thread(target=self._pump, args=(client, up, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, downstream: bool) -> None:
        kept: list[bytes] = []
        try:
            while data := src.recv(65536):
                if downstream and self.held.is_set():
                    kept.append(data)  # what the broker would still have to deliver
                    continue
                dst.sendall(data)
        except OSError:
            pass
        for sock in (src, dst):  # shutdown first: it wakes the other direction's recv
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def drop(self) -> None:
        """Lose what is held and cut the connections."""
        with self._lock:
            conns, self._conns = self._conns, []
        for sock in conns:
            try:
                sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            except OSError:
                pass
        self.held.clear()

    def close(self) -> None:
        self._server.close()
        self.drop()


def _kill(broker: Mosquitto) -> None:
    """SIGKILL: nothing of what it held is saved (no persistence)."""
    proc = broker._proc
    assert proc is not None
    proc.kill()
    proc.wait(10)
    broker._proc = None


def test_a_broker_killed_after_acknowledging_a_hands_hole_cards_loses_none_for_tv(
    tmp_path: Path,
) -> None:
    with Mosquitto(tmp_path / "mq", persistence=False) as broker:
        relay = Relay(broker.port)
        tv_broker = dataclasses.replace(
            broker.broker_config(None, client_id="tablectl-tv-heal"), port=relay.port
        )
        rig = TvRig(delay=1.0, broker=tv_broker)
        assert rig.service.subscriber is not None
        assert rig.service.subscriber.subscribed.wait(10)
        table = SimTable(tmp_path, broker, None, seal_delay=SEAL)
        watcher = Subscriber(broker, f"{PREFIX}/holecards")
        events = hand_events(flop_plan())
        last_card = max(
            i for i, e in enumerate(events) if isinstance(e, TagIn) and e.antenna.startswith("seat")
        )
        try:
            relay.held.set()  # from here on, the broker's deliveries to TV wait in it
            table.play(events[: last_card + 1])
            made = 2 * len(FINALS)  # one sealed message per card read
            assert wait_until(lambda: table.daemon.seal.hseq >= made, 20)
            publisher = table.daemon.publisher
            assert publisher is not None and publisher.wait_idle(10)  # all acknowledged
            assert rig.desk.holes.sealed == {}  # none reached TV yet
            _kill(broker)
            relay.drop()
            broker.start()
            assert wait_until(
                lambda: rig.service.subscriber is not None and rig.service.subscriber.connected, 30
            )
            assert wait_until(
                lambda: table.daemon.publisher is not None and table.daemon.publisher.connected, 30
            )
            table.play(events[last_card + 1 :])
            holes = rig.desk.holes

            def all_opened() -> bool:
                rig.clock.advance(1.0)  # TV's own clock: its heal asks after a grace
                time.sleep(0.05)
                return set(range(1, made + 1)) <= set(holes.opened)

            assert wait_until(all_opened, 60), (holes.missing, sorted(holes.sealed), made)
            assert holes.requests >= 1 and holes.healed >= 1
            rig.clock.advance(60.0)
            rig.settle()
            feed = rig.http.get("/feed/t01.json").json()
            shown = {s["seat"]: s["cards"] for s in feed["seats"] if s["cards"]}
            assert shown == FINALS
        finally:
            watcher.close()
            table.stop()
            rig.close()
            relay.close()
