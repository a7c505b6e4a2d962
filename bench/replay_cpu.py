"""Replay throughput as CPU time, this tree beside another release's, alternating.

On a shared machine the wall clock of `bench/replay_throughput.py` swings by a third from
run to run (other processes take the cores); the CPU time a replay takes swings far less.
Each tree replays the same seeded hands (engine from the physical traces, pokerkit from
the action lists) in a process of its own, the trees taking turns; the median CPU seconds
of each are printed and, with --json, written.

    .venv/bin/python -m bench.replay_cpu --baseline-tree ../tablectl-5cdb792 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.machine import machine

ROOT = Path(__file__).resolve().parent.parent
#: Run inside each tree: its own engine, pokerkit and the same hands.
CHILD = """
import json, statistics, sys, time
sys.path.insert(0, ".")
from bench.replay_throughput import generate_hands, replay_actions, replay_traces, trace_of
hands = generate_hands({seed}, {hands})
traces = [trace_of(h) for h in hands]
replay_traces(traces); replay_actions(hands)
def cpu(f):
    t = time.process_time(); f(); return time.process_time() - t
e = [cpu(lambda: replay_traces(traces)) for _ in range({repeats})]
p = [cpu(lambda: replay_actions(hands)) for _ in range({repeats})]
print(json.dumps({{"engine": statistics.median(e), "pokerkit": statistics.median(p)}}))
"""


def run(tree: Path, hands: int, seed: int, repeats: int) -> dict[str, float]:
    """The median CPU seconds of the engine's and pokerkit's replays, in `tree`."""
    code = CHILD.format(seed=seed, hands=hands, repeats=repeats)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline-tree", type=Path, required=True)
    parser.add_argument("--hands", type=int, default=300)
    parser.add_argument("--seed", type=int, default=20_261_122)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    trees = {"baseline": args.baseline_tree.resolve(), "this": ROOT}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    started = time.time()
    for _ in range(args.rounds):
        for name, tree in trees.items():
            runs[name].append(run(tree, args.hands, args.seed, args.repeats))
    result: dict[str, Any] = {"hands": args.hands, "seed": args.seed, "rounds": args.rounds}
    for name, found in runs.items():
        engine = statistics.median(r["engine"] for r in found)
        pokerkit = statistics.median(r["pokerkit"] for r in found)
        result[name] = {
            "engine_cpu_s": round(engine, 3),
            "pokerkit_cpu_s": round(pokerkit, 3),
            "engine_ms_per_hand": round(1000 * engine / args.hands, 3),
            "runs": found,
        }
    result["engine_this_over_baseline"] = round(
        result["this"]["engine_cpu_s"] / result["baseline"]["engine_cpu_s"], 3
    )
    result["seconds"] = round(time.time() - started, 1)
    result["machine"] = machine()
    print(json.dumps(result, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
