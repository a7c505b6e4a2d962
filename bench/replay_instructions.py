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

Each mode's count repeats exactly from run to run (`--repeat` runs modes twice in this tree
to show it); `--also NAME=TREE` measures more trees beside the two (e.g. this release
before a change, in a scratch worktree). Valgrind runs Python some 50-100 times slower: at
60 hands a run takes minutes; `--jobs` runs at once.

    .venv/bin/python -m bench.replay_instructions --baseline-tree ../tablectl-5cdb792 --hands 60
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
if {freeze!r}:
    import gc
    gc.collect()
    gc.freeze()
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


def instructions(tree: Path, path: Path, mode: str, out: Path, freeze: bool = False) -> int:
    """Instructions executed by a process of `tree` loading `path` and replaying as `mode`
    (with `freeze`, the loaded objects are moved out of the collector's sight first)."""
    code = MEASURE.format(path=str(path), mode=mode, freeze=freeze)
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
    out: dict[str, Any] = {"tree": str(tree), **info, "totals": totals}
    for mode in ("engine", "pokerkit"):
        if mode in totals:
            count = totals[mode][0] - load
            out[f"{mode}_instructions"] = count
            out[f"{mode}_instructions_per_hand"] = round(count / hands)
    if "engine" in totals:
        out["engine_instructions_per_event"] = round(
            out["engine_instructions"] / info["trace_events"]
        )
        if "pokerkit" in totals:
            out["engine_over_pokerkit"] = round(
                out["engine_instructions"] / out["pokerkit_instructions"], 4
            )
    return out


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
    parser.add_argument("--hands", type=int, default=60)
    parser.add_argument("--seed", type=int, default=20_261_122)
    parser.add_argument(
        "--repeat",
        default="engine",
        help="comma-separated modes run twice in this tree, to show the count repeats",
    )
    parser.add_argument(
        "--modes", default="pokerkit,engine", help="the replays counted (load always is)"
    )
    parser.add_argument(
        "--gc-freeze",
        action="store_true",
        help="gc.collect() and gc.freeze() after loading, so that no collection during the "
        "replay walks what the tree imported (which differs between trees)",
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
    modes = tuple(m for m in args.modes.split(",") if m)
    unknown = set(repeat + modes) - set(MODES)
    if unknown:
        parser.error(f"--repeat/--modes: unknown modes {sorted(unknown)}")
    trees = {"baseline": args.baseline_tree.resolve(), "this": ROOT}
    for also in args.also:
        name, _, tree = also.partition("=")
        if not tree or name in trees:
            parser.error(f"--also {also!r}: want a new NAME=TREE")
        trees[name] = Path(tree).resolve()
    started = time.time()
    result: dict[str, Any] = {"hands": args.hands, "seed": args.seed, "gc_freeze": args.gc_freeze}
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
        for mode in (*modes, "load"):
            for name, tree in trees.items():
                runs[name][mode] = [
                    pool.submit(
                        instructions,
                        tree,
                        work / f"{name}.pickle",
                        mode,
                        work / f"{name}.{mode}.{i}.out",
                        args.gc_freeze,
                    )
                    for i in range(2 if name == "this" and mode in repeat else 1)
                ]
        for name, info in infos.items():
            totals = {mode: [run.result() for run in found] for mode, found in runs[name].items()}
            print(f"{name}: {totals}", file=sys.stderr, flush=True)
            result[name] = summarise(trees[name], args.hands, info, totals)
    for name in trees:
        for measure in modes:
            key = f"{measure}_instructions"
            result[name][f"{measure}_over_baseline"] = round(
                result[name][key] / result["baseline"][key], 4
            )
    if "engine" in modes:
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
