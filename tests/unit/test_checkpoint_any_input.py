"""A checkpoint taken after any input, mid-hand too, restores an engine that goes on exactly.

For every scenario trace and a few random oracle hands: after each input the engine's
checkpoint goes through JSON and into a fresh engine; that engine's own checkpoint is the
same, and it answers the next input as the original did. At sampled inputs (at every one
with CHECKPOINT_EVERY_INPUT=1) it is fed every remaining input: the published output is
byte-identical to the uninterrupted run's.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.config import with_game
from controller.engine.checkpoint import VERSION, checkpoint, restore
from controller.engine.engine import Engine
from controller.engine.spec import EngineSpec
from controller.journal import read_trace_file
from controller.replay import build_engine, drive
from controller.staff import load_staff
from kernel.errors import CheckpointError
from kernel.inputs import Event
from sim.tables import sim_table_file
from tablectl.cli import trace_headers
from tests.money_judge import judge_completed_hands, pairs
from tests.oracle import generate_hands, new_engine, trace_of

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
CONFIG = ROOT / "examples" / "sim-table.toml"
TRACES = sorted(p for p in SCENARIOS.glob("*.jsonl") if not p.name.endswith(".expected.jsonl"))
EVERY_INPUT = os.environ.get("CHECKPOINT_EVERY_INPUT") == "1"
#: Inputs per trace fed to the end from a restored engine in the fast suite (besides the
#: first and the last): the rest are checked one input further.
SAMPLED = 3
ORACLE_HANDS = 4


def _lines(outputs: list[list[str]]) -> list[str]:
    return [line for out in outputs for line in out]


def _run(new: Callable[[], Engine], events: list[Event], name: str) -> int:
    """The checks above over one trace's inputs (ticks included); how many indices ran to
    the end."""
    engine = new()
    saved: list[dict[str, Any]] = []
    deadlines: list[float | None] = []
    outputs: list[list[str]] = []
    for event in events:
        saved.append(json.loads(json.dumps(checkpoint(engine))))
        deadlines.append(engine.deadline())
        outputs.append([m.to_line("p") for m in engine.apply(event)])
    saved.append(json.loads(json.dumps(checkpoint(engine))))
    n = len(events)
    rng = random.Random(name)
    full = set(range(n + 1)) if EVERY_INPUT else {0, n, *rng.sample(range(n + 1), min(SAMPLED, n))}
    for i, state in enumerate(saved):
        restored = new()
        restore(restored, state)
        assert checkpoint(restored) == state, f"{name}: checkpoint after input {i} differs"
        if i < n:
            assert restored.deadline() == deadlines[i], f"{name}: deadline after input {i}"
        rest = events[i:] if i in full else events[i : i + 1]
        got = [[m.to_line("p") for m in restored.apply(event)] for event in rest]
        want = outputs[i : i + len(rest)]
        assert _lines(got) == _lines(want), f"{name}: restored after input {i} of {n}"
        if i in full:
            assert checkpoint(restored) == saved[-1]
    return len(full)


def _scenario(trace: Path) -> tuple[Callable[[], Engine], list[Event]]:
    """The engine `tablectl replay` builds for a scenario trace, and its inputs with the
    timers it fires (`drive`)."""
    headers = trace_headers(trace)
    config = with_game(sim_table_file(CONFIG, headers.get("profile")), headers.get("game"))
    segment = read_trace_file(trace)
    built = build_engine(config)  # its registries are read once, and only read after
    spec = EngineSpec.from_config(config)
    staff = load_staff(config.badge.staff) if config.badge.staff is not None else None

    def new() -> Engine:
        engine = Engine(spec, deck=built.deck, chips=built.chips, staff=staff)
        engine.epoch = segment.epoch
        return engine

    events = [event for event, _ in drive(new(), segment.events)]
    return new, events


@pytest.mark.parametrize("trace", TRACES, ids=[p.stem for p in TRACES])
def test_checkpoint_after_any_input_of_a_scenario_goes_on_byte_identical(trace: Path) -> None:
    new, events = _scenario(trace)
    assert _run(new, events, trace.stem) >= 2


def test_checkpoint_after_any_input_of_random_hands_goes_on_byte_identical() -> None:
    for number, hand in enumerate(generate_hands(20_261_129, ORACLE_HANDS, antes=True)):
        _run(new_engine, trace_of(hand), f"oracle hand {number}")
        # the hand itself, uninterrupted, exported to PHH and judged strictly by pokerkit
        engine = new_engine()
        out = [m for event in trace_of(hand) for m in engine.apply(event)]
        assert judge_completed_hands(pairs(out)) == ["hand 1: judged exactly"], number


def test_checkpoint_mid_hand_holds_the_hand_and_refuses_a_foreign_procedure() -> None:
    hand = generate_hands(20_261_129, 1)[0]
    trace = trace_of(hand)
    engine = new_engine()
    for event in trace[: len(trace) // 2]:
        engine.apply(event)
    assert engine.hand is not None
    state = json.loads(json.dumps(checkpoint(engine)))
    assert state["version"] == VERSION == 4
    assert state["hand"]["record"]["facts"]["number"] == engine.hand.number
    forged = json.loads(json.dumps(state))
    forged["hand"]["record"]["dealing"]["procedures"] = [
        {"type": "os.system", "id": 0, "fields": {}}
    ]
    with pytest.raises(CheckpointError, match="not a known Procedure"):
        restore(new_engine(), forged)


def _subclasses(cls: type) -> set[type]:
    return {sub for direct in cls.__subclasses__() for sub in {direct, *_subclasses(direct)}}


def test_the_registry_knows_every_procedure_of_the_engine() -> None:
    import controller.engine.dealing  # noqa: F401  (imports every procedure module)
    from controller.engine.hand_record import REGISTRY
    from controller.engine.procedures.base import Procedure

    assert set(REGISTRY.tagged[Procedure].values()) == _subclasses(Procedure)
