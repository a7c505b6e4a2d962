"""Latency: a TAG_IN frame written by the board simulator to the message at a subscriber.

Beside it, in the same run and on the same mosquitto, the bare paho publish-to-subscribe
round trip. Each sample is one message at a time (send, wait for arrival), so this is
latency, not throughput. Usage: python -m bench.latency [--frames 5000] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from paho.mqtt.client import Client, MQTTMessage
from paho.mqtt.enums import CallbackAPIVersion

from bench.machine import machine
from controller.config import load_config
from controller.daemon import Daemon
from controller.localbroker import LocalBroker
from controller.registry import load_deck
from controller.trace import ButtonPress, Command

ROOT = Path(__file__).resolve().parent.parent


class Arrivals:
    """A subscriber that timestamps each arrival and wakes the waiter."""

    def __init__(self, port: int, topic: str) -> None:
        self.cond = threading.Condition()
        self.count = 0
        self.last = 0.0
        self.client = Client(CallbackAPIVersion.VERSION2, client_id=f"bench-sub-{topic[-9:]}")
        self.client.on_message = self._on_message
        ready = threading.Event()
        self.client.on_subscribe = lambda *_a: ready.set()
        self.client.on_connect = lambda c, *_a: c.subscribe(topic, qos=1)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        if not ready.wait(10):
            raise RuntimeError("subscriber did not subscribe")

    def _on_message(self, _c: Client, _u: object, _m: MQTTMessage) -> None:
        now = time.perf_counter()
        with self.cond:
            self.count += 1
            self.last = now
            self.cond.notify_all()

    def wait_next(self, seen: int, timeout: float = 5.0) -> float:
        with self.cond:
            if not self.cond.wait_for(lambda: self.count > seen, timeout):
                raise RuntimeError("message did not arrive")
            return self.last

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def bare_round_trip(port: int, n: int) -> list[float]:
    """paho publish (QoS 1) to a paho subscriber, one message at a time."""
    sub = Arrivals(port, "bench/bare")
    pub = Client(CallbackAPIVersion.VERSION2, client_id="bench-pub")
    pub.connect("127.0.0.1", port)
    pub.loop_start()
    payload = json.dumps({"table": "t01", "hand": 1, "seat": 1, "cards": ["As"], "t": 1.0})
    samples = []
    for _ in range(n):
        seen = sub.count
        start = time.perf_counter()
        pub.publish("bench/bare", payload.encode(), qos=1)
        samples.append(sub.wait_next(seen) - start)
    pub.loop_stop()
    pub.disconnect()
    sub.close()
    return samples


def controller_round_trip(port: int, n: int, fsync: str) -> list[float]:
    """Simulator TAG_IN frame -> reader driver -> engine -> publisher -> subscriber."""
    config = load_config(ROOT / "examples" / "sim-table.toml")
    workdir = Path(tempfile.mkdtemp(prefix="bench-"))
    config = dataclasses.replace(
        config,
        journal=dataclasses.replace(config.journal, path=workdir / "bench.journal", fsync=fsync),
    )
    broker = dataclasses.replace(config.broker, host="127.0.0.1", port=port)
    daemon = Daemon(config, broker=broker)
    daemon.start()
    board = daemon.devices.sim_boards["card_reader"]
    assert config.registries.deck is not None
    deck = load_deck(config.registries.deck)
    for seat in (1, 2):
        daemon.submit(Command(0.0, "seat", {"seat": seat, "player": f"P{seat}", "stack": 1000}))
    daemon.submit(Command(0.0, "level", {"small_blind": 5, "big_blind": 10, "ante": 0}))
    daemon.submit(ButtonPress(0.0, "shuffler"))
    sub = Arrivals(port, f"{broker.prefix}/holecards")
    uid = deck.uid_of("As")
    samples = []
    for _ in range(n):
        seen = sub.count
        start = time.perf_counter()
        board.place("seat1", uid)
        samples.append(sub.wait_next(seen) - start)
        board.remove("seat1", uid)
        time.sleep(0.0005)  # let the TAG_OUT go through before the next TAG_IN
    sub.close()
    daemon.stop()
    return samples


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    q = statistics.quantiles(ordered, n=100)
    return {
        "n": len(ordered),
        "p50_ms": ordered[len(ordered) // 2] * 1e3,
        "p99_ms": q[98] * 1e3,
        "mean_ms": statistics.fmean(ordered) * 1e3,
    }


def broker_machine() -> dict[str, Any]:
    """The machine, and the mosquitto it ran against."""
    mosq = subprocess.run(["mosquitto", "-h"], capture_output=True, text=True, check=False)
    return machine() | {"mosquitto": (mosq.stdout.splitlines() or ["?"])[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=5000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    broker = LocalBroker()
    broker.start()
    try:
        bare = summary(bare_round_trip(broker.port, args.frames))
        ours = summary(controller_round_trip(broker.port, args.frames, fsync="interval"))
        ours_always = summary(controller_round_trip(broker.port, args.frames, fsync="always"))
    finally:
        broker.stop()
    result = {
        "machine": broker_machine(),
        "frames": args.frames,
        "bare_paho": bare,
        "controller_fsync_interval": ours,
        "controller_fsync_always": ours_always,
        "added_p50_ms": ours["p50_ms"] - bare["p50_ms"],
        "added_p99_ms": ours["p99_ms"] - bare["p99_ms"],
        "added_p50_ms_fsync_always": ours_always["p50_ms"] - bare["p50_ms"],
        "added_p99_ms_fsync_always": ours_always["p99_ms"] - bare["p99_ms"],
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
