"""A room server for `tablectl sim --room`: the simulated table's broker, SQLite, a free port."""

from __future__ import annotations

from pathlib import Path

from room.config import (
    DatabaseConfig,
    GapsConfig,
    HttpConfig,
    KeysConfig,
    RoomBroker,
    RoomConfig,
    StatsConfig,
)
from room.server import RoomServer


def start_sim_room(
    room: str,
    host: str,
    port: int,
    workdir: Path,
    *,
    http_port: int = 0,
    keys: Path | None = None,
) -> RoomServer:
    """Start a room server (in this process) on a local, anonymous broker; it is listening
    when this returns (`server.url`)."""
    config = RoomConfig(
        path=workdir / "room.toml",
        name=room,
        broker=RoomBroker(host=host, port=port, client_id=f"tablectl-sim-room-{room}"),
        database=DatabaseConfig(url=f"sqlite:///{workdir / 'room.db'}"),
        http=HttpConfig(host="127.0.0.1", port=http_port),
        gaps=GapsConfig(),
        stats=StatsConfig(),
        keys=KeysConfig(directory=keys),  # the simulated tables' public keys
    )
    server = RoomServer(config)
    server.start()
    return server
