"""The room has pokerkit judge every hand it summarizes: a hand pokerkit replays to the
engine's result has no `phh_problem`; one it does not gets `pokerkit: <reason>`; without
pokerkit the room summarizes as before (controller/phh_verdict.py, docs/phh.md)."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from controller import phh_verdict
from controller.config import load_config
from controller.replay import build_engine, drive
from room.config import DatabaseConfig
from room.store import Batch, EventRow, MessageRow, Store, open_store
from room.summary import summarize
from sim.demo import demo_script
from sim.tables import DEFAULT_SIM_CONFIG

HANDS = 3


def _messages() -> list[tuple[str, dict[str, Any]]]:
    config = load_config(DEFAULT_SIM_CONFIG)
    engine = build_engine(config)
    script = demo_script(config, HANDS, 5)
    return [(m.topic, m.payload) for _e, ms in drive(engine, script) for m in ms]


def _store(tmp_path: Path, messages: list[tuple[str, dict[str, Any]]]) -> Store:
    store = open_store(DatabaseConfig(url=f"sqlite:///{tmp_path / 'room.db'}"), "r1")
    events, others = [], []
    for topic, payload in messages:
        text = json.dumps(payload, separators=(",", ":"))
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        if topic == "events":
            row = EventRow("t01", payload["seq"], payload.get("hand"), payload["type"],
                           float(payload["t"]), 1000.0, digest, text)  # fmt: skip
            events.append(row)
        elif topic == "state":
            others.append(MessageRow("t01", topic, digest, 1000.0, text, payload.get("seq")))
    store.write(Batch(events=events, messages=others))
    return store


def _tampered(messages: list[tuple[str, dict[str, Any]]], hand: int) -> list[Any]:
    """The messages with chips moved between two seats in the hand's `hand_completed`."""
    out = copy.deepcopy(messages)
    for topic, payload in out:
        if topic == "events" and payload["type"] == "hand_completed" and payload["hand"] == hand:
            stacks = payload["stacks"]
            a, b = sorted(stacks)[:2]
            stacks[a] += 100
            stacks[b] -= 100
    return out


def test_pokerkit_agrees_on_every_demo_hand_and_the_room_stores_no_problem(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path, _messages())
    rows = [summarize(store, "t01", hand) for hand in range(1, HANDS + 1)]
    assert [r["phh_problem"] if r else "missing" for r in rows] == [None] * HANDS
    store.close()


def test_a_hand_whose_final_stacks_were_tampered_with_gets_a_pokerkit_problem(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path, _tampered(_messages(), 2))
    rows = {hand: summarize(store, "t01", hand) for hand in range(1, HANDS + 1)}
    assert rows[1] is not None and rows[1]["phh_problem"] is None
    assert rows[3] is not None and rows[3]["phh_problem"] is None
    problem = rows[2]["phh_problem"] if rows[2] else None
    assert problem is not None and problem.startswith("pokerkit: "), problem
    assert "starting stacks" in problem  # the state the room had as the hand began
    store.close()


def test_without_pokerkit_the_room_summarizes_and_judges_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(phh_verdict, "_judge_module", lambda: None)
    store = _store(tmp_path, _tampered(_messages(), 2))
    row = summarize(store, "t01", 2)
    assert row is not None and row["phh_problem"] is None and row["pot"] > 0
    store.close()
