"""A TV service under test: real uvicorn on a free port, an injected clock, feed readers."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from broadcast.clock import ManualClock
from broadcast.desk import TableSpec
from broadcast.service import TvService
from controller.config import BrokerConfig
from kernel.inputs import Event
from tests.broker import Mosquitto, free_port
from tests.tv_helpers import config

PREFIX = "poker/sim/t01"

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


def wait_until(
    condition: Callable[[], bool], timeout: float = 10.0, interval: float = 0.01
) -> bool:
    """Poll `condition` until it holds (True) or `timeout` passes (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


class FrameReader:
    """A WebSocket client of /feed or /preview/ws keeping every frame it received."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.texts: list[str] = []
        self._lock = threading.Lock()
        self._ws: ClientConnection | None = None
        self._open = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._open.wait(10):
            raise RuntimeError(f"could not open {url}")

    def _run(self) -> None:
        with connect(self.url, open_timeout=10) as ws:
            self._ws = ws
            self._open.set()
            try:
                for message in ws:
                    with self._lock:
                        self.texts.append(str(message))
            except ConnectionClosed:
                pass

    @property
    def frames(self) -> list[dict[str, Any]]:
        with self._lock:
            return [json.loads(t) for t in self.texts]

    @property
    def last(self) -> dict[str, Any] | None:
        frames = self.frames
        return frames[-1] if frames else None

    @property
    def latest(self) -> str | None:
        with self._lock:
            return self.texts[-1] if self.texts else None

    def text(self) -> str:
        with self._lock:
            return "\n".join(self.texts)

    def close(self) -> None:
        if self._ws is not None:
            self._ws.close()
        self._thread.join(5)


class TvRig:
    """The TV service on a free port with a ManualClock (no broker unless given one)."""

    def __init__(
        self,
        *,
        delay: float,
        broker: BrokerConfig | None = None,
        prefix: str = PREFIX,
        table: str = "t01",
        control_token: str | None = None,
    ) -> None:
        self.clock = ManualClock()
        self.prefix = prefix
        self.table = table
        self.service = TvService(
            broker=broker,
            tables=[TableSpec(table, prefix, "Feature table")],
            delay=delay,
            port=free_port(),
            clock=self.clock,
            control_token=control_token,
        )
        self.service.start()
        self.base = self.service.base_url
        self.http = httpx.Client(base_url=self.base, timeout=10)
        self.readers: list[FrameReader] = []

    @property
    def desk(self) -> Any:
        return self.service.desk.tables[self.table]

    def reader(self, path: str) -> FrameReader:
        reader = FrameReader(self.base.replace("http://", "ws://") + path)
        self.readers.append(reader)
        return reader

    def feed(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """Give the messages to the service as the MQTT client does, and wait until taken."""
        before = self.desk.received
        for kind, payload in messages:
            self.service.desk.receive_threadsafe(
                f"{self.prefix}/{kind}", json.dumps(payload).encode()
            )
        assert wait_until(lambda: self.desk.received >= before + len(messages))

    def settle(self) -> None:
        """Wait until whatever is due on the clock now has been released and every
        reader has received the latest frame of its channel."""
        line = self.desk.line
        assert wait_until(lambda: (d := line.next_release()) is None or d > self.clock.now())
        for reader in self.readers:
            channel = self.desk.overlay if "/feed/" in reader.url else self.desk.preview
            assert wait_until(lambda r=reader, c=channel: r.latest == c.text), reader.url

    def status(self) -> dict[str, Any]:
        response = self.http.get("/api/status")
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data

    def close(self) -> None:
        for reader in self.readers:
            reader.close()
        self.http.close()
        self.service.stop()


class SimTable:
    """The real daemon on the simulated boards (the shipped sim table), on a test broker."""

    def __init__(
        self,
        tmp_path: Path,
        broker: Mosquitto,
        username: str | None,
        *,
        seal_delay: float | None = None,
    ) -> None:
        import dataclasses

        from controller.daemon import Daemon

        self.broker = broker
        cfg = config(tmp_path)
        if seal_delay is not None:
            cfg = dataclasses.replace(cfg, seal=dataclasses.replace(cfg.seal, delay=seal_delay))
        self.daemon = Daemon(
            cfg,
            broker=broker.broker_config(username, prefix=PREFIX, client_id="tablectl-t01"),
        )
        self.daemon.start()
        assert self.daemon.devices.readers[0].wait_synced(10.0)

    def play(self, events: list[Event], speed: float = 4.0) -> None:
        """Deal the trace on the simulated hardware, in (scaled) real time."""
        from sim.player import ScriptPlayer

        ScriptPlayer(self.daemon, speed=speed).play(events)

    def stop(self) -> None:
        self.daemon.stop()
