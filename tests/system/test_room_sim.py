"""`tablectl sim --room`: the simulated table with the room server beside it."""

from __future__ import annotations

import re
import subprocess

import httpx
import pytest

from tests.table_rig import ROOT, tablectl

#: Scripts and tests: the raw messages, and exit once the hands are dealt.
SCRIPTED = ["--json", "--exit-when-done"]


@pytest.mark.timeout(240)
def test_sim_starts_the_room_server_and_prints_its_url() -> None:
    proc = subprocess.Popen(
        [*tablectl(), "sim", "--room", "--hands", "2", "--speed", "10", "--quiet", *SCRIPTED],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    head = ""
    while "room monitor:" not in head and (line := proc.stdout.readline()):
        head += line
    monitor = re.search(r"room monitor: (http://127\.0\.0\.1:\d+/)", head)
    assert monitor is not None, head
    page = httpx.get(monitor.group(1), timeout=10)  # served while the table deals
    assert page.status_code == 200 and "Room" in page.text and "/static/monitor.js" in page.text
    out, err = proc.communicate(timeout=200)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, head + out, err)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"room server: http://127\.0\.0\.1:\d+/ \(API docs", done.stdout)
    last_seq = int(re.search(r"last seq (\d+)", done.stdout).group(1))  # type: ignore[union-attr]
    found = re.search(r"room: (\d+) events stored, (\d+) hands completed", done.stdout)
    assert found is not None, done.stdout
    assert int(found.group(1)) == last_seq and int(found.group(2)) == 2
    assert "sim.sh" not in done.stdout
    script = (ROOT / "scripts" / "sim.sh").read_text()
    assert "tablectl sim --room" in script  # on by default for the one-command simulation
