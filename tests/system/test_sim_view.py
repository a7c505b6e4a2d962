"""`tablectl sim` as a person runs it: the live view on a real terminal (a pty), the pages
up after the dealing until Ctrl-C, and a clean exit on every path (no mosquitto left, no
temporary folder left) — also when the script is bad or a port is taken."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import httpx
import pytest

from tests.broker import free_port
from tests.table_rig import ROOT, tablectl

pytestmark = pytest.mark.timeout(240)


def _read_until(fd: int, pattern: str, seen: list[str], timeout: float) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, "".join(seen))
        if found:
            return found
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                seen.append(os.read(fd, 65536).decode(errors="replace"))
            except OSError:
                break
    raise AssertionError(f"{pattern!r} not shown:\n{''.join(seen)[-3000:]}")


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_the_live_view_on_a_terminal_pages_up_until_ctrl_c_then_all_gone(
    tmp_path: Path,
) -> None:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))  # 200 columns
    env = {**os.environ, "TMPDIR": str(tmp_path), "TERM": "xterm-256color"}
    args = ["sim", "--room", "--hands", "3", "--speed", "max", "--seed", "2", "--no-tv"]
    proc = subprocess.Popen(
        [*tablectl(), *args], stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env
    )
    os.close(slave)
    seen: list[str] = []
    try:
        _read_until(master, r"pages stay up until Ctrl-C", seen, 200)
        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", "".join(seen))
        hands = re.findall(r"t01 hand +(\d+) +(\S.*?) wins ([\d,]+)", text)
        assert [h[0] for h in hands] == ["1", "2", "3"], text[-3000:]
        assert "3/3" in text  # the progress bar, hands of hands
        assert '"type"' not in text  # no raw JSON on the terminal
        broker = int(re.search(r"mqtt://127\.0\.0\.1:(\d+)", text).group(1))  # type: ignore[union-attr]
        monitor = re.search(r"room monitor +(http://127\.0\.0\.1:\d+/)", text)
        assert monitor is not None, repr(text[:1500])
        workdir = re.search(r"journal +(\S+)/table-1/sim\.journal", text)
        assert workdir is not None and Path(workdir.group(1)).is_dir()
        time.sleep(2)  # the dealing is over: the pages stay up
        page = httpx.get(monitor.group(1), timeout=10)
        assert page.status_code == 200 and 'data-table="t01"' in page.text
        assert httpx.get(monitor.group(1) + "docs", timeout=10).status_code == 200
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        assert proc.wait(timeout=60) == 0
        _read_until(master, r"temporary folder", seen, 10)
        summary = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", "".join(seen))
        assert "hands dealt" in summary and re.search(r"t01\s*│\s*3\s*│", summary), summary
        assert not _listening(broker), "mosquitto stopped with the sim"
        assert not Path(workdir.group(1)).exists(), "the temporary folder is removed"
        assert list(tmp_path.iterdir()) == []  # nothing left behind at all
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


def test_a_bad_script_stops_before_anything_is_started(tmp_path: Path) -> None:
    script = tmp_path / "bad.jsonl"
    script.write_text('{"t": 0.0, "event": "nonsense"}\n')
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    for path in (script, tmp_path / "missing.jsonl"):
        done = subprocess.run(
            [*tablectl(), "sim", "--script", str(path), "--exit-when-done"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            env=env,
        )
        assert done.returncode == 2, done.stderr
        assert str(path.name) in done.stderr
        assert list(temp.iterdir()) == []  # no broker folder, no journal folder


def test_a_taken_tv_port_is_refused_and_everything_started_is_stopped(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", port))
        taken.listen()
        done = subprocess.run(
            [*tablectl(), "sim", "--hands", "1", "--tv-port", str(port), "--exit-when-done"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
            env={**os.environ, "TMPDIR": str(temp)},
        )
    assert done.returncode == 2
    assert f"--tv-port {port}: the port is taken" in done.stderr
    assert list(temp.iterdir()) == []  # the broker it had started is gone, with its folder


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sim", "--hands", "-1"], "--hands: must be 0 or more, not -1"),
        (["sim", "--tables", "501"], "--tables: must be 1 to 500, not 501"),
        (["sim", "--tv-port", "70000"], "--tv-port: must be 1 to 65535"),
        (["sim", "--tv-delay", "-2"], "--tv-delay: must be 0 or more seconds"),
        (["sim", "--exit-when-done", "--hands", "0"], "--exit-when-done: give --hands N"),
    ],
)
def test_arguments_are_checked(args: list[str], message: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tablectl.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2 and message in done.stderr, done.stderr
