"""Latency: a TAG_IN frame written by the board simulator to the message at a subscriber.

Beside it, in the same run and on the same mosquitto, the bare paho publish-to-subscribe
round trip, and (with `--baseline-tree`) another release's controller on the same path,
run alternately with ours. Each sample is one message at a time (send, wait for arrival),
so this is latency, not throughput.

Usage: python -m bench.latency [--frames 1500] [--runs 4] [--baseline-tree DIR]
       [--reorder-ms 0 60] [--window-frames 200] [--json out.json]

Each controller measurement runs in its own process (`--worker`), with the tree it
measures first on `sys.path`: the worker uses only what every release since the first
`Daemon(config, broker=...)` has, so an older checkout (`git worktree add DIR <commit>`)
runs as it was.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from paho.mqtt.client import Client, MQTTMessage
from paho.mqtt.enums import CallbackAPIVersion

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


class FrameClock:
    """When the board simulator writes its next frame to the pty (the start of a sample).

    The simulated board runs its firmware's scan before it writes a TAG_IN: on a table that
    scan happens on the board's own processor, so a sample starts when the frame's bytes
    are handed to the pty, not when the tag is placed. Both are recorded.
    """

    def __init__(self, master: int) -> None:
        self.master = master
        self.armed = False
        self.at = 0.0
        self._write = os.write

    def install(self) -> None:
        real = self._write

        def write(fd: int, data: Any) -> int:
            if fd == self.master and self.armed:
                self.armed = False
                self.at = time.perf_counter()
            return real(fd, data)

        os.write = write  # the simulator and every release write the pty with os.write

    def uninstall(self) -> None:
        os.write = self._write


def serve_boards() -> None:
    """`--boards`: the table's two reader boards, simulated in this process (as on a table,
    where each board is its own processor, they take nothing from the daemon's).

    Prints their pty paths (one JSON line), then takes `place ANTENNA UID` / `remove
    ANTENNA UID` on stdin; a place answers when the firmware wrote its TAG_IN frame and
    when the tag was placed (perf_counter: CLOCK_MONOTONIC, the same in every process)."""
    from controller.config import load_config
    from firmware_sim.reader_board import ReaderBoardSim

    config = load_config(Path("examples") / "sim-table.toml")
    cards = ReaderBoardSim(config.card_reader.antennas, kind="card")
    chips = ReaderBoardSim(config.chip_reader.antennas, kind="chip")
    cards.start()
    chips.start()
    print(json.dumps({"cards": cards.path, "chips": chips.path}), flush=True)
    clock = FrameClock(cards._master)
    clock.install()
    for line in sys.stdin:
        verb, antenna, uid = line.split()
        if verb == "place":
            clock.armed = True
            start = time.perf_counter()
            cards.place(antenna, uid)
            while clock.armed:  # an older simulator writes from its own thread
                time.sleep(0.00005)
            print(json.dumps({"tag": start, "frame": clock.at}), flush=True)
        else:
            cards.remove(antenna, uid)
            print("{}", flush=True)
    clock.uninstall()
    cards.stop()
    chips.stop()


def controller_round_trip(
    port: int, n: int, fsync: str, reorder_ms: float | None = None
) -> dict[str, list[float]]:
    """Simulator TAG_IN frame -> reader driver -> engine -> publisher -> subscriber.

    The reader boards run in a process of their own, reached on their ptys through the
    `serial` backend as real boards are. `reorder_ms` sets the input reorder window
    (releases that have one; None: the table file's own setting)."""
    from controller.config import load_config
    from controller.daemon import Daemon
    from controller.registry import load_deck
    from kernel.inputs import ButtonPress, Command

    boards = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--boards"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert boards.stdin is not None and boards.stdout is not None
    paths = json.loads(boards.stdout.readline())
    config = load_config(Path("examples") / "sim-table.toml")
    workdir = Path(tempfile.mkdtemp(prefix="bench-"))
    config = dataclasses.replace(
        config,
        journal=dataclasses.replace(config.journal, path=workdir / "bench.journal", fsync=fsync),
        card_reader=dataclasses.replace(config.card_reader, backend="serial", port=paths["cards"]),
        chip_reader=dataclasses.replace(config.chip_reader, backend="serial", port=paths["chips"]),
    )
    if reorder_ms is not None:
        config = dataclasses.replace(
            config, inputs=dataclasses.replace(config.inputs, reorder_ms=reorder_ms)
        )
    broker = dataclasses.replace(config.broker, host="127.0.0.1", port=port)
    daemon = Daemon(config, broker=broker)
    daemon.start()
    assert config.registries.deck is not None
    deck = load_deck(config.registries.deck)
    for seat in (1, 2):
        daemon.submit(Command(0.0, "seat", {"seat": seat, "player": f"P{seat}", "stack": 1000}))
    daemon.submit(Command(0.0, "level", {"small_blind": 5, "big_blind": 10, "ante": 0}))
    daemon.submit(ButtonPress(0.0, "shuffler"))
    sub = Arrivals(port, f"{broker.prefix}/holecards")
    uid = deck.uid_of("As")
    from_frame: list[float] = []
    from_tag: list[float] = []
    time.sleep(1.0)  # both boards read (HELLO, inventory) before the first sample
    try:
        for _ in range(n):
            seen = sub.count
            boards.stdin.write(f"place seat1 {uid}\n")
            boards.stdin.flush()
            stamps = json.loads(boards.stdout.readline())
            arrived = sub.wait_next(seen)
            from_tag.append(arrived - stamps["tag"])
            from_frame.append(arrived - stamps["frame"])
            boards.stdin.write(f"remove seat1 {uid}\n")
            boards.stdin.flush()
            boards.stdout.readline()
            time.sleep(0.002)  # let the TAG_OUT go through before the next TAG_IN
    finally:
        sub.close()
        daemon.stop()
        boards.stdin.close()
        boards.wait(10)
    return {"from_frame": from_frame, "from_tag": from_tag}


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
    from bench.machine import machine

    mosq = subprocess.run(["mosquitto", "-h"], capture_output=True, text=True, check=False)
    return machine() | {"mosquitto": (mosq.stdout.splitlines() or ["?"])[0]}


def run_worker(
    tree: Path, port: int, frames: int, fsync: str, reorder_ms: float | None
) -> dict[str, list[float]]:
    """One controller measurement in a fresh process, importing the controller of `tree`."""
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        "--port",
        str(port),
        "--frames",
        str(frames),
        "--fsync",
        fsync,
    ]
    if reorder_ms is not None:
        cmd += ["--reorder-ms", str(reorder_ms)]
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"worker in {tree} failed:\n{out.stderr[-3000:]}")
    result: dict[str, list[float]] = json.loads(out.stdout.splitlines()[-1])
    return result


def _git_head(tree: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(tree), "log", "-1", "--format=%h %s"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip()[:100]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frames", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=4, help="alternating runs per tree")
    parser.add_argument("--baseline-tree", type=Path, default=None)
    parser.add_argument(
        "--reorder-ms",
        type=float,
        nargs="*",
        default=None,
        help="input reorder windows to measure ours at (ms; 0 = off; default: 0 and 60)",
    )
    parser.add_argument(
        "--window-frames",
        type=int,
        default=200,
        help="samples per run with a reorder window (each waits the window: fewer suffice)",
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--boards", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--fsync", default="always", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.boards:
        serve_boards()
        return
    if args.worker:
        window = args.reorder_ms[0] if args.reorder_ms else None  # None: a release without
        print(json.dumps(controller_round_trip(args.port, args.frames, args.fsync, window)))
        return
    from controller.localbroker import LocalBroker

    trees: list[tuple[str, Path, float | None]] = []
    if args.baseline_tree is not None:
        trees.append(("baseline", args.baseline_tree.resolve(), None))
    for window in args.reorder_ms if args.reorder_ms is not None else [0.0, 60.0]:
        trees.append((f"ours_reorder_{window:g}ms", ROOT, window))
    load_before = os.getloadavg()
    machine = broker_machine()
    broker = LocalBroker()
    broker.start()
    samples: dict[str, dict[str, list[float]]] = {}
    bare: list[float] = []
    try:
        for _run in range(args.runs):
            bare += bare_round_trip(broker.port, args.frames)
            for fsync in ("always", "interval"):
                for name, tree, window in trees:
                    frames = args.frames if not window else min(args.frames, args.window_frames)
                    got = run_worker(tree, broker.port, frames, fsync, window)
                    slot = samples.setdefault(f"{name}_fsync_{fsync}", {})
                    for key, values in got.items():
                        slot.setdefault(key, []).extend(values)
    finally:
        broker.stop()
    bare_s = summary(bare)
    paths: dict[str, Any] = {}
    for key, got in samples.items():
        frame = summary(got["from_frame"])
        tag = summary(got["from_tag"])
        paths[key] = {
            "from_frame": frame,
            "from_tag": tag,
            "added_p50_ms": frame["p50_ms"] - bare_s["p50_ms"],
            "added_p99_ms": frame["p99_ms"] - bare_s["p99_ms"],
        }
    result = {
        "machine": machine,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "frames_per_run": args.frames,
        "runs": args.runs,
        "ours": _git_head(ROOT),
        "baseline": _git_head(args.baseline_tree) if args.baseline_tree else None,
        "bare_paho": bare_s,
        "paths": paths,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
