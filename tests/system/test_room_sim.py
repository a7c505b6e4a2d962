"""`tablectl sim --room`: the simulated table with the room server beside it."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.table_rig import ROOT, tablectl


@pytest.mark.timeout(240)
def test_sim_starts_the_room_server_and_prints_its_url() -> None:
    done = subprocess.run(
        [*tablectl(), "sim", "--room", "--hands", "2", "--speed", "10", "--quiet"],
        capture_output=True,
        text=True,
        timeout=200,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"room server: http://127\.0\.0\.1:\d+/ \(API docs", done.stdout)
    last_seq = int(re.search(r"last seq (\d+)", done.stdout).group(1))  # type: ignore[union-attr]
    found = re.search(r"room: (\d+) events stored, (\d+) hands completed", done.stdout)
    assert found is not None, done.stdout
    assert int(found.group(1)) == last_seq and int(found.group(2)) == 2
    assert "sim.sh" not in done.stdout
    script = (ROOT / "scripts" / "sim.sh").read_text()
    assert "tablectl sim --room" in script  # on by default for the one-command simulation
