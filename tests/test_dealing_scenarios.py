"""Dealing-error scenarios (TDA 35-39, RP-5, rule 23, house profiles) replayed end to end.

Each `tests/scenarios/rule_*.jsonl` / `profile_*.jsonl` trace holds a dealing error and its
remedy. Its `# expect:` lines name the events and alerts (with their rule citations) that
must come out, in that order; its `# clean:` line names a trace dealing the same cards
without the error, and the state after the remedy must equal the state of that clean deal.
The traces are written by `tests/scenarios/build_dealing.py`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "tests" / "scenarios"
CONFIG = ROOT / "examples" / "sim-table.toml"
TRACES = sorted(
    p
    for p in SCENARIOS.glob("*.jsonl")
    if p.name.startswith(("rule_", "profile_"))
    and not p.name.endswith((".expected.jsonl", ".clean.jsonl"))
)
# Not part of the hand: who stands at the table, and the clock.
NOT_COMPARED = ("t", "seq", "floor")


def header(trace: Path, key: str) -> list[str]:
    prefix = f"# {key}:"
    return [
        line[len(prefix) :].strip()
        for line in trace.read_text().splitlines()
        if line.startswith(prefix)
    ]


def replay(trace: Path) -> list[dict[str, Any]]:
    profile = header(trace, "profile")
    args = [sys.executable, "-m", "controller.cli", "replay", str(trace), "--config", str(CONFIG)]
    if profile:
        args += ["--profile", profile[0]]
    done = subprocess.run(args, capture_output=True, timeout=120, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr.decode()
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def final_state(messages: list[dict[str, Any]]) -> dict[str, Any]:
    state = [m["payload"] for m in messages if m["topic"].endswith("/state")][-1]
    return {k: v for k, v in state.items() if k not in NOT_COMPARED}


def test_every_scenario_was_built() -> None:
    assert len(TRACES) >= 30


@pytest.mark.parametrize("trace", TRACES, ids=[p.stem for p in TRACES])
def test_dealing_scenario_events_and_rules(trace: Path) -> None:
    out = replay(trace)
    said = [m["payload"] for m in out if m["topic"].endswith(("/events", "/alerts"))]
    assert not [p for p in said if p["type"] in ("engine_fault", "input_error")]
    expected = [json.loads(line) for line in header(trace, "expect")]
    assert expected, f"{trace.name} has no '# expect:' line"
    at = 0
    for want in expected:
        for i in range(at, len(said)):
            if all(said[i].get(k) == v for k, v in want.items()):
                at = i + 1
                break
        else:
            got = [(p["type"], p.get("rule")) for p in said]
            pytest.fail(f"{trace.name}: no {want} after message {at}; got {got}")


@pytest.mark.parametrize(
    "trace",
    [p for p in TRACES if header(p, "clean")],
    ids=[p.stem for p in TRACES if header(p, "clean")],
)
def test_state_after_the_remedy_equals_a_clean_deal(trace: Path) -> None:
    remedied = final_state(replay(trace))
    clean = final_state(replay(SCENARIOS / header(trace, "clean")[0]))
    assert remedied == clean
    assert remedied["procedures"] == []
