"""A room in one sim: how many simulated tables keep real time, the room storing every event.

Runs `tablectl sim --tables N --hands H --speed 1 --room --quiet --no-tv` for each N, and
reads what it prints: each table's simulated play time against the real time it took
(a table keeps real time when they are equal: `--speed 1`), and the room's check that it
stored every event the tables published. CPU is every process of the run (the workers,
the room server, mosquitto), from the kernel's accounting of the finished children.

Usage: python -m bench.sim_room --tables 8 16 32 [--hands 1] [--json out.json]
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


def run(tables: int, hands: int, seed: int) -> dict[str, Any]:
    """One sim of `tables` tables; what it printed, summed up."""
    tablectl = Path(sys.executable).with_name("tablectl")
    cmd = [str(tablectl), "sim", "--tables", str(tables), "--hands", str(hands)]
    cmd += ["--speed", "1", "--room", "--quiet", "--no-tv", "--seed", str(seed)]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.monotonic() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    behind = []
    play = []
    for table, sim, real in PLAYED.findall(out.stdout):
        del table
        play.append(float(sim))
        behind.append(max(0.0, float(real) - float(sim)))
    stored = STORED.search(out.stdout)
    return {
        "tables": tables,
        "exit": out.returncode,
        "tables_reported": len(play),
        "sim_seconds_median": statistics.median(play) if play else None,
        "behind_s_median": statistics.median(behind) if behind else None,
        "behind_s_max": max(behind) if behind else None,
        "events_stored": int(stored.group(1)) if stored else None,
        "events_published": int(stored.group(2)) if stored else None,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "cores_used": round(cpu / wall, 2) if wall else None,
        "load_average_1min_before": round(load, 2),
        "stderr_tail": out.stderr[-500:] if out.returncode else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--hands", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    results: dict[str, Any] = {"machine": machine(), "runs": []}
    for tables in args.tables:
        result = run(tables, args.hands, args.seed)
        results["runs"].append(result)
        print(json.dumps(result), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
