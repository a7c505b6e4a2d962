"""Leaderboard freshness at room scale: how long after a table's hand the room's chip counts
show it.

N tables (default 100, nine players each) are real table engines (controller.engine, the
daemon's own core, without devices or journal) in this process: they take the room's
commands from the broker (`cmd/<name>`, parsed as the daemon parses them), deal random hands
(the demo dealer's planner, one hand every `--hand-seconds` per table, tables at random
offsets) and publish every `events`, `state`, `replies` and `alerts` message at QoS 1 on a
private mosquitto. The room server under test is `tablectl room` in its own process, with a
[tournament] of N x 9 players on the N tables (SQLite). The tournament is started through its
API (the seat draw, levels and holds reach the engines as commands), then hands run.

Measured per hand: from the publish of its `hand_completed` to the moment the room's
leaderboard (`GET /api/tournament/leaderboard`, fetched on every `tournament` event of
`/api/tournament/live`) shows every stack of that hand: **ours**. In the same run, from the
same publish to the room's announcement of the stored event on `/api/live` (the monitor's
live channel, the room without the tournament): **the baseline**. p50, p99, max; the room
server's CPU over the measured window.

Usage: python -m bench.tournament_freshness --tables 100 --hand-seconds 60 --seconds 120
       [--json bench/results/tournament_freshness.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from paho.mqtt.client import Client, MQTTMessage
from paho.mqtt.enums import CallbackAPIVersion

from bench.machine import machine
from controller.commands import parse_room_command
from controller.engine import Engine, EngineSpec
from controller.localbroker import free_port
from kernel.inputs import ButtonPress, Event
from kernel.messages import Message
from sim.dealer import TableDealer
from sim.live_dealer import can_start, rest_of_hand

ROOT = Path(__file__).resolve().parent.parent
ROOM = "bench"
TOKEN = "bench-token-0123456789"


def _broker(workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    conf = workdir / "mosquitto.conf"
    lines = [f"listener {port} 127.0.0.1", "allow_anonymous true", "persistence false"]
    lines += ["max_queued_messages 1000000"]
    if os.geteuid() == 0:
        lines.append("user root")
    conf.write_text("\n".join(lines) + "\n")
    exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    proc = subprocess.Popen(
        [exe, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(0.5)
    return proc, port


def event_file(path: Path, tables: list[str]) -> None:
    """N x 9 players on the N tables; one long level (no level change, no break in the run)."""
    lines = [
        "[tournament]",
        'name = "Freshness bench"',
        "starting_stack = 50000",
        "seats_per_table = 9",
        "tables = [" + ", ".join(f'"{t}"' for t in tables) + "]",
        "[payouts]",
        "buy_in = 100",
        "percent = [50, 30, 20]",
        "[[level]]",
        "small_blind = 100",
        "big_blind = 200",
        "minutes = 600",
    ]
    for i in range(len(tables) * 9):
        lines += ["[[player]]", f'name = "Player {i + 1:04d}"', f'id = "P{i + 1:04d}"']
    path.write_text("\n".join(lines) + "\n")


def room_file(path: Path, port: int, http: int, event: Path) -> None:
    token = path.with_name("token")
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    path.write_text(
        f'[room]\nname = "{ROOM}"\n[broker]\nhost = "127.0.0.1"\nport = {port}\n'
        f'[database]\npath = "{path.with_name("room.db")}"\nbatch_ms = 20\n'
        f'[http]\nhost = "127.0.0.1"\nport = {http}\ntoken_file = "{token}"\n'
        f'[tournament]\nfile = "{event}"\njournal = "{path.with_name("event.jsonl")}"\nseed = 1\n'
    )


class Tables:
    """N table engines behind one MQTT client: commands in, every message out, hands dealt."""

    def __init__(self, names: list[str], port: int, hand_seconds: float, seed: int) -> None:
        self.engines = {n: Engine(EngineSpec(table=n, room=ROOM, seats=9)) for n in names}
        self.dealers = {n: TableDealer(chip_prefix=f"{n}c") for n in names}
        self.rng = random.Random(seed)
        self.hand_seconds = hand_seconds
        self.inbox: queue.Queue[tuple[str, str, bytes]] = queue.Queue()
        self.published: dict[tuple[str, int], float] = {}  # (table, seq) -> publish time
        self.completed: list[
            tuple[float, str, int, dict[str, int]]
        ] = []  # when, table, seq, stacks
        self.lock = threading.Lock()
        self.dealing = False
        self.next_hand = {n: 0.0 for n in names}
        self.client = Client(CallbackAPIVersion.VERSION2, client_id="bench-tables")
        self.client.max_inflight_messages_set(1000)
        self.client.max_queued_messages_set(0)
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port)
        self.client.subscribe(f"poker/{ROOM}/+/cmd/#", qos=1)
        self.client.loop_start()
        self.serial = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.stop = threading.Event()
        self.thread.start()

    def _on_message(self, _c: Any, _u: Any, msg: MQTTMessage) -> None:
        parts = msg.topic.split("/")
        self.inbox.put((parts[2], parts[4], bytes(msg.payload)))

    def _publish(self, table: str, messages: list[Message]) -> None:
        for m in messages:
            if m.topic == "holecards":
                continue
            self.client.publish(
                f"poker/{ROOM}/{table}/{m.topic}", m.payload_bytes(), qos=1, retain=m.retain
            )
            if m.topic == "events":
                now = time.monotonic()
                if m.payload["type"] == "hand_completed":
                    engine = self.engines[table]
                    names = {str(s): engine.seats[s].player or "" for s in engine.seats}
                    stacks = {
                        names[k]: int(v) for k, v in m.payload["stacks"].items() if names[k]
                    }
                    with self.lock:
                        self.completed.append((now, table, int(m.payload["seq"]), stacks))

    def _apply(self, table: str, event: Event) -> None:
        self._publish(table, self.engines[table].apply(event))

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                table, name, payload = self.inbox.get(timeout=0.05)
                engine = self.engines[table]
                self.serial += 1
                cmd = parse_room_command(
                    name, payload, t=engine.t, next_id=lambda: f"b{self.serial}"
                )
                self._apply(table, cmd)
                continue
            except queue.Empty:
                pass
            except Exception as exc:  # a command the engine refuses is answered; this is not
                print(f"bench tables: {exc}", file=sys.stderr)
                continue
            if not self.dealing:
                continue
            now = time.monotonic()
            for table, due in self.next_hand.items():
                engine = self.engines[table]
                if due > now or not can_start(engine):
                    continue
                t = engine.t + 1.0
                self._apply(table, ButtonPress(t, "shuffler"))
                if engine.hand is not None:
                    events = rest_of_hand(engine, self.dealers[table], self.rng)
                    shift = engine.t + 0.1 - (events[0].t if events else 0.0)
                    for event in events:  # on the table's own clock
                        self._apply(table, dataclasses.replace(event, t=round(event.t + shift, 6)))
                self.next_hand[table] = now + self.hand_seconds
                break  # one hand per loop: commands keep their turn

    def start_dealing(self) -> None:
        now = time.monotonic()
        for table in self.next_hand:
            self.next_hand[table] = now + self.rng.uniform(0, self.hand_seconds)
        self.dealing = True

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.client.loop_stop()
        self.client.disconnect()


class Watch:
    """The room's two live channels, read as a browser page would."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.board: list[tuple[float, dict[str, int]]] = []  # when fetched, name -> chips
        self.batches: list[tuple[float, set[tuple[str, int]]]] = []
        self.stop = threading.Event()
        for target in (self._tournament, self._room):
            threading.Thread(target=target, daemon=True).start()

    def _tournament(self) -> None:
        with (
            httpx.Client(base_url=self.url, timeout=None) as http,
            http.stream("GET", "/api/tournament/live") as stream,
        ):
            for line in stream.iter_lines():
                if self.stop.is_set():
                    return
                if line.startswith("event: tournament"):
                    rows = http.get("/api/tournament/leaderboard").json()["players"]
                    self.board.append((time.monotonic(), {r["name"]: r["chips"] for r in rows}))

    def _room(self) -> None:
        with (
            httpx.Client(base_url=self.url, timeout=None) as http,
            http.stream("GET", "/api/live") as stream,
        ):
            for line in stream.iter_lines():
                if self.stop.is_set():
                    return
                if line.startswith("data: "):
                    body = json.loads(line[6:])
                    keys = {
                        (e["table"], e["seq"])
                        for e in body["events"]
                        if e.get("type") == "hand_completed"
                    }
                    if keys:
                        self.batches.append((time.monotonic(), keys))


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(p / 100 * (len(values) - 1)))]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(tables: int, hand_seconds: float, seconds: float) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="bench-tournament-"))
    broker, port = _broker(workdir)
    names = [f"t{n:03d}" for n in range(1, tables + 1)]
    event_file(workdir / "event.toml", names)
    http_port = free_port()
    room_file(workdir / "room.toml", port, http_port, workdir / "event.toml")
    log = (workdir / "room.log").open("wb")
    room = subprocess.Popen(
        [sys.executable, "-m", "tablectl.cli", "room", "--config", str(workdir / "room.toml")],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{http_port}"
    engines = None
    try:
        for _ in range(200):
            try:
                if httpx.get(f"{url}/api/health", timeout=1).json()["connected"]:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        engines = Tables(names, port, hand_seconds, seed=7)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        httpx.post(
            f"{url}/api/tournament/start", json={"by": "bench"}, headers=headers
        ).raise_for_status()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            seated = sum(1 for e in engines.engines.values() for s in e.seats.values() if s.player)
            if seated == tables * 9 and all(not e.holds for e in engines.engines.values()):
                break
            time.sleep(0.2)
        else:
            seated = sum(1 for e in engines.engines.values() for s in e.seats.values() if s.player)
            held = sum(1 for e in engines.engines.values() if e.holds)
            raise RuntimeError(f"the room seated {seated} of {tables * 9}; {held} tables held")
        watch = Watch(url)
        time.sleep(1.0)
        cpu0 = cpu_seconds(room.pid)
        started = time.monotonic()
        engines.start_dealing()
        time.sleep(seconds)
        engines.dealing = False
        cpu = cpu_seconds(room.pid) - cpu0
        window = time.monotonic() - started
        time.sleep(3.0)  # the last hands reach the room
        watch.stop.set()
        with engines.lock:
            completed = list(engines.completed)
        ours: list[float] = []
        base: list[float] = []
        for when, table, seq, stacks in completed:
            seen = next(
                (
                    t
                    for t, board in watch.board
                    if t >= when and all(board.get(n) == c for n, c in stacks.items() if c > 0)
                ),
                None,
            )
            if seen is not None:
                ours.append(seen - when)
            stored = next(
                (t for t, keys in watch.batches if t >= when and (table, seq) in keys), None
            )
            if stored is not None:
                base.append(stored - when)
        return {
            "tables": tables,
            "players": tables * 9,
            "hand_seconds": hand_seconds,
            "seconds": round(window, 1),
            "hands": len(completed),
            "hands_per_second": round(len(completed) / window, 2),
            "ours_seen": len(ours),
            "ours_p50_ms": round(statistics.median(ours) * 1000, 1) if ours else None,
            "ours_p99_ms": round(percentile(ours, 99) * 1000, 1) if ours else None,
            "ours_max_ms": round(max(ours) * 1000, 1) if ours else None,
            "baseline_seen": len(base),
            "baseline_p50_ms": round(statistics.median(base) * 1000, 1) if base else None,
            "baseline_p99_ms": round(percentile(base, 99) * 1000, 1) if base else None,
            "room_cpu_percent": round(100 * cpu / window, 1),
        }
    finally:
        if engines is not None:
            engines.close()
        room.terminate()
        try:
            room.wait(30)
        except subprocess.TimeoutExpired:
            room.kill()
            room.wait(10)
        broker.terminate()
        broker.wait(5)
        log.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[100])
    parser.add_argument("--hand-seconds", type=float, nargs="+", default=[60.0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    runs: list[dict[str, Any]] = []
    results = {"machine": machine(), "runs": runs}
    for tables in args.tables:
        for hand_seconds in args.hand_seconds:
            result = run(tables, hand_seconds, args.seconds)
            print(json.dumps(result), flush=True)
            runs.append(result)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
