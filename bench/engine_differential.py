"""Old-vs-new differential replay of the engine: the same recorded inputs through this tree's
engine and another release's, every published message compared byte for byte.

For a refactor meant to change no behaviour. `record` runs the test generators in this tree
with every `Engine` built recording its constructor arguments and each input it is given,
one pickle per engine (inputs that depend on the engine's output, a `draw` the engine
wants, are recorded as they were fed, and replayed as they are):

- `fuzz`: tests/system/test_dealing_fuzz.py's seeded dealer (misdeals, four-card flops,
  premature cards, line noise), every profile in turn, `--hands` hands a run;
- `money`: tests/unit/test_money_properties.py's machine (out of turn, killed raisers,
  chips pulled back, straddles, every profile, NL/PL/FL), each hand finished;
- `room`: the money machine with the room's commands too (holds, hand-for-hand and its
  face-down all-in, RP-8 F; pauses, players away, level changes);
- `liveness`: tests/unit/test_liveness.py's dealing machine, its hand finished by
  tests/liveness_finisher.py;
- `oracle`: bench/replay_throughput.py's generated hands (`trace_of`), one per engine.

`compare` replays every recording in a process of its own in each tree (cwd = the tree: its
own `controller`), each input's messages (topic, payload JSON, qos, retain), deadline, wanted
draw, command accepted and lamps digested, the checkpoint every `--every` inputs and at the
end; it prints the traces that differ (first differing input) and the counts per generator.
`show` prints one trace's lines side by side where they first differ.

    .venv/bin/python -m bench.engine_differential record fuzz --count 40 --out /tmp/diff/fuzz
    .venv/bin/python -m bench.engine_differential compare --baseline-tree ../old /tmp/diff/*
    .venv/bin/python -m bench.engine_differential show --baseline-tree ../old TRACE.pkl
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import pickle
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: Run inside each tree (cwd): its own engine replays the recordings named on argv.
CHILD = r"""
import hashlib, json, pickle, sys
sys.path.insert(0, ".")
from controller.engine.engine import Engine
from controller.engine.checkpoint import checkpoint

every, full, files = int(sys.argv[1]), sys.argv[2] == "full", sys.argv[3:]


def lines_of(engine, event, ckpt):
    try:
        msgs = engine.apply(event)
    except Exception as exc:
        return [f"EXC {type(exc).__name__}: {exc}"], True
    out = [f"M {m.topic} {json.dumps(m.payload)} {m.qos} {m.retain}" for m in msgs]
    out.append(f"D {engine.deadline()!r} {engine.wants_draw()!r} {engine.command_accepted}")
    out.append("L " + json.dumps(engine.lamps()))
    if ckpt:
        out.append("C " + json.dumps(checkpoint(engine)))
    return out, False


for path in files:
    with open(path, "rb") as f:
        rec = pickle.load(f)
    args, kwargs = pickle.loads(rec["ctor"])
    engine = Engine(*args, **kwargs)
    digests, hands, final = [], 0, None
    for i, event in enumerate(rec["events"]):
        lines, died = lines_of(engine, event, every and i % every == every - 1)
        hands += sum(1 for l in lines if l.startswith('M events {"type": "hand_completed"'))
        if full:
            print(f"#{i} {event!r}")
            print("\n".join(lines))
        else:
            digests.append(hashlib.sha1("\n".join(lines).encode()).hexdigest()[:16])
        if died:
            break
    else:
        final = json.dumps(checkpoint(engine))
    if full:
        print(f"FINAL {final}")
    else:
        fh = hashlib.sha1(str(final).encode()).hexdigest()[:16]
        row = {"file": path, "n": len(rec["events"]), "hands": hands, "digests": digests}
        print(json.dumps({**row, "final": fh}), flush=True)
"""


# ----------------------------------------------------------------------------- record


class _Recorder:
    """Every `Engine` built from now on records its arguments and inputs."""

    def __init__(self, out: Path, tag: str) -> None:
        from controller.engine.engine import Engine

        self.out, self.tag, self.count, self.inputs = out, tag, 0, 0
        self.live: list[tuple[bytes, list[Any]]] = []
        out.mkdir(parents=True, exist_ok=True)
        init, apply, live = Engine.__init__, Engine.apply, self.live

        def _init(engine: Any, *args: Any, **kwargs: Any) -> None:
            init(engine, *args, **kwargs)
            events: list[Any] = []
            engine.__dict__["_recorded"] = events
            live.append((pickle.dumps((args, kwargs)), events))

        def _apply(engine: Any, event: Any) -> Any:
            engine.__dict__.get("_recorded", []).append(event)
            return apply(engine, event)

        Engine.__init__ = _init  # type: ignore[method-assign,assignment]
        Engine.apply = _apply  # type: ignore[method-assign,assignment]

    def flush(self) -> None:
        """Write every engine that was given an input; forget them all."""
        for ctor, events in self.live:
            if events:
                self.count += 1
                self.inputs += len(events)
                path = self.out / f"{self.tag}{self.count:06d}.pkl"
                path.write_bytes(pickle.dumps({"ctor": ctor, "events": events}))
        self.live.clear()


def record(gen: str, count: int, seed: int, hands: int, steps: int, out: Path) -> None:
    sys.path.insert(0, str(ROOT))
    from hypothesis import HealthCheck, settings
    from hypothesis.stateful import run_state_machine_as_test

    rec = _Recorder(out, gen)
    chosen = settings(
        max_examples=count,
        stateful_step_count=steps,
        deadline=None,
        derandomize=False,
        database=None,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )
    if gen == "fuzz":
        from controller.rules.profiles import PROFILES
        from tests.system.test_dealing_fuzz import play

        profiles = sorted(PROFILES)
        for k in range(count):
            play(profiles[k % len(profiles)], seed * 100_000 + k, hands=hands)
            rec.flush()
    elif gen == "oracle":
        from tests.oracle import generate_hands, new_engine, trace_of

        for hand in generate_hands(seed, count, antes=bool(seed % 2)):
            engine = new_engine()
            for event in trace_of(hand):
                engine.apply(event)
            rec.flush()
    else:
        run_state_machine_as_test(_machine(gen, rec), settings=chosen)
    rec.flush()
    print(f"{gen}: {rec.count} recordings, {rec.inputs} inputs in {out}")


def _machine(gen: str, rec: _Recorder) -> Any:
    """The hypothesis machine of `gen`, flushing its recordings after each run."""
    from hypothesis import strategies as st
    from hypothesis.stateful import rule

    from tests.engine_helpers import ev
    from tests.liveness_finisher import complete_hand

    # Imported by name: the test modules are not type-checked as the product is.
    machines = importlib.import_module("tests.unit.test_money_properties")
    dealing = importlib.import_module("tests.unit.test_liveness")

    class Live(dealing.DealingMachine):  # type: ignore[misc,name-defined]
        def the_hand_can_be_finished(self) -> None:  # no replay per step: the trace is kept
            pass

        def teardown(self) -> None:
            if self.engine.hand is not None:
                complete_hand(self.engine, self.trace)
            rec.flush()

    class Money(machines.ChipsMachine):  # type: ignore[misc,name-defined]
        def teardown(self) -> None:
            try:
                super().teardown()
            finally:
                rec.flush()

    class Room(Money):
        def command(self, name: str, **args: Any) -> None:
            self.feed(ev(t=self.tick(), event="command", name=name, **args))

        @rule(h4h=st.sampled_from([None, True, False]))
        def room_hold(self, h4h: bool | None) -> None:
            self.command("hold", **({} if h4h is None else {"hand_for_hand": h4h}))

        @rule(h4h=st.sampled_from([None, False]))
        def room_release(self, h4h: bool | None) -> None:
            self.command("release", **({} if h4h is None else {"hand_for_hand": h4h}))

        @rule(pause=st.booleans())
        def pause(self, pause: bool) -> None:
            self.command("pause" if pause else "resume")

        @rule(seat=st.integers(1, 6), away=st.booleans())
        def away(self, seat: int, away: bool) -> None:
            if seat <= self.players:
                self.command("away", seat=seat, away=away)

        @rule(sb=st.sampled_from([25, 50, 100]), ante=st.sampled_from([0, 25]), bb=st.booleans())
        def level(self, sb: int, ante: int, bb: bool) -> None:
            ante = 2 * sb if bb else ante
            self.command("level", small_blind=sb, big_blind=2 * sb, ante=ante, bb_ante=bb)

        @rule()
        def next_hand(self) -> None:
            self.command("release", hand_for_hand=False)
            self.command("resume")
            super().next_hand()

        def finish(self) -> None:
            # a hand the room's commands left unfinished is recorded as it is
            with contextlib.suppress(AssertionError):
                super().finish()

    return {"liveness": Live, "money": Money, "room": Room}[gen]


# ----------------------------------------------------------------------------- replay


def _recordings(paths: list[Path]) -> list[str]:
    files: list[str] = []
    for p in paths:
        files += sorted(str(f) for f in p.glob("*.pkl")) if p.is_dir() else [str(p)]
    return files


def _replay(tree: Path, files: list[str], every: int, full: bool = False) -> Iterator[str]:
    """Each line the child prints, the recordings replayed in `tree` by batches."""
    for i in range(0, len(files), 25):
        args = [
            sys.executable,
            "-c",
            CHILD,
            str(every),
            "full" if full else "-",
            *files[i : i + 25],
        ]
        done = subprocess.run(args, cwd=tree, capture_output=True, text=True, check=True)
        yield from done.stdout.splitlines()


def compare(baseline: Path, paths: list[Path], every: int) -> int:
    files = _recordings(paths)
    ours = {json.loads(line)["file"]: json.loads(line) for line in _replay(ROOT, files, every)}
    theirs = {
        json.loads(line)["file"]: json.loads(line) for line in _replay(baseline, files, every)
    }
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for f in files:
        a, b = ours[f], theirs[f]
        c = counts[Path(f).parent.name]
        c["traces"] += 1
        c["inputs"] += a["n"]
        c["hands"] += a["hands"]
        if (a["digests"], a["final"]) != (b["digests"], b["final"]):
            c["differing"] += 1
            first = next(
                (
                    i
                    for i, (x, y) in enumerate(zip(a["digests"], b["digests"], strict=False))
                    if x != y
                ),
                min(len(a["digests"]), len(b["digests"])),
            )
            print(f"DIFF {f}: first at input {first} of {a['n']}")
    for gen, c in sorted(counts.items()):
        print(gen, json.dumps(c))
    return sum(c["differing"] for c in counts.values())


def _json_diff(a: Any, b: Any, path: str = "") -> Iterator[tuple[str, str, str]]:
    """Where two JSON values differ: (path, this value, that value), deepest first found."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            yield from _json_diff(a.get(key), b.get(key), f"{path}/{key}")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from _json_diff(x, y, f"{path}[{i}]")
    elif a != b:
        yield path, json.dumps(a)[:300], json.dumps(b)[:300]


def show(baseline: Path, trace: Path, context: int) -> None:
    ours = list(_replay(ROOT, [str(trace)], 1, full=True))
    theirs = list(_replay(baseline, [str(trace)], 1, full=True))
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None)
    if first is None and len(ours) == len(theirs):
        print("no difference")
        return
    at = first if first is not None else min(len(ours), len(theirs))
    if first is not None and ours[at].startswith("C ") and theirs[at].startswith("C "):
        for path, mine, base in _json_diff(json.loads(ours[at][2:]), json.loads(theirs[at][2:])):
            print(f"checkpoint {path}: this tree {mine}, baseline {base}")
    inputs = [line for line in ours[:at] if line.startswith("#")]
    print("\n".join(inputs[-context:]))
    for name, lines in (("this tree", ours), ("baseline", theirs)):
        print(f"--- {name}")
        print("\n".join(line[:600] for line in lines[at : at + context]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("gen", choices=["fuzz", "money", "room", "liveness", "oracle"])
    rec.add_argument("--count", type=int, default=20)
    rec.add_argument("--seed", type=int, default=1)
    rec.add_argument("--hands", type=int, default=25, help="hands per fuzz run")
    rec.add_argument("--steps", type=int, default=40, help="steps per hypothesis run")
    rec.add_argument("--out", type=Path, required=True)
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("--baseline-tree", type=Path, required=True)
    cmp_.add_argument("--every", type=int, default=10, help="checkpoint every N inputs (0: end)")
    cmp_.add_argument("paths", type=Path, nargs="+")
    sho = sub.add_parser("show")
    sho.add_argument("--baseline-tree", type=Path, required=True)
    sho.add_argument("--context", type=int, default=12)
    sho.add_argument("trace", type=Path)
    args = parser.parse_args()
    if args.cmd == "record":
        out = args.out.resolve()
        os.chdir(ROOT)
        record(args.gen, args.count, args.seed, args.hands, args.steps, out)
    elif args.cmd == "compare":
        paths = [p.resolve() for p in args.paths]
        sys.exit(1 if compare(args.baseline_tree.resolve(), paths, args.every) else 0)
    else:
        show(args.baseline_tree.resolve(), args.trace.resolve(), args.context)


if __name__ == "__main__":
    main()
