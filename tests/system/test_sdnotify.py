"""systemd notify protocol: a real AF_UNIX datagram socket stands in for systemd's."""

from __future__ import annotations

import itertools
import os
import socket
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller import sdnotify
from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.journal import read_trace_file
from kernel.inputs import Command
from tests.broker import Mosquitto

pytestmark = pytest.mark.timeout(90)

TABLE_TOML = """
[table]
id = "t01"
room = "sim"
seats = 6

[devices.badge_reader]
backend = "none"

[journal]
path = "t01.journal"
"""


class FakeSystemd:
    """The manager's end of the protocol: a bound datagram socket, every message timestamped."""

    def __init__(self, address: str) -> None:
        self.address = address
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(address.replace("@", "\0", 1) if address.startswith("@") else address)
        self.sock.settimeout(0.2)
        self.received: list[tuple[float, str]] = []
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                return
            with self._cond:
                self.received.append((time.monotonic(), data.decode()))
                self._cond.notify_all()

    def messages(self) -> list[str]:
        with self._cond:
            return [text for _, text in self.received]

    def pings(self) -> list[float]:
        with self._cond:
            return [at for at, text in self.received if text == "WATCHDOG=1"]

    def wait(self, predicate: Callable[[], bool], timeout: float = 20.0) -> bool:
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def systemd(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSystemd]:
    """An abstract-namespace notify socket, announced to the process as systemd does."""
    manager = FakeSystemd(f"@tablectl-test-{uuid.uuid4().hex}")
    monkeypatch.setenv("NOTIFY_SOCKET", manager.address)
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    yield manager
    manager.close()


def make_config(tmp_path: Path) -> Config:
    path = tmp_path / "t01.toml"
    path.write_text(TABLE_TOML)
    return load_config(path)


def test_notify_without_socket_is_a_no_op(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    assert sdnotify.notify("READY=1") is False
    monkeypatch.setenv("NOTIFY_SOCKET", "vsock:2:1234")  # not spoken: refused, not raised
    assert sdnotify.notify("READY=1") is False


def test_notify_to_a_path_socket_and_an_abstract_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = FakeSystemd(str(tmp_path / "notify"))
    abstract = FakeSystemd(f"@tablectl-test-{uuid.uuid4().hex}")
    try:
        monkeypatch.setenv("NOTIFY_SOCKET", path.address)
        assert sdnotify.notify("READY=1\nSTATUS=hello") is True
        monkeypatch.setenv("NOTIFY_SOCKET", abstract.address)
        assert sdnotify.notify("WATCHDOG=1") is True
        assert path.wait(lambda: path.messages() == ["READY=1\nSTATUS=hello"])
        assert abstract.wait(lambda: abstract.messages() == ["WATCHDOG=1"])
        monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "nobody-listens"))
        assert sdnotify.notify("READY=1") is False
    finally:
        path.close()
        abstract.close()


def test_watchdog_interval_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    assert sdnotify.watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_USEC", "15000000")
    assert sdnotify.watchdog_interval() == 15.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert sdnotify.watchdog_interval() == 15.0
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() + 1))  # inherited: not ours
    assert sdnotify.watchdog_interval() is None
    monkeypatch.delenv("WATCHDOG_PID")
    for bad in ("0", "-5", "soon", ""):
        monkeypatch.setenv("WATCHDOG_USEC", bad)
        assert sdnotify.watchdog_interval() is None


def test_daemon_says_ready_status_and_stopping(
    tmp_path: Path, mosquitto: Mosquitto, systemd: FakeSystemd
) -> None:
    daemon = Daemon(make_config(tmp_path), broker=mosquitto.broker_config())
    daemon.start()
    try:
        assert systemd.wait(lambda: any(m.startswith("READY=1") for m in systemd.messages()))
        ready = next(m for m in systemd.messages() if m.startswith("READY=1"))
        assert "STATUS=table t01: between hands, 0 dealt" in ready.splitlines()
        # READY comes once the devices are open: the reader threads exist already.
        assert len(daemon.devices.readers) == 2
        assert not systemd.pings()  # no WatchdogSec: no pings
    finally:
        daemon.stop()
    assert systemd.wait(lambda: "STOPPING=1" in systemd.messages())
    assert systemd.messages().count("STOPPING=1") == 1


def test_watchdog_pings_at_half_the_interval_from_the_engine_loop(
    tmp_path: Path, mosquitto: Mosquitto, systemd: FakeSystemd, monkeypatch: pytest.MonkeyPatch
) -> None:
    interval = 0.8  # WatchdogSec=800ms: a ping is due every 0.4 s
    monkeypatch.setenv("WATCHDOG_USEC", str(int(interval * 1e6)))
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    config = make_config(tmp_path)
    daemon = Daemon(config, broker=mosquitto.broker_config())
    daemon.start()
    try:
        assert systemd.wait(lambda: len(systemd.pings()) >= 8)
        pings = systemd.pings()
        gaps = [b - a for a, b in itertools.pairwise(pings)]
        # Not more often than every half interval (receive jitter aside) ...
        assert min(gaps) >= interval / 2 * 0.75, gaps
        # ... and typically well within the interval, so systemd would not kill it.
        assert statistics.median(gaps) < interval, gaps
        # Waking up to ping is not an input: nothing was journaled by it.
        assert config.journal.path is not None
        assert daemon.applied == 0
        journaled = read_trace_file(config.journal.path)  # its opening checkpoint only
        assert journaled.checkpoint is not None
        assert (journaled.events, journaled.outputs) == ([], {})

        # A wedged loop (here: stuck writing the journal, as on a hung disk) stops pinging.
        assert daemon.journal is not None
        lock = daemon.journal._lock  # type: ignore[union-attr]
        with lock:
            daemon.submit(Command(0.0, "seat", {"seat": 1, "player": "A", "stack": 100}))
            wedged_at = time.monotonic()
            time.sleep(3 * interval)  # the loop is blocked for this long
            released_at = time.monotonic()
        during = [p for p in systemd.pings() if wedged_at + interval / 2 < p < released_at]
        assert during == []
        # Unwedged, the input is applied and the pings resume.
        count = len(systemd.pings())
        assert systemd.wait(lambda: len(systemd.pings()) >= count + 2)
        assert daemon.applied == 1
    finally:
        daemon.stop()


def test_daemon_without_notify_socket_sends_nothing(
    tmp_path: Path, mosquitto: Mosquitto, systemd: FakeSystemd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOTIFY_SOCKET")
    monkeypatch.setenv("WATCHDOG_USEC", "200000")  # even with a watchdog configured
    daemon = Daemon(make_config(tmp_path), broker=mosquitto.broker_config())
    daemon.start()
    try:
        daemon.submit(Command(0.0, "seat", {"seat": 1, "player": "A", "stack": 100}))
        deadline = time.monotonic() + 10
        while daemon.applied < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert daemon.applied == 1
        # The socket is there but not announced: after a second of pings due, none came.
        time.sleep(1.0)
    finally:
        daemon.stop()
    assert systemd.messages() == []
