"""`tablectl sim --tables N --tournament FILE`: a whole tournament on simulated tables.

A local mosquitto, the room server with the tournament (its clock `--speed` times real
time), N simulated tables (firmware simulators and the daemon, each with its own dealer who
deals hand after hand: sim/live_dealer.py), a floor that confirms what the room
proposes over the HTTP API with the floor token (or you, on the floor page, with
`--floor manual`), and the TV service with the chip-count lower-third. The room drives the
tables only with room commands over the broker (seat, unseat, level, button, hold, release),
as in a real room; the tables tell the room every stack after every hand.
"""

from __future__ import annotations

import dataclasses
import json
import math
import secrets
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.config import BrokerConfig, Config
from kernel.errors import TableError
from room.config import (
    DatabaseConfig,
    GapsConfig,
    HttpConfig,
    RoomBroker,
    RoomConfig,
    StatsConfig,
    TournamentSettings,
)
from room.tournament.structure import load_structure

#: The tournament clock's pace at `--speed max` (tables deal as fast as they can).
MAX_SPEED_CLOCK = 60.0
#: Seconds (real) the simulated floor waits before confirming a proposal.
FLOOR_DELAY = 1.0


class Floor:
    """The simulated floor: confirms every open proposal after a moment, over the API."""

    def __init__(self, url: str, token: str, delay: float, stop: threading.Event) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.delay = delay
        self.stop = stop
        self.seen: dict[int, float] = {}
        self.confirmed = 0
        self.thread = threading.Thread(target=self._run, name="sim-floor", daemon=True)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null")

    def _run(self) -> None:
        while not self.stop.wait(0.25):
            try:
                proposals = self.call("GET", "/api/tournament/proposals")
            except (urllib.error.URLError, OSError, ValueError):
                continue
            now = time.monotonic()
            for p in proposals:
                if p["status"] != "open":
                    continue
                first = self.seen.setdefault(p["id"], now)
                if now - first < self.delay:
                    continue
                try:
                    self.call(
                        "POST", f"/api/tournament/proposals/{p['id']}/confirm", {"by": "Sim Floor"}
                    )
                    self.confirmed += 1
                except (urllib.error.URLError, OSError):
                    pass  # taken back meanwhile, or not yet: seen again next round


class SimTournament:
    """Everything of one tournament sim; `run()` blocks until a winner or a stop."""

    def __init__(self, config: Config, args: Any) -> None:
        self.config = config
        self.args = args
        self.file = Path(args.tournament)
        self.structure = load_structure(self.file)
        self.stop = threading.Event()
        self.workdir = Path(tempfile.mkdtemp(prefix="tablectl-sim-tournament-"))
        self.token = secrets.token_urlsafe(18)
        speed = args.speed if args.speed is not None else config.sim.speed
        self.speed: float | None = None if speed is None or math.isinf(speed) else float(speed)
        self.clock_scale = self.speed or MAX_SPEED_CLOCK
        self.tables: list[Any] = []
        self.dealers: list[Any] = []
        self.room: Any = None
        self.broker: Any = None
        self.tv: Any = None
        self.floor: Floor | None = None

    def _room_config(self, broker: BrokerConfig) -> RoomConfig:
        token_file = self.workdir / "floor-token"
        token_file.write_text(self.token + "\n", encoding="utf-8")
        token_file.chmod(0o600)
        return RoomConfig(
            path=self.workdir / "room.toml",
            name=self.config.table.room,
            broker=RoomBroker(
                host=str(broker.host),
                port=broker.port,
                client_id=f"tablectl-sim-room-{self.config.table.room}",
            ),
            database=DatabaseConfig(url=f"sqlite:///{self.workdir / 'room.db'}"),
            http=HttpConfig(
                host="127.0.0.1",
                port=self.args.room_port or 0,
                token=self.token,
                token_file=token_file,
            ),
            gaps=GapsConfig(),
            stats=StatsConfig(),
            tournament=TournamentSettings(
                file=self.file.resolve(),
                journal=self.workdir / "tournament.journal.jsonl",
                seed=self.args.seed,
                time_scale=self.clock_scale,
            ),
        )

    def _tables(self, broker: BrokerConfig) -> None:
        from controller.daemon import Daemon
        from kernel.clock import ManualClock
        from sim.live_dealer import LiveDealer
        from sim.player import ScriptPlayer
        from sim.tables import table_config, table_id

        count = max(self.args.tables, len(self.structure.tables))
        ids = [table_id(self.config.table.id, i) for i in range(count)]
        missing = [t for t in self.structure.tables if t not in ids]
        if missing:
            raise TableError(
                f"{self.file}: tables {missing} are not simulated tables ({', '.join(ids)}): "
                f"name them so in [tournament] tables, or give --tables"
            )
        wanted = max(self.structure.seats_per_table, self.structure.final_table_size)
        if self.config.table.seats < wanted:
            raise TableError(
                f"the simulated tables have {self.config.table.seats} seats; the event wants "
                f"{wanted} (its tables, or its final table): give a --config with seats = {wanted}"
            )
        for index in range(count):
            journal = Path(tempfile.mkdtemp(prefix="tablectl-sim-", dir=self.workdir)) / "t.journal"
            cfg = table_config(self.config, index, journal)
            table_broker = dataclasses.replace(cfg.broker, host=broker.host, port=broker.port)
            clock = ManualClock(0.0, wall_start=float(int(time.time())))
            daemon = Daemon(cfg, broker=table_broker, clock=clock)
            player = ScriptPlayer(daemon, speed=self.speed, clock=clock)
            self.tables.append(daemon)
            self.dealers.append(
                LiveDealer(daemon, player, self.args.seed * 1000 + index, stop=self.stop)
            )

    def run(self) -> int:
        from controller.localbroker import LocalBroker
        from room.server import RoomServer

        broker = self.config.broker
        if broker.host is None:
            self.broker = LocalBroker(self.args.broker_port)
            self.broker.start()
            broker = dataclasses.replace(broker, host="127.0.0.1", port=self.broker.port)
        else:
            raise TableError(
                "the tournament sim runs on its own local broker: leave [broker] host out"
            )
        try:
            self._tables(broker)
            self.room = RoomServer(self._room_config(broker))
            self.room.start()
            url = self.room.url.rstrip("/")
            self._say(
                f"tournament {self.structure.name} ({self.structure.house.document}): "
                f"{len(self.structure.players)} players registered, {len(self.tables)} tables, "
                f"the clock at {self.clock_scale:g}x"
            )
            self._say(f"  clock:        {url}/tournament/clock")
            self._say(f"  chip counts:  {url}/tournament/leaderboard")
            self._say(f"  JSON feed:    {url}/api/tournament/leaderboard")
            self._say(f"  floor:        {url}/tournament/floor  (floor token: {self.token})")
            self._say(f"  room monitor: {url}/")
            self._start_tv(broker, url)
            for daemon in self.tables:
                daemon.start()
            time.sleep(0.5)  # the reader boards say HELLO first
            for dealer in self.dealers:
                dealer.start()
            self.floor = Floor(url, self.token, self.args.floor_delay, self.stop)
            self.floor.call("POST", "/api/tournament/start", {"by": "Sim Floor"})
            if self.args.floor != "manual":
                self.floor.thread.start()
            return self._follow()
        finally:
            self.stop.set()
            for dealer in self.dealers:
                dealer.join(5)
            if self.tv is not None:
                self.tv.service.stop()
            for daemon in self.tables:
                daemon.stop()
            if self.room is not None:
                self.room.stop()
            if self.broker is not None:
                self.broker.stop()

    def _start_tv(self, broker: BrokerConfig, room_url: str) -> None:
        """The TV service on the final table's host, with the chip-count lower-third."""
        if self.args.no_tv:
            return
        from broadcast.sim import start_sim_tv

        final = self.structure.final_table
        parent, _, _last = broker.prefix.rpartition("/")
        prefix = f"{parent}/{final}" if parent else broker.prefix
        self.tv = start_sim_tv(
            broker, prefix, final, delay=self.args.tv_delay, port=self.args.tv_port
        )
        if self.tv is not None:
            base = self.tv.service.base_url
            self._say(f"  lower-third:  {base}/lower-third?room={room_url}")

    def _say(self, line: str) -> None:
        print(line, flush=True)

    def _follow(self) -> int:
        """Print what the tournament does, until it has a winner (or Ctrl-C)."""
        assert self.floor is not None
        shown = 0.0
        from controller.supervision import stop_on_signals

        stop_on_signals(self.stop)
        while not self.stop.wait(0.5):
            try:
                summary = self.floor.call("GET", "/api/tournament")
                entries = self.floor.call("GET", "/api/tournament/log")
            except (urllib.error.URLError, OSError, ValueError):
                continue
            for entry in reversed(entries):
                if entry["t"] > shown and entry["kind"] not in ("proposed",):
                    rule = f" [{entry['rule']}]" if entry.get("rule") else ""
                    self._say(f"tournament: {entry['text']}{rule}")
            if entries:
                shown = max(shown, max(e["t"] for e in entries))
            if summary["finished"]:
                self._results()
                return 0
        self._say("tournament: stopped before the end")
        return 0

    def _results(self) -> None:
        assert self.floor is not None
        results = self.floor.call("GET", "/api/tournament/results")
        hands = sum(d.hands for d in self.dealers)
        self._say(f"tournament over: {hands} hands dealt; places paid {results['places_paid']}")
        for r in results["results"]:
            place = r["place"] if not r["shared"] else f"{r['place']}-{r['place_to']}"
            prize = f"  {r['prize']:,}" if r["prize"] else ""
            self._say(f"  {place:>6}  {r['name']}{prize}")


def run_tournament_sim(configure: Callable[[str], Config], args: Any) -> int:
    """`tablectl sim --tournament FILE` (tablectl/cli.py hands over here); `configure`
    gives the tables' configuration under a rule profile (the event's house, unless
    `--profile` says otherwise)."""
    structure = load_structure(Path(args.tournament))
    config = configure(structure.house.name)
    try:
        return SimTournament(config, args).run()
    except KeyboardInterrupt:
        print("tournament: interrupted", file=sys.stderr)
        return 130
