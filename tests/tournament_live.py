"""A tournament the real way: the room server (in this process) with [tournament], on a test
mosquitto, and simulated tables (the daemon on the simulated boards, in this process) each
with its live dealer. The room drives the tables only through the broker."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import httpx

from controller.config import load_config
from controller.daemon import Daemon
from kernel.clock import ManualClock
from room.config import load_room_config
from room.server import RoomServer
from sim.live_dealer import LiveDealer
from sim.player import ScriptPlayer
from sim.tables import table_config
from tests.broker import Mosquitto
from tests.room_helpers import TOKEN, write_room_config

ROOT = Path(__file__).resolve().parent.parent
SIM_TABLE = ROOT / "examples" / "sim-table.toml"
EXAMPLES = ROOT / "examples" / "tournaments"


class LiveRoom:
    """The room server with a tournament, and `tables` simulated tables dealing."""

    def __init__(
        self,
        tmp_path: Path,
        broker: Mosquitto,
        event: Path,
        *,
        tables: int,
        time_scale: float = 60.0,
        speed: float | None = None,
        seed: int = 1,
        profile: str | None = None,
    ) -> None:
        self.tmp_path = tmp_path
        self.broker = broker
        self.event = event
        self.time_scale = time_scale
        self.seed = seed
        base = load_config(SIM_TABLE, profile_override=profile)
        self.room_name = base.table.room
        self.config_path = write_room_config(
            tmp_path / "room.toml",
            broker,
            f"sqlite:///{tmp_path / 'room.db'}",
            room=self.room_name,
            identity=None,
            extra=(
                f'\n[tournament]\nfile = "{event}"\njournal = "{tmp_path / "event.jsonl"}"\n'
                f"seed = {seed}\ntime_scale = {time_scale}\n"
            ),
        )
        self.server: RoomServer | None = None
        self.daemons: list[Daemon] = []
        self.dealers: list[LiveDealer] = []
        for index in range(tables):
            cfg = table_config(base, index, tmp_path / f"table{index}" / "t.journal")
            cfg = dataclasses.replace(
                cfg,
                broker=dataclasses.replace(
                    cfg.broker, host=broker.host, port=broker.port, client_id=f"tbl-{index}"
                ),
            )
            (tmp_path / f"table{index}").mkdir(mode=0o700, parents=True, exist_ok=True)
            clock = ManualClock(0.0, wall_start=float(int(time.time())))
            daemon = Daemon(cfg, clock=clock)
            self.daemons.append(daemon)
            player = ScriptPlayer(daemon, speed=speed, clock=clock)
            self.dealers.append(LiveDealer(daemon, player, seed * 1000 + index))
        self.http: httpx.Client | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url.rstrip("/")

    def start_room(self) -> RoomServer:
        self.server = RoomServer(load_room_config(self.config_path))
        self.server.start()
        assert self.server.ingest.connected.wait(20), "the room server did not connect"
        self.http = httpx.Client(base_url=self.url, timeout=20)
        return self.server

    def stop_room(self) -> None:
        if self.http is not None:
            self.http.close()
            self.http = None
        if self.server is not None:
            self.server.stop()
            self.server = None

    def start(self) -> LiveRoom:
        self.start_room()
        for daemon in self.daemons:
            daemon.start()
            assert daemon.devices.readers[0].wait_synced(10.0)
        for dealer in self.dealers:
            dealer.start()
        return self

    def stop(self) -> None:
        for dealer in self.dealers:
            dealer.stop.set()
        for dealer in self.dealers:
            dealer.join(10)
        for daemon in self.daemons:
            daemon.stop()
        self.stop_room()

    def get(self, path: str) -> Any:
        assert self.http is not None
        reply = self.http.get(path)
        reply.raise_for_status()
        return reply.json()

    def post(self, path: str, body: dict[str, Any], token: str | None = TOKEN) -> httpx.Response:
        assert self.http is not None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.http.post(path, json=body, headers=headers)

    def act(self, path: str, body: dict[str, Any] | None = None) -> Any:
        reply = self.post(path, {"by": "Test Floor", **(body or {})})
        assert reply.status_code == 200, reply.text
        return reply.json()

    def confirm_all(self) -> int:
        """The floor confirms every open proposal (what the floor page's buttons do)."""
        done = 0
        for p in self.get("/api/tournament/proposals"):
            if p["status"] == "open":
                reply = self.post(f"/api/tournament/proposals/{p['id']}/confirm", {"by": "Floor"})
                done += reply.status_code == 200
        return done

    def wait(self, what: Any, timeout: float, *, confirm: bool = True) -> Any:
        """Wait until `what()` is true (the floor confirming meanwhile); its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = what()
            if value:
                return value
            if confirm:
                self.confirm_all()
            time.sleep(0.3)
        raise AssertionError(f"not within {timeout} s: {getattr(what, '__name__', what)}")
