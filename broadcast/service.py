"""The TV service as one object: desk, equity worker, MQTT subscriber and web server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
from collections.abc import Iterator

import uvicorn

from broadcast.clock import Clock, SystemClock
from broadcast.config import TvConfig
from broadcast.desk import Desk, TableSpec
from broadcast.evaluator import tables as evaluator_tables
from broadcast.mqtt import TvSubscriber
from broadcast.web import create_app
from controller.config import BrokerConfig
from kernel.errors import TableError

log = logging.getLogger(__name__)


class _Server(uvicorn.Server):
    """uvicorn's server, leaving the signals to the service (a clean stop exits 0)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class TvService:
    """`tablectl tv`: start() in a thread of its own (or serve() in the foreground)."""

    def __init__(
        self,
        *,
        broker: BrokerConfig | None,
        tables: list[TableSpec],
        delay: float,
        listen: str = "127.0.0.1",
        port: int = 8088,
        true_outs: bool = True,
        control_token: str | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.clock = clock or SystemClock()
        self.desk = Desk(tables, delay=delay, clock=self.clock, true_outs=true_outs)
        self.listen = listen
        self.port = port
        # No broker: messages are given to `desk.receive_threadsafe` (tests, benchmarks).
        self.subscriber = (
            TvSubscriber(broker, [t.prefix for t in tables], self.desk.receive_threadsafe)
            if broker is not None
            else None
        )
        if self.subscriber is not None:
            self.desk.requester = self.subscriber.request
        self.app = create_app(
            self.desk,
            control_token=control_token,
            connected=lambda: self.subscriber.connected if self.subscriber else None,
        )
        self.server = _Server(
            uvicorn.Config(
                self.app,
                host=listen,
                port=port,
                log_level="warning",
                ws="auto",
                lifespan="on",
                access_log=False,
            )
        )
        self._thread: threading.Thread | None = None

    @classmethod
    def from_config(cls, config: TvConfig, *, clock: Clock | None = None) -> TvService:
        """A service for a loaded configuration file."""
        return cls(
            broker=config.broker,
            tables=[TableSpec(t.id, t.prefix, t.label) for t in config.tables],
            delay=config.delay,
            listen=config.listen,
            port=config.port,
            true_outs=config.true_outs,
            control_token=config.control_token,
            clock=clock,
        )

    @property
    def base_url(self) -> str:
        """http://host:port of the pages."""
        host = "127.0.0.1" if self.listen in ("0.0.0.0", "::") else self.listen
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def _prepare(self) -> None:
        evaluator_tables()  # the lookup tables, before the first hand needs them
        self.desk.worker.start()

    async def _serve(self) -> None:
        if self.subscriber is not None:
            self.subscriber.start()
        try:
            await self.server.serve()
        finally:
            if self.subscriber is not None:
                self.subscriber.stop()

    def serve(self) -> None:
        """Run in the foreground until SIGINT or SIGTERM."""
        self._prepare()

        def stop(_signum: int, _frame: object) -> None:
            self.server.should_exit = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            asyncio.run(self._serve())
        finally:
            self.desk.worker.stop()
        if not self.server.started:
            raise TableError(f"the TV service could not listen on {self.listen}:{self.port}")

    def start(self, timeout: float = 20.0) -> None:
        """Run in a background thread; return once the pages are served."""
        self._prepare()
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._serve()), name="tv-service", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise TableError(f"the TV service could not listen on {self.listen}:{self.port}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop the web server, the subscriber and the worker."""
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.desk.worker.stop()
