"""A room on a test broker for the monitor's browser tests: the room server (in this
process), simulated tables (the real daemon on the simulated boards, in this process), and
Chromium pages on the monitor."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, Page

from controller.daemon import Daemon
from kernel.inputs import Badge, Event
from room.config import load_room_config
from room.server import RoomServer
from tests.broker import Mosquitto
from tests.room_helpers import TOKEN, write_room_config
from tests.tv_helpers import config as sim_config

ROOM = "rig"
DEALERS = {"t01": "04A1B2C3D4E5F6", "t02": "04B2C3D4E5F607"}  # Maria Rossi, Luca Bianchi


def card_in(card: str, text: str) -> bool:
    """Whether `card` ("Kd") stands on its own anywhere in `text` (markup, JSON, words)."""
    return re.search(rf"(?<![0-9A-Za-z]){card}(?![0-9A-Za-z])", text) is not None


class SimTables:
    """In-process table daemons on the simulated boards, each under poker/rig/<table>."""

    def __init__(self, tmp_path: Path, broker: Mosquitto) -> None:
        self.tmp_path = tmp_path
        self.broker = broker
        self.daemons: dict[str, Daemon] = {}

    def start(self, table: str) -> Daemon:
        base = sim_config(self.tmp_path / table)
        (self.tmp_path / table).mkdir(mode=0o700, parents=True, exist_ok=True)
        cfg = dataclasses.replace(base, table=dataclasses.replace(base.table, id=table, room=ROOM))
        daemon = Daemon(
            cfg,
            broker=self.broker.broker_config(
                None, prefix=f"poker/{ROOM}/{table}", client_id=f"tablectl-{table}"
            ),
        )
        daemon.start()
        assert daemon.devices.readers[0].wait_synced(10.0)
        self.daemons[table] = daemon
        return daemon

    def play(self, table: str, events: list[Event], speed: float = 8.0) -> None:
        """Deal `events` on the table's simulated hardware in (scaled) real time."""
        from sim.player import ScriptPlayer

        ScriptPlayer(self.daemons[table], speed=speed).play(events)

    def badge_dealer(self, table: str) -> None:
        self.play(table, [Badge(0.0, DEALERS[table])])

    def stop(self) -> None:
        for daemon in self.daemons.values():
            daemon.stop()


class Room:
    """The room server on the broker, with the test token."""

    def __init__(self, tmp_path: Path, broker: Mosquitto) -> None:
        path = write_room_config(
            tmp_path / "room.toml",
            broker,
            f"sqlite:///{tmp_path / 'room.db'}",
            room=ROOM,
            identity=None,
        )
        self.server = RoomServer(load_room_config(path))
        self.server.start()
        assert self.server.ingest.connected.wait(20), "the room server did not connect"
        self.url = self.server.url.rstrip("/")
        self.http = httpx.Client(base_url=self.url, timeout=20)
        self.auth = {"Authorization": f"Bearer {TOKEN}"}

    def command(self, table: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.http.post(f"/api/tables/{table}/commands/{name}", json=body, headers=self.auth)
        reply.raise_for_status()
        data: dict[str, Any] = reply.json()
        return data

    def completed(self, table: str) -> int:
        return sum(h["completed_t"] is not None for h in self.server.store.hands(table))

    def close(self) -> None:
        self.http.close()
        self.server.stop()


def open_page(browser: Browser, url: str, width: int = 1400, height: int = 900) -> Page:
    """A page on `url`, once its script ran."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    page.wait_for_function("document.body.dataset.rendered !== undefined")
    return page
