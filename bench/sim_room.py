"""A room in one sim: how many simulated tables keep real time, the room storing every event.

Runs `tablectl sim --tables N --hands H --speed 1 --room --quiet --no-tv` for each N, and
reads what it prints: each table's simulated play time against the real time it took
(a table keeps real time when they are equal: `--speed 1`), and the room's check that it
stored every event the tables published. CPU is every process of the run (the workers,
the room server, mosquitto), from the kernel's accounting of the finished children.

Usage: python -m bench.sim_room --tables 8 32 64 100 [--hands 1] [--baseline-tree DIR]
       [--json out.json]

With `--baseline-tree`, another checkout's sim (`git worktree add DIR <commit>`) plays the
first count of tables first: its CPU beside ours for the same tables and hands.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.machine import machine

PLAYED = re.compile(r"\(table (\S+)\), ([0-9.]+) s of play in ([0-9.]+) s")
STORED = re.compile(r"room: (\d+) of the (\d+) events the tables published stored")
ROWS = re.compile(r"room: (\d+) events stored")
SEQ = re.compile(r"last seq (\d+) \(table")
ROOT = Path(__file__).resolve().parent.parent


def run(
    tables: int, hands: int, seed: int, tree: Path | None = None, speed: float = 1.0
) -> dict[str, Any]:
    """One sim of `tables` tables (`tree`: another checkout's sim); what it printed."""
    where = (tree or ROOT).resolve()
    cmd = [sys.executable, "-m", "tablectl.cli", "sim", "--tables", str(tables)]
    cmd += ["--hands", str(hands)]
    cmd += ["--speed", repr(speed), "--room", "--quiet", "--no-tv", "--seed", str(seed)]
    if tree is None:  # this release: its plain lines, and exit once the hands are dealt
        cmd += ["--json", "--exit-when-done"]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    out = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        check=False,
        cwd=where,
        env=dict(os.environ, PYTHONPATH=str(where)),
    )
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    behind = []
    play = []
    for table, sim, real in PLAYED.findall(out.stdout):
        del table
        play.append(float(sim))
        behind.append(max(0.0, float(real) - float(sim) / speed))
    stored = STORED.search(out.stdout)
    rows = ROWS.search(out.stdout)
    seqs = [int(n) for n in SEQ.findall(out.stdout)]
    return {
        "sim": "ours" if tree is None else f"baseline {tree}",
        "tables": tables,
        "speed": speed,
        "exit": out.returncode,
        "tables_reported": len(play),
        "sim_seconds_median": statistics.median(play) if play else None,
        "behind_s_median": statistics.median(behind) if behind else None,
        "behind_s_max": max(behind) if behind else None,
        "events_stored": int(stored.group(1)) if stored else int(rows.group(1)) if rows else None,
        "events_published": int(stored.group(2)) if stored else sum(seqs) if seqs else None,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cores_used": round(cpu / wall, 2) if wall else None,
        # CPU (core-seconds) per table per second of play, start-up included: the cores a
        # table takes at real time; 2 cores / this = the tables 2 idle cores keep real
        "cpu_per_table_second": round(cpu / (tables * statistics.median(play)), 4)
        if play
        else None,
        "load_average_1min_before": round(load, 2),
        "stderr_tail": out.stderr[-500:] if out.returncode else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--hands", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help="the sim's --speed (1: the demo dealer's pace, about 10 moves a second a "
        "table; 0.35: about real play's 3)",
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--baseline-tree",
        type=Path,
        default=None,
        help="another checkout: its sim runs the first count of --tables too, before ours",
    )
    args = parser.parse_args()
    results: dict[str, Any] = {"machine": machine(), "runs": []}
    if args.baseline_tree is not None:
        result = run(args.tables[0], args.hands, args.seed, args.baseline_tree, args.speed)
        results["runs"].append(result)
        print(json.dumps(result), flush=True)
    for tables in args.tables:
        result = run(tables, args.hands, args.seed, speed=args.speed)
        results["runs"].append(result)
        print(json.dumps(result), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
