"""The main job shows the TV pages: `tablectl sim` starts the TV service and prints its URLs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest
from websockets.sync.client import connect

from tests.broker import free_port

pytestmark = pytest.mark.timeout(150)
ROOT = Path(__file__).resolve().parents[2]


def test_sim_serves_the_overlay_and_preview_of_the_simulated_table() -> None:
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tablectl.cli",
            "sim",
            "--hands",
            "2",
            "--speed",
            "4",
            "--seed",
            "5",
            "--tv-port",
            str(port),
            "--tv-delay",
            "1",
            "--quiet",
            "--json",
            "--exit-when-done",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    urls: dict[str, str] = {}
    for line in proc.stdout:
        lines.append(line)
        found = re.match(r"tv: (on-air overlay|director's live preview).*: (http://\S+)", line)
        if found:
            urls[found.group(1)] = found.group(2)
        if len(urls) == 2:
            break
    assert urls, "".join(lines)
    overlay = urls["on-air overlay"]
    assert overlay == f"http://127.0.0.1:{port}/overlay/t01"
    assert urls["director's live preview"] == f"http://127.0.0.1:{port}/preview/t01"
    assert 'data-ws="/feed/t01"' in httpx.get(overlay, timeout=10).text
    frames: list[dict[str, object]] = []

    def read() -> None:
        try:
            with connect(f"ws://127.0.0.1:{port}/feed/t01", open_timeout=10) as ws:
                for message in ws:
                    frames.append(json.loads(message))
        except Exception:  # the service stops with the sim
            pass

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    rest, _ = proc.communicate(timeout=120)
    reader.join(10)
    assert proc.returncode == 0, "".join(lines) + rest
    assert "sim: played" in rest
    # the delayed feed showed the simulated hands, hole cards face up
    assert any(f["hand"] == 2 for f in frames)
    assert any(s["cards"] for f in frames for s in f["seats"])  # type: ignore[attr-defined]


def test_sim_without_tv() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tablectl.cli",
            "sim",
            "--hands",
            "1",
            "--speed",
            "5",
            "--no-tv",
            "--quiet",
            "--json",
            "--exit-when-done",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "tv:" not in done.stdout and "sim: played" in done.stdout
