"""`tablectl sim` killed outright (SIGKILL: no clean-up runs) leaves no worker process and no
mosquitto of its own behind: each child ends with its parent."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]


def children_of(pid: int) -> set[int]:
    """Every process whose parent is `pid` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_killed_sim_takes_its_workers_and_its_broker_with_it(tmp_path: Path) -> None:
    sim = subprocess.Popen(
        [sys.executable, "-m", "tablectl.cli", "sim", "--tables", "2", "--hands", "0",
         "--no-tv", "--json"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        kids: set[int] = set()
        while time.monotonic() < deadline:
            kids = children_of(sim.pid)
            cmdlines = [Path(f"/proc/{k}/cmdline").read_bytes() for k in kids if alive(k)]
            if any(b"sim.tables" in c for c in cmdlines) and any(
                b"mosquitto" in c for c in cmdlines
            ):
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"the sim did not start its broker and its worker: {kids}")
        sim.send_signal(signal.SIGKILL)
        sim.wait(10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(alive(k) for k in kids):
            time.sleep(0.3)
        left = [k for k in kids if alive(k)]
        assert not left, f"still running after the sim was killed: {left}"
    finally:
        if sim.poll() is None:
            sim.kill()
