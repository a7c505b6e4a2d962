"""The TV service beside `tablectl sim`: the simulated table on air, its URLs printed."""

from __future__ import annotations

import dataclasses
import socket
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from controller.config import BrokerConfig
from kernel.errors import TableError

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


def _print(text: str) -> None:
    print(text, flush=True)


def start_sim_tv(
    broker: BrokerConfig,
    prefix: str,
    table: str,
    *,
    delay: float | None,
    port: int | None,
    say: Callable[[str], None] = _print,
    link: Callable[[str, str, str | None], None] | None = None,
) -> SimTv | None:
    """Start the TV service on the simulated table and give its URLs to `link` (name, URL,
    the line printed without a view), or print them (None if it cannot start). Port 8088
    taken: the pages go to a free port, and `say` says so; a `port` asked for and taken
    is refused (TableError)."""
    try:
        from broadcast.desk import TableSpec
        from broadcast.service import TvService
    except ImportError as exc:  # the `tv` extra is not installed
        say(f"tv: not started ({exc.name} missing: pip install -e '.[tv]')")
        return None
    delay = DEFAULT_SIM_DELAY if delay is None else delay
    host = "127.0.0.1"
    if port is None:
        port = DEFAULT_SIM_PORT
        if not _port_free(host, port):
            port = _free_port(host)
            say(
                f"tv: port {DEFAULT_SIM_PORT} is taken (another program, or another sim); "
                f"the TV pages are on port {port} instead (--tv-port N chooses one)"
            )
    elif not _port_free(host, port):
        raise TableError(f"--tv-port {port}: the port is taken on {host} (choose another)")
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
        say(f"tv: not started: {exc}")
        return None
    if service.subscriber is not None:
        service.subscriber.subscribed.wait(5.0)
    base = service.base_url
    urls = (
        ("TV overlay", f"tv: on-air overlay (secure delay {delay:g} s)", f"{base}/overlay/{table}"),
        ("TV preview", "tv: director's live preview (cards face down)", f"{base}/preview/{table}"),
        ("TV feed", "tv: delayed JSON feed", f"ws://{base.removeprefix('http://')}/feed/{table}"),
    )
    for short, name, url in urls:
        if link is None:
            say(f"{name}: {url}")
        else:
            link(short, url, f"{name}: {url}")
    return SimTv(service, delay)
