"""The TV service beside `tablectl sim`: the simulated table on air, its URLs printed."""

from __future__ import annotations

import dataclasses
import socket
import time
from typing import TYPE_CHECKING

from controller.config import BrokerConfig
from controller.errors import TableError

if TYPE_CHECKING:
    from broadcast.service import TvService

DEFAULT_SIM_PORT = 8088
DEFAULT_SIM_DELAY = 5.0


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class SimTv:
    """The TV service of a simulated table (the local broker, anonymous, no TLS)."""

    def __init__(self, service: TvService, delay: float) -> None:
        self.service = service
        self.delay = delay

    def finish(self) -> None:
        """Let the overlay catch up with the end of the session (the delay), then stop."""
        service = self.service
        deadline = time.monotonic() + self.delay + 5.0
        if self.delay > 0:
            print(f"tv: the overlay is {self.delay:g} s behind; letting it catch up", flush=True)
        while time.monotonic() < deadline:
            if all(len(t.line) == 0 for t in service.desk.tables.values()):
                break
            time.sleep(0.1)
        service.stop()


def start_sim_tv(
    broker: BrokerConfig, prefix: str, table: str, *, delay: float | None, port: int | None
) -> SimTv | None:
    """Start the TV service on the simulated table and print its URLs (None if it cannot)."""
    try:
        from broadcast.desk import TableSpec
        from broadcast.service import TvService
    except ImportError as exc:  # the `tv` extra is not installed
        print(f"tv: not started ({exc.name} missing: pip install -e '.[tv]')", flush=True)
        return None
    delay = DEFAULT_SIM_DELAY if delay is None else delay
    host = "127.0.0.1"
    if port is None:
        port = DEFAULT_SIM_PORT if _port_free(host, DEFAULT_SIM_PORT) else _free_port(host)
    tv_broker = dataclasses.replace(
        broker, client_id="tablectl-tv-sim", username=None, password=None, credentials_file=None
    )
    try:
        service = TvService(
            broker=tv_broker,
            tables=[TableSpec(table, prefix, f"Table {table}")],
            delay=delay,
            listen=host,
            port=port,
        )
        service.start()
    except TableError as exc:
        print(f"tv: not started: {exc}", flush=True)
        return None
    if service.subscriber is not None:
        service.subscriber.subscribed.wait(5.0)
    base = service.base_url
    print(
        f"tv: on-air overlay (secure delay {delay:g} s): {base}/overlay/{table}\n"
        f"tv: director's live preview (cards face down): {base}/preview/{table}\n"
        f"tv: delayed JSON feed: ws://{base.removeprefix('http://')}/feed/{table}",
        flush=True,
    )
    return SimTv(service, delay)
