"""Dealing-error scenarios (TDA 35-39, RP-5, rule 23, house profiles) replayed end to end.

Each `tests/scenarios/rule_*.jsonl` / `profile_*.jsonl` trace holds a dealing error and its
remedy. Its `# expect:` lines name the events and alerts (with their rule citations) that
must come out, in that order; a `procedure_violation` may come out only if an expect line
names one. Its `# clean:` line names a trace dealing the same cards without the error: the
state after the remedy must equal the state of that clean deal, both the public snapshot
and the engine's private card state (the live seats' hole cards, the board, the burns, and
where the readers see every card, muck included). Only the cards a `# clean-muck-differs:`
line names may be in one muck and not the other: a dead hand's card that the clean deal
never dealt, or dealt and folded (rules 37, 38). A `# profile:` trace shows a house
difference: replayed under tda-2019 its expect lines must fail.

35-E's clean twin is not a deal of hand 1 without the foreign card but hand 1 abandoned
(every chip back, rule 1) and hand 2 dealt: the states compared are hand 2's, which shows
that the fouled deck returned every bet and the table went on as after a hand with no
result (the hand itself is checked by its expect lines).
The traces are written by `tests/scenarios/build_dealing.py`.

Replay here is in-process (`controller.replay.build_engine` and `drive`, what `tablectl
replay` runs) so the engine can be inspected after the last input; the messages are
checked to be the scenario's `.expected.jsonl`, which `tests/scenarios/test_replay.py`
checks to be the command's output byte for byte.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from controller.config import load_config, with_game
from controller.engine import Engine
from controller.replay import build_engine, drive
from controller.trace import load_trace

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "scenarios"
CONFIG = ROOT / "examples" / "sim-table.toml"
TRACES = sorted(
    p
    for p in SCENARIOS.glob("*.jsonl")
    if p.name.startswith(("rule_", "profile_"))
    and not p.name.endswith((".expected.jsonl", ".clean.jsonl"))
)
PROFILE_TRACES = [p for p in TRACES if p.name.startswith("profile_")]
CLEAN_TRACES = [p for p in TRACES if any(line.startswith("# clean:") for line in p.open())]
# Not part of the hand: who stands at the table, and the clock.
NOT_COMPARED = ("t", "seq", "floor")


def header(trace: Path, key: str) -> list[str]:
    prefix = f"# {key}:"
    return [
        line[len(prefix) :].strip()
        for line in trace.read_text().splitlines()
        if line.startswith(prefix)
    ]


@dataclass(frozen=True)
class Run:
    """One replay: what was said, the last public state, and the engine's own card state."""

    lines: str  # every message as `tablectl replay` prints it
    said: list[dict[str, Any]]  # events and alerts, in order
    state: dict[str, Any]
    cards: dict[str, Any]


def private_cards(engine: Engine) -> dict[str, Any]:
    """The engine's card state, beyond the public snapshot (which counts hole cards only)."""
    where = {a: sorted(cards) for a, cards in engine.cards.contents.items() if cards}
    hand = engine.hand
    if hand is None:
        return {"hand": None, "antennas": where}
    live = hand.betting.live if hand.betting is not None else set(hand.dealt_in)
    return {
        "hand": hand.number,
        "antennas": where,  # seats, board, burn and muck as the readers see them
        "hole": {s: sorted(hand.hole.get(s, ())) for s in sorted(live)},
        "board": list(hand.board),
        "burns": list(hand.burns),
    }


@cache
def replay(trace: Path, profile: str | None = None) -> Run:
    """Replay a trace under its `# profile:` (or `profile`, to override it)."""
    named = header(trace, "profile")
    config = load_config(CONFIG, profile_override=profile or (named[0] if named else None))
    config = with_game(config, (header(trace, "game") or [None])[0])
    engine = build_engine(config)
    messages = [m for _event, out in drive(engine, load_trace(trace)) for m in out]
    prefix = config.broker.prefix
    states = [m.payload for m in messages if m.topic == "state"]
    return Run(
        lines="".join(m.to_line(prefix) + "\n" for m in messages),
        said=[m.payload for m in messages if m.topic in ("events", "alerts")],
        state={k: v for k, v in states[-1].items() if k not in NOT_COMPARED},
        cards=private_cards(engine),
    )


def missing(said: list[dict[str, Any]], expected: list[dict[str, Any]]) -> str | None:
    """The first expect line not met, in order, or None when all are."""
    at = 0
    for want in expected:
        for i in range(at, len(said)):
            if all(said[i].get(k) == v for k, v in want.items()):
                at = i + 1
                break
        else:
            return f"no {want} after message {at}"
    return None


def expectations(trace: Path) -> list[dict[str, Any]]:
    expected = [json.loads(line) for line in header(trace, "expect")]
    assert expected, f"{trace.name} has no '# expect:' line"
    return expected


def test_every_scenario_was_built() -> None:
    assert len(TRACES) >= 43
    assert len(PROFILE_TRACES) >= 12


@pytest.mark.parametrize("trace", TRACES, ids=[p.stem for p in TRACES])
def test_dealing_scenario_events_and_rules(trace: Path) -> None:
    run = replay(trace)
    expected_out = trace.with_name(trace.stem + ".expected.jsonl")
    assert run.lines == expected_out.read_text(), f"{expected_out.name} is not this replay"
    said = run.said
    assert not [p for p in said if p["type"] in ("engine_fault", "input_error")]
    expected = expectations(trace)
    problem = missing(said, expected)
    if problem is not None:
        got = [(p["type"], p.get("rule")) for p in said]
        pytest.fail(f"{trace.name}: {problem}; got {got}")
    if not any(w.get("type") == "procedure_violation" for w in expected):
        violations = [p for p in said if p["type"] == "procedure_violation"]
        assert violations == [], f"{trace.name}: unexpected procedure violation"


@pytest.mark.parametrize("trace", CLEAN_TRACES, ids=[p.stem for p in CLEAN_TRACES])
def test_state_after_the_remedy_equals_a_clean_deal(trace: Path) -> None:
    remedied = replay(trace)
    clean = replay(SCENARIOS / header(trace, "clean")[0])
    assert remedied.state == clean.state
    assert remedied.state["procedures"] == []
    cards = [dict(run.cards, antennas=dict(run.cards["antennas"])) for run in (remedied, clean)]
    mucks = [set(c["antennas"].pop("muck", ())) for c in cards]
    differs = json.loads((header(trace, "clean-muck-differs") or ["[]"])[0])
    assert sorted(mucks[0] ^ mucks[1]) == differs
    assert cards[0] == cards[1]
    assert not [p for p in clean.said if p["type"] == "procedure_violation"]


@pytest.mark.parametrize("trace", PROFILE_TRACES, ids=[p.stem for p in PROFILE_TRACES])
def test_profile_scenario_fails_under_tda_2019(trace: Path) -> None:
    """A house difference must show: the same trace under TDA 2019 misses an expect line.

    The same hand must be played under TDA 2019 (so the trace does not fail for want of a
    hand), and, but for tda-2015 whose difference here is its numbering, the expect lines
    must fail even without their `profile_rule` citations: the house rule changes what
    happens, not only how it is cited.
    """
    (profile,) = header(trace, "profile")
    assert profile != "tda-2019"
    under_2019 = replay(trace, "tda-2019").said
    assert any(p["type"] == "hand_started" for p in under_2019)
    expected = expectations(trace)
    if profile != "tda-2015":
        expected = [{k: v for k, v in w.items() if k != "profile_rule"} for w in expected]
    assert missing(under_2019, expected) is not None, (
        f"{trace.name}: its expect lines hold under tda-2019 too; they show no {profile} rule"
    )
