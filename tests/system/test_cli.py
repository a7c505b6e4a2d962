"""The `tablectl` commands as a user runs them: sim (the main job), register-deck, run refusals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.registry import load_deck

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "examples" / "sim-table.toml"


def tablectl(*args: str, timeout: float = 100) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tablectl.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=ROOT,
    )


def test_sim_runs_a_whole_table_on_a_local_broker() -> None:
    result = tablectl(
        "sim", "--hands", "2", "--speed", "5", "--seed", "3", "--json", "--exit-when-done"
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "local mosquitto on 127.0.0.1:" in out
    # What the watcher printed: the room's view and the TV's view, as they were published.
    lines = [line.split(None, 1) for line in out.splitlines() if line[:1].isalpha()]
    topics = [parts[0] for parts in lines if len(parts) == 2]
    assert topics.count("status") >= 1
    assert sum('"hand_started"' in line for line in out.splitlines()) == 2
    assert sum('"hand_completed"' in line for line in out.splitlines()) == 2
    assert "holecards" in topics
    assert "alerts" not in topics, "a clean simulated table raises no alert"
    assert "sim: played" in out


def test_register_deck_with_the_simulated_reader(tmp_path: Path) -> None:
    out = tmp_path / "deck-B.toml"
    result = tablectl(
        "register-deck",
        "--config",
        str(CONFIG),
        "--out",
        str(out),
        "--deck-id",
        "B",
        "--simulate",
        "--timeout",
        "60",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    deck = load_deck(out)
    assert len(deck) == 52 and deck.id == "B"
    assert "duplicate tag" in result.stdout  # the 53rd read was a repeated tag: refused


def test_run_refuses_a_config_without_broker_host() -> None:
    result = tablectl("run", "--config", str(CONFIG))
    assert result.returncode == 2
    assert "[broker] host" in result.stderr


def test_unknown_config_key_stops_with_file_and_key(tmp_path: Path) -> None:
    bad = tmp_path / "t.toml"
    bad.write_text(CONFIG.read_text().replace("seats = 9", "seats = 9\nsets = 3"))
    result = tablectl(
        "replay", str(ROOT / "tests" / "scenarios" / "bad_tags.jsonl"), "--config", str(bad)
    )
    assert result.returncode == 2
    assert "unknown key 'sets' in [table]" in result.stderr
