"""The room server process: the ingest (MQTT to the database) and the HTTP API, together."""

from __future__ import annotations

import logging
import threading
import time

import uvicorn

from room.api import RoomContext, create_app
from room.config import RoomConfig
from room.ingest import Ingest
from room.store import Store, open_store
from room.tournament.router import attach as attach_tournament

log = logging.getLogger("tablectl.room")


class RoomServer:
    """Store, ingest and HTTP server of one room; `run` blocks, `start`/`stop` use a thread."""

    def __init__(self, config: RoomConfig, *, port: int | None = None) -> None:
        self.config = config
        self.store: Store = open_store(config.database, config.name)
        self.ingest = Ingest(config, self.store)
        self.app = create_app(RoomContext(config, self.store, self.ingest))
        # the tournament floor: docs/tournament.md
        self.tournament = attach_tournament(self.app, config.tournament, self.ingest)
        self.port = config.http.port if port is None else port
        self._server = uvicorn.Server(
            uvicorn.Config(
                self.app,
                host=config.http.host,
                port=self.port,
                log_level="warning",
                lifespan="off",
                access_log=False,
            )
        )
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Where the monitor and the API are."""
        return f"http://{self.config.http.host}:{self.bound_port}/"

    @property
    def bound_port(self) -> int:
        """The HTTP port actually listened on (port 0: the one the system chose)."""
        for server in getattr(self._server, "servers", []) or []:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        return self.port

    def run(self) -> None:
        """Serve until SIGINT/SIGTERM (uvicorn handles them), then stop the ingest."""
        self.ingest.start()
        try:
            self._server.run()
        finally:
            if self.tournament is not None:
                self.tournament.stop()
            self.ingest.stop()
            self.store.close()

    def start(self, timeout: float = 20.0) -> None:
        """Serve from a background thread (the simulator, tests); return once listening."""
        self.ingest.start()
        self._thread = threading.Thread(target=self._server.run, name="room-http", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self._server.started:
            raise RuntimeError("the room server's HTTP side did not start")

    def summary(self, last_seq: int, wait: float = 10.0) -> str:
        """One line for the simulator: what the room stored (after waiting for `last_seq`)."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if max((int(t["max_seq"]) for t in self.store.tables()), default=0) >= last_seq:
                break
            time.sleep(0.1)
        counts = self.store.event_counts()
        hands = [h for h in self.store.hands(None, 1000) if h["completed_t"] is not None]
        line = f"room: {counts['rows']} events stored, {len(hands)} hands completed"
        if hands:
            line += f"; a hand history: {self.url}api/hands/{hands[0]['table_id']}."
            line += f"{hands[0]['hand']}.phh"
        return line

    def stop(self) -> None:
        """Stop serving and ingesting (thread mode)."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.tournament is not None:
            self.tournament.stop()
        self.ingest.stop()
        self.store.close()
