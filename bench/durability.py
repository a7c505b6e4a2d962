"""Durability cost: the daemon's journal-then-publish path with the journal off and on.

One run measures, on the same trace and machine, interleaved round by round:

- off: no journal (the baseline: the engine alone, as the daemon drives it);
- never / interval / always: a one-file journal with that `fsync` policy;
- segments: the default `fsync = "always"` in a journal directory rotated every 100 KiB
  (a few hands) between hands: each rotation writes and syncs a checkpoint, retention 3;
- off-backlog / always-backlog: the same inputs handed over 64 at a time, as the daemon's
  loop takes them when they pile up (one commit, so one fdatasync, per batch).

Each call goes through `Daemon.handle` (journal the inputs and the messages they produce,
commit, hand the messages to the publisher: none here, so MQTT is out of the picture),
timed call by call: one input per call, or a batch of 64 (its time is the latency of the
batch's last input). Per repetition: inputs per second over the whole trace, p50 and p99
per call; the medians over the repetitions are reported with the ratio to the baseline.
Usage: python -m bench.durability [--hands 40] [--repeat 5] [--dir /var/tmp] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.machine import machine
from controller.config import Config, load_config
from controller.daemon import MAX_BATCH, Daemon
from controller.engine.checkpoint import checkpoint
from controller.journal import list_segments, open_journal
from kernel.inputs import Event
from sim.demo import demo_script

EPOCH = 1_700_000_000.0
TABLE_TOML = """
[table]
id = "t01"
room = "bench"
seats = 9

[devices.badge_reader]
backend = "none"
"""
VARIANTS = ("off", "never", "interval", "always", "segments", "off-backlog", "always-backlog")


def bench_config(workdir: Path) -> Config:
    """A 9-seat table on simulated devices; cards are named in the trace (no registry)."""
    path = workdir / "bench.toml"
    path.write_text(TABLE_TOML)
    return load_config(path)


def with_journal(config: Config, variant: str, where: Path) -> Config:
    journal = dataclasses.replace(config.journal, path=None, directory=None)
    policy = variant.removesuffix("-backlog")
    if policy in ("never", "interval", "always"):
        journal = dataclasses.replace(journal, path=where / "t01.journal", fsync=policy)
    elif variant == "segments":
        journal = dataclasses.replace(
            journal,
            directory=where / "journal",
            fsync="always",
            max_segment_mb=0.1,
            keep_segments=3,
            keep_days=0.0,
        )
    return dataclasses.replace(config, journal=journal)


def run_once(config: Config, events: list[Event], variant: str, base: Path) -> dict[str, Any]:
    """One pass of the whole trace through the daemon's journal-then-apply path."""
    where = Path(tempfile.mkdtemp(prefix=f"durability-{variant}-", dir=base))
    try:
        cfg = with_journal(config, variant, where)
        daemon = Daemon(cfg, clock=lambda: EPOCH)
        daemon.journal = open_journal(cfg.journal, cfg.table.id, now=EPOCH)
        if daemon.journal is not None and daemon.journal.blank:
            daemon.journal.write_checkpoint(0.0, checkpoint(daemon.engine))  # as start() does
        size = MAX_BATCH if variant.endswith("-backlog") else 1
        batches = [list(events[i : i + size]) for i in range(0, len(events), size)]
        samples = []
        start = time.perf_counter()
        for batch in batches:
            t0 = time.perf_counter()
            daemon.handle(batch)
            samples.append(time.perf_counter() - t0)
        elapsed = time.perf_counter() - start
        segments = 0
        if daemon.journal is not None:
            daemon.journal.close()
            if cfg.journal.directory is not None:
                segments = int(daemon.journal.path.name[-12:-6])  # the last segment's number
                assert len(list_segments(cfg.journal.directory)) <= 3
        samples.sort()
        return {
            "events_per_s": len(events) / elapsed,
            "p50_ms": samples[len(samples) // 2] * 1e3,
            "p99_ms": statistics.quantiles(samples, n=100)[98] * 1e3,
            "max_ms": samples[-1] * 1e3,
            "segments": segments,
        }
    finally:
        shutil.rmtree(where, ignore_errors=True)


def journal_machine(journal_dir: Path) -> dict[str, Any]:
    """The machine, and the file system the journal was written to."""
    fs = subprocess.run(
        ["df", "--output=fstype,source", str(journal_dir)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    return machine() | {
        "journal_dir": str(journal_dir),
        "journal_fs": " ".join(fs[2:]) if len(fs) >= 4 else "unknown",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=40, help="demo hands in the trace")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each variant")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp"), help="journal location")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    load_before = round(os.getloadavg()[0], 2)
    workdir = Path(tempfile.mkdtemp(prefix="durability-"))
    config = bench_config(workdir)
    events = demo_script(config, args.hands, args.seed)
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    for round_ in range(args.repeat):
        order = VARIANTS[round_ % len(VARIANTS) :] + VARIANTS[: round_ % len(VARIANTS)]
        for variant in order:  # rotated each round: no variant always runs first
            runs[variant].append(run_once(config, events, variant, args.dir))
    shutil.rmtree(workdir, ignore_errors=True)

    def median(variant: str, key: str) -> float:
        return float(statistics.median(r[key] for r in runs[variant]))

    def baseline(variant: str) -> str:  # a backlog run is compared with the backlog baseline
        return "off-backlog" if variant.endswith("-backlog") else "off"

    summary = {
        v: {
            "events_per_s": median(v, "events_per_s"),
            "p50_ms": median(v, "p50_ms"),
            "p99_ms": median(v, "p99_ms"),
            "max_ms": median(v, "max_ms"),
            "segments": median(v, "segments"),
            "throughput_vs_off": median(v, "events_per_s") / median(baseline(v), "events_per_s"),
            "p99_added_ms": median(v, "p99_ms") - median(baseline(v), "p99_ms"),
        }
        for v in VARIANTS
    }
    host = journal_machine(args.dir)
    host["load_average_1min"] = [load_before, host["load_average_1min"]]  # before, after
    result = {
        "machine": host,
        "events": len(events),
        "hands": args.hands,
        "repeat": args.repeat,
        "medians": summary,
        "runs": runs,
    }
    print(json.dumps(result["machine"]))
    print(f"{len(events)} events, {args.repeat} runs each (medians)")
    print(f"{'journal':15} {'inputs/s':>10} {'vs off':>7} {'p50 ms':>8} {'p99 ms':>8} {'+p99':>7}")
    for v, s in summary.items():
        print(
            f"{v:15} {s['events_per_s']:10.0f} {s['throughput_vs_off']:6.2f}x "
            f"{s['p50_ms']:8.3f} {s['p99_ms']:8.3f} {s['p99_added_ms']:7.3f}"
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
