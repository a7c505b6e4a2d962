"""`tablectl sim --speed N`: simulated time, so a seed plays the same game at any speed."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from sim.tables import MAX_TABLES
from tests.table_rig import ROOT, tablectl

#: Scripts and tests: the raw messages, exit once the hands are dealt, keep the journals
#: (in the test's own temporary folder: TMPDIR).
SCRIPTED = ["--json", "--exit-when-done", "--keep-files"]

SPEEDS = ("1", "10", "100", "max")
AUTO_ID = re.compile(r"auto-[0-9a-f]{8}-")  # a room command's id names its run at random


def _sim(speed: str, tmp: Path) -> tuple[list[str], list[str], float]:
    """One demo hand (seed 5) at `speed`, through the sim's own mosquitto: the messages the
    watcher received from the broker (status left out: it carries the wall clock), the
    journal's lines after its header, and the run's wall time."""
    start = time.monotonic()
    done = subprocess.run(
        [*tablectl(), "sim", "--no-tv", "--hands", "1", "--seed", "5", "--speed", speed, *SCRIPTED],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    took = time.monotonic() - start
    assert done.returncode == 0, done.stderr[-3000:]
    found = re.search(r"^journal: (\S+)$", done.stdout, re.M)
    assert found is not None, done.stdout[-2000:]
    journal = Path(found.group(1)).read_text().splitlines()
    assert journal[0].startswith("# tablectl-journal v1 epoch=")
    received = [
        AUTO_ID.sub("auto-", line)
        for line in done.stdout.splitlines()
        if re.match(r"(events|alerts|holecards|replies) ", line)
    ]
    return received, [AUTO_ID.sub("auto-", line) for line in journal[1:]], took


_RANDOM = re.compile(r'"(sealed|key|sig|h|head|chain)":"[^"]*"')
_WALL = re.compile(r'"(started_at)":[0-9.]+')


def _fixed(lines: list[str]) -> list[str]:
    """Lines with their random members (seals, keys, signatures, journal and events chains)
    and the wall-clock moment a hand started (each run starts at its own) blanked."""
    return [_WALL.sub(r'"\1":0', _RANDOM.sub(r'"\1":"~"', line)) for line in lines]


@pytest.mark.timeout(200)
def test_sim_same_seed_same_game_at_speed_1_10_100_and_max(tmp_path: Path) -> None:
    runs = {speed: _sim(speed, tmp_path) for speed in SPEEDS}
    received, journal, _took = runs["1"]
    assert sum('"hand_completed"' in line for line in received) == 1
    assert any(line.startswith("holecards ") for line in received)
    assert not any(line.startswith("alerts ") for line in received), "a clean hand: no alert"
    assert any('"event":"tick"' in line for line in journal), "the settle timers fired"
    for speed in SPEEDS[1:]:
        other_received, other_journal, _ = runs[speed]
        # Every message, its `t` included: game time is simulated, whatever the pace (the
        # hole cards' keys and seals, the run's signing key and the journal's chain over
        # them are random: set aside; the events chain itself is the same).
        assert _fixed(other_received) == _fixed(received), f"--speed {speed}: another game"
        assert _fixed(other_journal) == _fixed(journal), f"--speed {speed}: another journal"
    # The pace is real: speed 1 takes the hand's length, max does not wait for it.
    last = next(line for line in reversed(journal) if '"t":' in line)  # not the stop's `sig`
    hand_seconds = float(re.findall(r'"t":([0-9.]+)', last)[0])
    assert runs["1"][2] >= hand_seconds
    assert runs["max"][2] < runs["1"][2] / 2


@pytest.mark.timeout(200)
def test_sim_tables_run_many_tables_on_one_broker_with_the_room_server(tmp_path: Path) -> None:
    options = ["--tables", "3", "--hands", "1", "--seed", "4", "--speed", "max"]
    done = subprocess.run(
        [*tablectl(), "sim", "--room", "--no-tv", "--quiet", *SCRIPTED, *options],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found_journals = re.findall(r"^journal: (\S+) \(table (\S+)\)$", done.stdout, re.M)
    journals = {table: Path(path) for path, table in found_journals}
    assert sorted(journals) == ["t01", "t02", "t03"]
    assert len(set(journals.values())) == 3, "a journal each"
    hands: dict[str, str] = {}
    for table, path in journals.items():
        lines = path.read_text().splitlines()
        assert f"table={table}" in lines[0]
        assert all(f'"table":"{t}"' not in "".join(lines) for t in journals if t != table)
        hands[table] = "".join(line for line in lines if '"hand_started"' in line)
    assert len(set(hands.values())) == 3, "a seed each: three different deals"
    seqs = [int(s) for s in re.findall(r"last seq (\d+) \(table t0[123]\)", done.stdout)]
    assert len(seqs) == 3 and min(seqs) > 0
    found = re.search(r"room: (\d+) events stored, (\d+) hands completed", done.stdout)
    assert found is not None, done.stdout[-2000:]
    assert (int(found.group(1)), int(found.group(2))) == (sum(seqs), 3)
    assert f"room: {sum(seqs)} of the {sum(seqs)} events the tables published stored" in done.stdout


def test_sim_tables_refuses_a_count_it_cannot_run() -> None:
    done = subprocess.run(
        [*tablectl(), "sim", "--tables", "0", "--quiet", "--no-tv"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode != 0
    assert f"--tables: must be 1 to {MAX_TABLES}, not 0" in done.stderr
