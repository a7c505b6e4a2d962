"""Room server ingest at room scale: N simulated tables' traffic into one mosquitto.

Each table plays recorded hands (the engine's `events` and `state` of the built-in demo
dealer: 9 players, about 64 messages a hand) at a real room's rate, one hand every
`--hand-seconds` (120 s: a hand's messages spread over 100 s, then a 20 s pause), tables
starting at random offsets. `--publishers` paho clients publish them at QoS 1, each table
always through the same client (its order kept), to a private mosquitto configured like
the shipped kit (`max_queued_messages 1000000`). The room server under test is `tablectl
room` in its own process (SQLite or a private PostgreSQL); a bare paho subscriber that only
counts (another process) takes the same traffic in the same run: the baseline.

Measured: events published, stored, lost (published and never stored: must be 0) and
duplicated rows (must be 0); ingest lag per event from the publish call to the commit of its
row (the room's live push channel, `/api/live`, says when each batch committed), p50/p99;
the baseline's lag from publish to arrival; the room server's CPU (user + system seconds
over the run) and peak memory (VmHWM); tables one core ingests at this rate.

Usage: python -m bench.room_ingest --tables 100 1000 --seconds 60 --db sqlite postgresql
       [--baseline-tree DIR] [--json bench/results/room_ingest.json]

With `--baseline-tree`, another checkout's room server (`git worktree add DIR <commit>`)
takes the same traffic right after ours in each case: the two side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from paho.mqtt.client import Client
from paho.mqtt.enums import CallbackAPIVersion

from bench.machine import machine
from controller.config import load_config
from controller.localbroker import free_port
from controller.replay import build_engine, drive
from sim.demo import demo_script

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "examples" / "sim-table.toml"
ROOM = "bench"

Hand = list[tuple[float, str, dict[str, Any]]]  # (seconds into the hand, topic, payload)


def recorded_hands(count: int, seed: int = 5) -> list[Hand]:
    """`count` hands of the demo dealer, each as (time from its start, topic, payload)."""
    config = load_config(CONFIG)
    engine = build_engine(config)
    hands: list[Hand] = []
    current: Hand | None = None
    start = 0.0
    for event, messages in drive(engine, demo_script(config, count, seed)):
        for m in messages:
            if m.topic not in ("events", "state"):
                continue
            if m.topic == "events" and m.payload["type"] == "hand_started":
                current, start = [], event.t
                hands.append(current)
            if current is not None:
                current.append((event.t - start, m.topic, m.payload))
    return hands


class Schedule:
    """Every table's messages, re-numbered per table, at their publish times."""

    def __init__(self, tables: int, seconds: float, hand_seconds: float, seed: int = 1) -> None:
        rng = random.Random(seed)
        hands = recorded_hands(12)
        self._per_table: dict[str, list[tuple[float, str, bytes, int | None]]] = {}
        self.events = 0
        self.tables = [f"t{n:04d}" for n in range(1, tables + 1)]
        self.table_messages: dict[str, int] = {}
        for table in self.tables:
            seq = 0
            offset = rng.uniform(-hand_seconds, 0)  # mid-hand at t = 0: the steady rate
            out: list[tuple[float, str, bytes, int | None]] = []
            number = 0
            while offset < seconds:
                hand = hands[number % len(hands)]
                number += 1
                span = max(hand[-1][0], 1.0)
                for t, topic, payload in hand:
                    at = offset + t / span * hand_seconds * 5 / 6
                    if at >= seconds:
                        break
                    skip = at < 0  # published before the run began
                    body = dict(payload)
                    body["table"] = table
                    if "hand" in body:
                        body["hand"] = number
                    key: int | None = None
                    if topic == "events":
                        seq += 1
                        body["seq"] = key = seq
                        self.events += 0 if skip else 1
                    else:
                        body["seq"] = seq
                    if skip:
                        continue
                    data = json.dumps(body, separators=(",", ":")).encode()
                    out.append((at, f"poker/{ROOM}/{table}/{topic}", data, key))
                offset += hand_seconds
            self.table_messages[table] = len(out)
            self._per_table[table] = out

    def clients(self, count: int) -> list[list[tuple[float, str, bytes, int | None, str]]]:
        """The messages of each publisher, in time order (a table always on the same one)."""
        lists: list[list[tuple[float, str, bytes, int | None, str]]] = [[] for _ in range(count)]
        for i, table in enumerate(self.tables):
            lists[i % count].extend((a, t, d, k, table) for a, t, d, k in self._per_table[table])
        for items in lists:
            items.sort(key=lambda x: x[0])
        return lists

    @property
    def messages(self) -> int:
        return sum(self.table_messages.values())


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
    time.sleep(0.3)
    return proc, port


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def _proc_hwm_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


BASELINE = r"""
import json, sys, time
from paho.mqtt.client import Client
from paho.mqtt.enums import CallbackAPIVersion
port, out, total = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
got = []
c = Client(CallbackAPIVersion.VERSION2, client_id="baseline", clean_session=False)
def on_message(_c, _u, m):
    if m.topic.endswith("/events"):
        p = json.loads(m.payload)
        got.append((p["table"], p["seq"], time.time()))
c.on_message = on_message
c.on_connect = lambda c, *a: c.subscribe("poker/+/+/#", qos=1)
c.connect("127.0.0.1", port)
c.loop_start()
deadline = time.time() + 36000
open(out + ".ready", "w").close()
stop = out + ".stop"
while len(got) < total and time.time() < deadline and not __import__("os").path.exists(stop):
    time.sleep(0.2)
c.loop_stop()
json.dump(got, open(out, "w"))
"""


def run(
    tables: int,
    seconds: float,
    db: str,
    publishers: int,
    hand_seconds: float,
    room_tree: Path | None = None,
) -> dict[str, Any]:
    """One run: the room server (of `room_tree`, else ours) and the baseline on the same
    traffic."""
    workdir = Path(tempfile.mkdtemp(prefix="tablectl-bench-room-"))
    broker, port = _broker(workdir)
    pg = None
    if db == "postgresql":
        sys.path.insert(0, str(ROOT))
        from tests.postgres import PostgresServer

        pg = PostgresServer().start()
        url = pg.create_database()
    else:
        url = f"sqlite:///{workdir / 'room.db'}"
    http_port = free_port()
    config = workdir / "room.toml"
    config.write_text(
        f'[room]\nname = "{ROOM}"\n[broker]\nhost = "127.0.0.1"\nport = {port}\n'
        f'[database]\nurl = "{url}"\n[http]\nport = {http_port}\n[gaps]\nbackfill = false\n'
    )
    tree = (room_tree or ROOT).resolve()
    room = subprocess.Popen(  # the room server of `tree` (ours, or another release's)
        [sys.executable, "-m", "tablectl.cli", "room", "--config", str(config)],
        stdout=(workdir / "room.log").open("wb"),
        stderr=subprocess.STDOUT,
        cwd=tree,
        env=dict(os.environ, PYTHONPATH=str(tree)),
    )
    schedule = Schedule(tables, seconds, hand_seconds)
    base_out = workdir / "baseline.json"
    baseline = subprocess.Popen(
        [sys.executable, "-c", BASELINE, str(port), str(base_out), str(schedule.events)]
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{http_port}/api/health", timeout=1).json()[
                    "connected"
                ]:
                    break
            except (httpx.HTTPError, ValueError):
                pass
            time.sleep(0.2)
        while not Path(str(base_out) + ".ready").exists():
            time.sleep(0.1)
        committed: dict[tuple[str, int], float] = {}
        live_done = threading.Event()

        def listen() -> None:
            with httpx.stream("GET", f"http://127.0.0.1:{http_port}/api/live", timeout=None) as r:
                for line in r.iter_lines():
                    if line.startswith("data: "):
                        batch = json.loads(line[6:])
                        for e in batch["events"]:
                            committed.setdefault((e["table"], e["seq"]), batch["committed_at"])
                    if live_done.is_set():
                        return

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        time.sleep(0.5)
        sent: dict[tuple[str, int], float] = {}
        cpu0 = _proc_cpu(room.pid)
        start = time.time() + 1.0
        threads = []
        for items in schedule.clients(publishers):
            client = Client(CallbackAPIVersion.VERSION2)
            client.max_inflight_messages_set(1000)
            client.max_queued_messages_set(0)
            client.connect("127.0.0.1", port)
            client.loop_start()

            def publish(items: list[Any] = items, client: Client = client) -> None:
                for at, topic, data, key, table in items:
                    delay = start + at - time.time()
                    if delay > 0:
                        time.sleep(delay)
                    if key is not None:
                        sent[(table, key)] = time.time()
                    client.publish(topic, data, qos=1)

            thread = threading.Thread(target=publish, daemon=True)
            thread.start()
            threads.append((thread, client))
        for thread, _client in threads:
            thread.join()
        published_at = time.time()
        deadline = time.time() + 120
        while len(committed) < schedule.events and time.time() < deadline:
            time.sleep(0.2)
        cpu = _proc_cpu(room.pid) - cpu0
        hwm = _proc_hwm_mb(room.pid)
        wall = time.time() - start
        drain = time.time() - published_at
        counts = httpx.get(f"http://127.0.0.1:{http_port}/api/health", timeout=10).json()[
            "counters"
        ]
        Path(str(base_out) + ".stop").touch()
        baseline.wait(60)
        got = json.loads(base_out.read_text())
        live_done.set()
        for _thread, client in threads:
            client.loop_stop()
            client.disconnect()
        # Every published event once in the database (rows by key): lost and duplicated.
        sys.path.insert(0, str(ROOT))
        from room.config import DatabaseConfig
        from room.store import Store

        store = Store(DatabaseConfig(url=url), ROOM)
        rows = store.event_counts()
        stored_keys = {
            (r["table_id"], int(r["seq"]))
            for r in store.query("SELECT table_id, seq FROM events WHERE room = ?", (ROOM,))
        }
        store.close()
        lag = [committed[k] - t for k, t in sent.items() if k in committed]
        base_lag = [t - sent[(table, seq)] for table, seq, t in got if (table, seq) in sent]
        per_table_cpu = cpu / wall / tables
        result = {
            "tables": tables,
            "database": db,
            "seconds": seconds,
            "hand_seconds": hand_seconds,
            "messages_published": schedule.messages,
            "events_published": len(sent),
            "events_stored": len(stored_keys & set(sent)),
            "lost": len(set(sent) - stored_keys),
            "duplicated_rows": rows["rows"] - rows["distinct"],
            "rate_msgs_per_s": round(schedule.messages / seconds, 1),
            "lag_p50_ms": round(_pct(lag, 0.5) * 1000, 1),
            "lag_p99_ms": round(_pct(lag, 0.99) * 1000, 1),
            "lag_max_ms": round(max(lag, default=float("nan")) * 1000, 1),
            "baseline_received": len(base_lag),
            "baseline_lag_p50_ms": round(_pct(base_lag, 0.5) * 1000, 2),
            "baseline_lag_p99_ms": round(_pct(base_lag, 0.99) * 1000, 2),
            "room_cpu_s": round(cpu, 2),
            "room_cpu_percent_of_a_core": round(100 * cpu / wall, 1),
            "room_peak_rss_mb": round(hwm, 1),
            "tables_per_core": int(1 / per_table_cpu) if per_table_cpu > 0 else None,
            "drain_s": round(drain, 2),
            "batches": counts.get("batches"),
            "median_batch": round(counts["received"] / counts["batches"], 1)
            if counts.get("batches")
            else None,
        }
        return result
    finally:
        room.terminate()
        try:
            room.wait(30)
        except subprocess.TimeoutExpired:
            room.kill()
        if baseline.poll() is None:
            baseline.kill()
        broker.terminate()
        broker.wait(10)
        if pg is not None:
            pg.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--hand-seconds", type=float, default=120.0)
    parser.add_argument("--db", nargs="+", default=["sqlite", "postgresql"])
    parser.add_argument("--publishers", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--baseline-tree",
        type=Path,
        default=None,
        help="also run that checkout's room server in each case, right after ours",
    )
    args = parser.parse_args()
    runs: list[dict[str, Any]] = []
    results: dict[str, Any] = {"machine": machine(), "runs": runs}
    print(json.dumps(results["machine"]), flush=True)
    for db in args.db:
        for tables in args.tables:
            trees: list[tuple[str, Path | None]] = [("ours", None)]
            if args.baseline_tree is not None:
                trees.append(("baseline", args.baseline_tree))
            for label, tree in trees:
                result = run(tables, args.seconds, db, args.publishers, args.hand_seconds, tree)
                result["room_server"] = label
                result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
                runs.append(result)
                print(json.dumps(result), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
