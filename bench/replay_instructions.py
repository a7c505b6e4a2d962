"""Replay cost as instructions executed (valgrind's callgrind), this tree beside another's.

CPU time still moves with what else the machine runs (caches, frequency, the other
core's work); the number of instructions a deterministic replay executes does not.
For each tree, the same seeded hands and their physical traces are generated in that
tree's own process (outside valgrind: generation runs pokerkit and is not measured) and
pickled to a temporary file. Then, under `valgrind --tool=callgrind`, a process of that
tree runs:

- **load**: the imports of the replay and the unpickling of the hands and traces;
- **engine**: the same, then every trace through a fresh `Engine` (`replay_traces`);
- **pokerkit**: the same, then every hand through a fresh pokerkit state (`replay_actions`).

The replay's count is the run's total minus the load run's (the trees import different
modules). PYTHONHASHSEED=0 in every child, so string hashing, and with it every dict and
set of strings, is the same from run to run.

    .venv/bin/python -m bench.replay_instructions --baseline-tree ../tablectl-5cdb792 \\
        --hands 80 --json bench/results/replay_instructions.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.machine import machine

ROOT = Path(__file__).resolve().parent.parent

#: Run in each tree, outside valgrind: the hands, their traces, a check that both replays
#: agree with pokerkit's recorded stacks, all pickled.
GENERATE = """
import pickle, sys
sys.path.insert(0, ".")
from bench.replay_throughput import generate_hands, replay_actions, replay_traces, trace_of
hands = generate_hands({seed}, {hands})
traces = [trace_of(h) for h in hands]
engines = replay_traces(traces)
stacks = replay_actions(hands)
agree = sum(
    1
    for hand, engine, final in zip(hands, engines, stacks, strict=True)
    if final == hand.final_stacks
    and tuple(engine.seats[p + 1].stack for p in range(hand.players)) == final
)
with open({path!r}, "wb") as f:
    pickle.dump((hands, traces), f, protocol=pickle.HIGHEST_PROTOCOL)
print(agree, sum(len(t) for t in traces), sum(len(h.actions) for h in hands))
"""

#: Run in each tree under callgrind: load, then (maybe) one replay.
MEASURE = """
import pickle, sys
sys.path.insert(0, ".")
from bench.replay_throughput import replay_actions, replay_traces
with open({path!r}, "rb") as f:
    hands, traces = pickle.load(f)
mode = {mode!r}
if mode == "engine":
    replay_traces(traces)
elif mode == "pokerkit":
    replay_actions(hands)
"""

MODES = ("load", "engine", "pokerkit")


def child_env(pycache: Path) -> dict[str, str]:
    """The environment of every child: fixed string hashing, and bytecode cached outside the
    trees (compiled when the hands are generated, not again under valgrind)."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def generate(tree: Path, hands: int, seed: int, path: Path) -> dict[str, int]:
    """Pickle `hands` seeded hands and their traces, made by `tree`'s own code, to `path`."""
    code = GENERATE.format(seed=seed, hands=hands, path=str(path))
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tree,
        env=child_env(path.parent / "pycache"),
        capture_output=True,
        text=True,
        check=True,
    )
    agree, events, actions = (int(x) for x in done.stdout.split()[-3:])
    return {"hands_agreeing": agree, "trace_events": events, "pokerkit_actions": actions}


def instructions(tree: Path, path: Path, mode: str, out: Path) -> int:
    """Instructions executed by a process of `tree` loading `path` and replaying as `mode`."""
    code = MEASURE.format(path=str(path), mode=mode)
    subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-c",
            code,
        ],
        cwd=tree,
        env=child_env(path.parent / "pycache"),
        capture_output=True,
        text=True,
        check=True,
    )
    match = re.search(r"^summary:\s*(\d+)", out.read_text(), re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no summary line in {out}")
    return int(match.group(1))


def summarise(
    tree: Path, hands: int, info: dict[str, int], totals: dict[str, list[int]]
) -> dict[str, Any]:
    """Each replay's count (its run's total minus the load run's), per hand and per event."""
    load = totals["load"][0]
    engine = totals["engine"][0] - load
    pokerkit = totals["pokerkit"][0] - load
    return {
        "tree": str(tree),
        **info,
        "totals": totals,
        "engine_instructions": engine,
        "pokerkit_instructions": pokerkit,
        "engine_instructions_per_hand": round(engine / hands),
        "pokerkit_instructions_per_hand": round(pokerkit / hands),
        "engine_instructions_per_event": round(engine / info["trace_events"]),
        "engine_over_pokerkit": round(engine / pokerkit, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline-tree", type=Path, required=True)
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="NAME=TREE",
        help="another tree measured beside the two (e.g. this release before a change)",
    )
    parser.add_argument("--hands", type=int, default=80)
    parser.add_argument("--seed", type=int, default=20_261_122)
    parser.add_argument(
        "--repeat",
        default="engine",
        help="comma-separated modes run twice in this tree, to show the count repeats",
    )
    parser.add_argument(
        "--jobs", type=int, default=2, help="valgrind runs at once (the counts do not change)"
    )
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep the pickles and callgrind files here"
    )
    parser.add_argument(
        "--json", type=Path, default=ROOT / "bench" / "results" / "replay_instructions.json"
    )
    args = parser.parse_args()
    repeat = tuple(m for m in args.repeat.split(",") if m)
    unknown = set(repeat) - set(MODES)
    if unknown:
        parser.error(f"--repeat: unknown modes {sorted(unknown)}")
    trees = {"baseline": args.baseline_tree.resolve(), "this": ROOT}
    for also in args.also:
        name, _, tree = also.partition("=")
        if not tree or name in trees:
            parser.error(f"--also {also!r}: want a new NAME=TREE")
        trees[name] = Path(tree).resolve()
    started = time.time()
    result: dict[str, Any] = {"hands": args.hands, "seed": args.seed}
    with (
        tempfile.TemporaryDirectory(prefix="replay-instr-") as tmp,
        ThreadPoolExecutor(max_workers=args.jobs) as pool,
    ):
        work = Path(tmp) if args.keep is None else args.keep.resolve()
        work.mkdir(parents=True, exist_ok=True)
        infos = {
            name: generate(tree, args.hands, args.seed, work / f"{name}.pickle")
            for name, tree in trees.items()
        }
        # The longest runs first, so that the last ones to finish are short.
        runs: dict[str, dict[str, list[Future[int]]]] = {name: {} for name in trees}
        for mode in ("pokerkit", "engine", "load"):
            for name, tree in trees.items():
                runs[name][mode] = [
                    pool.submit(
                        instructions,
                        tree,
                        work / f"{name}.pickle",
                        mode,
                        work / f"{name}.{mode}.{i}.out",
                    )
                    for i in range(2 if name == "this" and mode in repeat else 1)
                ]
        for name, info in infos.items():
            totals = {mode: [run.result() for run in runs[name][mode]] for mode in MODES}
            print(f"{name}: {totals}", file=sys.stderr, flush=True)
            result[name] = summarise(trees[name], args.hands, info, totals)
    for name in trees:
        for measure in ("engine", "pokerkit"):
            key = f"{measure}_instructions"
            result[name][f"{measure}_over_baseline"] = round(
                result[name][key] / result["baseline"][key], 4
            )
    result["engine_this_over_baseline"] = result["this"]["engine_over_baseline"]
    result["seconds"] = round(time.time() - started, 1)
    result["valgrind"] = subprocess.run(
        ["valgrind", "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    result["machine"] = machine()
    print(json.dumps(result, indent=2))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
