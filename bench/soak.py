"""Soak: a day of play (10,000 hands) through one daemon in compressed time, without growing.

One daemon on the simulated table (`examples/sim-table.toml`: simulated reader boards,
GPIO bank and badge reader, all opened), a real mosquitto started here, and a journal
directory with rotation and retention on (`max_segment_mb`, `keep_segments`). The
built-in demo deals `--hands` random hands of its cash game (`sim.demo.demo_events`:
rebuys and players leaving between hands, every chip a tag of the table's chip set, as at
a real table); the script player conducts
the daemon's virtual clock as fast as the machine goes (`--speed max`), every input queued
as the trace input it is (the reader boards' ptys and firmware are left out: they would
make a day last a day; bench/latency.py and bench/reader_cycle.py measure that path).

Every `--sample` hands it records: resident memory (VmRSS), open file descriptors, the
journal directory's size and segment count, the daemon's CPU time (the process's, less
the main thread's, which makes the hands and conducts the clock), wall and trace time.
Memory growth is the last sample less the one at the end of the warm-up (`--warmup`).
Samples are appended to `--json` as they come (a cut-off run keeps what it measured).
The summary also gives how long the daemon's heap trims took (one after every hand).

pokerkit judges every hand the daemon completes (controller/phh_verdict.py): the messages
it publishes are queued as they go out and judged in the bench's own thread (whose CPU the
daemon's figures leave out); the result gives the hands judged and every disagreement.

Python's objects come from glibc's heap (`PYTHONMALLOC=malloc`), as the service and
`scripts/sim.sh` run the daemon; `--allocator pymalloc` measures Python's default instead.
The script starts itself again with the setting when it is not already in force.

Usage: python -m bench.soak [--hands 10000] [--sample 250] [--warmup 1000]
       [--max-segment-mb 2] [--keep-segments 4] [--fsync always] [--json out.json]
       [--allocator malloc|pymalloc]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import queue
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.machine import machine
from controller import heap
from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.localbroker import LocalBroker
from controller.phh_verdict import HandJudge, available
from kernel.clock import ManualClock
from kernel.inputs import ButtonPress, Event
from kernel.messages import Message
from sim.demo import demo_events
from sim.player import ScriptPlayer
from sim.tables import DEFAULT_SIM_CONFIG

CHIP_SET = 10_000
#: Set when the bench started itself again with `PYTHONMALLOC` (never a second time).
RESTARTED = "TABLECTL_SOAK_RESTARTED"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def soak_config(workdir: Path, args: argparse.Namespace) -> Config:
    """The simulated table with a journal directory that rotates and keeps a few."""
    config = load_config(DEFAULT_SIM_CONFIG)
    journal = dataclasses.replace(
        config.journal,
        path=None,
        directory=workdir / "journal",
        fsync=args.fsync,
        max_segment_mb=args.max_segment_mb,
        keep_segments=args.keep_segments,
    )
    return dataclasses.replace(config, journal=journal)


def rss_kb() -> int:
    """This process's resident memory (kB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def thread_cpu(tid: int) -> float:
    """CPU seconds (user + system) of one thread of this process."""
    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def disk_use(directory: Path) -> tuple[int, int]:
    """Bytes and files in the journal directory."""
    files = [p for p in directory.iterdir() if p.is_file()]
    return sum(p.stat().st_size for p in files), len(files)


class Soak:
    """Plays the hands and samples the daemon as it goes."""

    def __init__(
        self, args: argparse.Namespace, daemon: Daemon, journal_dir: Path, judged: Judged
    ) -> None:
        self.args = args
        self.judged = judged
        self.daemon = daemon
        self.journal_dir = journal_dir
        self.samples: list[dict[str, Any]] = []
        self.main_tid = os.getpid()
        self.started = time.monotonic()
        self.cpu0 = self._daemon_cpu()

    def _daemon_cpu(self) -> float:
        return time.process_time() - thread_cpu(self.main_tid)

    def sample(self, hands: int) -> None:
        """Record one sample (the daemon is idle: the player waits for it between events)."""
        size, files = disk_use(self.journal_dir)
        row = {
            "hands": hands,
            "wall_s": round(time.monotonic() - self.started, 1),
            "trace_s": self.daemon.now(),
            "rss_kb": rss_kb(),
            "fds": len(os.listdir("/proc/self/fd")),
            "journal_bytes": size,
            "journal_files": files,
            "daemon_cpu_s": round(self._daemon_cpu() - self.cpu0, 2),
            "seq": self.daemon.engine.seq,
        }
        self.samples.append(row)
        print(json.dumps(row), flush=True)
        if self.args.json is not None:
            with self.args.json.with_suffix(".samples.jsonl").open("a") as out:
                out.write(json.dumps(row) + "\n")

    def counted(self, events: Iterator[Event]) -> Iterator[Event]:
        """The events, sampling before every `--sample`th hand starts (and at the end)."""
        hands = 0
        for event in events:
            self.judged.drain()
            if isinstance(event, ButtonPress) and event.name == "shuffler":
                if hands % self.args.sample == 0:
                    self.sample(hands)
                hands += 1
            yield event
        self.hands = hands

    def summary(self) -> dict[str, Any]:
        """Growth after the warm-up, and CPU per hand over the whole run."""
        warm = [s for s in self.samples if s["hands"] >= self.args.warmup]
        first, last = (warm[0], warm[-1]) if len(warm) > 1 else (self.samples[0], self.samples[-1])
        hands = max(1, last["hands"])
        rss = [s["rss_kb"] for s in warm] or [last["rss_kb"]]
        fds = [s["fds"] for s in warm] or [last["fds"]]
        return {
            "hands": last["hands"],
            "inputs_applied": self.daemon.applied,
            "events_published": self.daemon.engine.seq,
            "trace_hours": round(last["trace_s"] / 3600, 2),
            "wall_s": last["wall_s"],
            "rss_after_warmup_kb": first["rss_kb"],
            "rss_end_kb": last["rss_kb"],
            "rss_growth_after_warmup_kb": last["rss_kb"] - first["rss_kb"],
            "rss_range_after_warmup_kb": [min(rss), max(rss)],
            "fds_range_after_warmup": [min(fds), max(fds)],
            "journal_bytes_max": max(s["journal_bytes"] for s in self.samples),
            "journal_files_max": max(s["journal_files"] for s in self.samples),
            "python_allocator": heap.python_allocator(),
            "heap_trims": self.daemon.heap_trim.trims,
            "daemon_cpu_s": last["daemon_cpu_s"],
            "daemon_cpu_ms_per_hand": round(1000 * last["daemon_cpu_s"] / hands, 2),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=250, help="hands between samples")
    parser.add_argument("--warmup", type=int, default=1_000, help="hands before growth counts")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-segment-mb", type=float, default=2.0)
    parser.add_argument("--keep-segments", type=int, default=4)
    parser.add_argument("--fsync", default="always", choices=("always", "interval", "never"))
    parser.add_argument("--dir", type=Path, default=None, help="where the journal goes")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--allocator",
        default="malloc",
        choices=("malloc", "pymalloc"),
        help="Python's allocator (malloc: as the service runs)",
    )
    args = parser.parse_args()
    if heap.python_allocator() != args.allocator:
        if os.environ.get(RESTARTED) == args.allocator:  # the setting did not take (python -E)
            parser.error(f"Python's allocator is not {args.allocator} even with PYTHONMALLOC set")
        env = {**os.environ, "PYTHONMALLOC": args.allocator, RESTARTED: args.allocator}
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)

    workdir = Path(tempfile.mkdtemp(prefix="tablectl-soak-", dir=args.dir))
    broker = LocalBroker(None)
    broker.start()
    try:
        config = soak_config(workdir, args)
        clock = ManualClock(0.0, wall_start=float(int(time.time())))
        broker_config = dataclasses.replace(config.broker, host="127.0.0.1", port=broker.port)
        daemon = Daemon(config, broker=broker_config, clock=clock)
        daemon.start()
        alerts = count_alerts(daemon)
        judged = Judged(daemon, config.table.id)
        trims = time_trims()
        time.sleep(0.5)  # the reader boards say HELLO
        assert config.journal.directory is not None
        soak = Soak(args, daemon, config.journal.directory, judged)
        player = ScriptPlayer(daemon, speed=math.inf, clock=clock, devices=False)
        events = demo_events(config, args.hands, args.seed, chip_set=CHIP_SET)
        player.play(soak.counted(events))
        player.advance(round(daemon.now() + 5.0, 6))
        if daemon.publisher is not None:
            daemon.publisher.wait_idle(30.0)
        soak.sample(soak.hands)
        judged.drain()
        summary = soak.summary()
        summary |= judged.result()
        if trims:
            summary["heap_trim_ms"] = {
                "median": round(1000 * statistics.median(trims), 3),
                "max": round(1000 * max(trims), 3),
                "count": len(trims),
            }
        result = {
            "machine": machine(),
            "options": {k: str(v) for k, v in vars(args).items()},
            "summary": summary,
            "alerts": len(alerts),
            "first_alerts": alerts[:5],
            "samples": soak.samples,
        }
        daemon.stop()
    finally:
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(result["summary"], indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


def time_trims() -> list[float]:
    """The durations (s) of the daemon's heap trims from now on (controller/heap.py)."""
    durations: list[float] = []
    trim = heap.trim

    def timed() -> bool:
        began = time.perf_counter()
        try:
            return trim()
        finally:
            durations.append(time.perf_counter() - began)

    setattr(heap, "trim", timed)  # noqa: B010 (the bench times, then trims)
    return durations


class Judged:
    """pokerkit's verdict on every hand the daemon completes: its published states and
    events queued as they go out (the daemon's thread) and judged in the bench's."""

    def __init__(self, daemon: Daemon, table: str) -> None:
        self.table = table
        self.judge = HandJudge()
        self.queue: queue.SimpleQueue[tuple[str, dict[str, Any]]] = queue.SimpleQueue()
        publisher = daemon.publisher
        assert publisher is not None
        publish = publisher.publish

        def queued(message: Message) -> None:
            if message.topic in ("state", "events"):
                self.queue.put((message.topic, message.payload))
            publish(message)

        setattr(publisher, "publish", queued)  # noqa: B010 (the bench judges, then publishes)

    def drain(self) -> None:
        """Judge what was published so far."""
        while True:
            try:
                topic, payload = self.queue.get_nowait()
            except queue.Empty:
                return
            self.judge.see(self.table, topic, payload)

    def result(self) -> dict[str, Any]:
        """The hands judged and the disagreements (hand, pokerkit's reason), for the JSON."""
        return {
            "pokerkit_judged": self.judge.judged if available() else None,
            "pokerkit_disagreed": [
                {"hand": hand, "verdict": why} for _t, hand, why in self.judge.disagreed
            ],
            "pokerkit": self.judge.summary(),
        }


def count_alerts(daemon: Daemon) -> list[dict[str, Any]]:
    """The alerts the daemon publishes from now on (a clean day raises none)."""
    alerts: list[dict[str, Any]] = []
    publisher = daemon.publisher
    assert publisher is not None
    publish = publisher.publish

    def counting(message: Message) -> None:
        if message.topic == "alerts":
            alerts.append(message.payload)
        publish(message)

    setattr(publisher, "publish", counting)  # noqa: B010 (the bench counts, then publishes)
    return alerts


if __name__ == "__main__":
    main()
