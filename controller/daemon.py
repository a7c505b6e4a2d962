"""The daemon: devices feed one queue, one loop journals and applies events, then publishes."""

from __future__ import annotations

import dataclasses
import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller import __version__
from controller.config import BrokerConfig, Config, ReaderConfig
from controller.engine import Engine
from controller.errors import DeviceError, TableError, TraceError
from controller.journal import Journal
from controller.messages import ALERTS, EVENTS, Message
from controller.publisher import Publisher
from controller.replay import build_engine
from controller.trace import Command, Event, Tick, parse_event

log = logging.getLogger("tablectl.daemon")

FAULTS = frozenset({"reader_disconnected", "reader_silent", "antenna_mismatch"})
RECOVERIES = frozenset({"reader_reconnected", "reader_recovered"})


@dataclass(frozen=True, slots=True)
class DeviceAlert:
    """A fault reported by a driver (not an engine input, so not journaled)."""

    kind: str
    message: str
    details: dict[str, Any]
    severity: str = "warning"


class Daemon:
    """One table: devices, journal, engine and publisher wired together."""

    def __init__(
        self,
        config: Config,
        *,
        broker: BrokerConfig | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.broker = broker or config.broker
        self.clock = clock
        self.engine: Engine = build_engine(config)
        self.queue: queue.Queue[Event | DeviceAlert | None] = queue.Queue()
        self.journal: Journal | None = None
        self.epoch = clock()
        self.last_t = 0.0
        self.publisher: Publisher | None = None
        self.sim_boards: dict[str, Any] = {}
        self.readers: list[Any] = []
        self.gpio: Any = None
        self.buttons: Any = None
        self.lamps: Any = None
        self.applied = 0
        self.faulty: set[str] = set()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    # ------------------------------------------------------------------ time and input

    def now(self) -> float:
        """Trace time: seconds since the journal began."""
        return max(0.0, round(self.clock() - self.epoch, 6))

    def submit(self, event: Event) -> None:
        """Queue an input event (thread-safe; called from driver threads)."""
        self.queue.put(event)

    def submit_alert(self, kind: str, message: str, details: dict[str, Any]) -> None:
        """Queue a device alert (thread-safe)."""
        severity = "critical" if kind.endswith(("disconnected", "silent")) else "warning"
        self.queue.put(DeviceAlert(kind, message, dict(details), severity))

    def submit_command(self, name: str, payload: bytes) -> None:
        """A room command from MQTT `cmd/<name>`; malformed ones become alerts."""
        try:
            obj = json.loads(payload)
            if not isinstance(obj, dict):
                raise TraceError("command payload must be a JSON object")
            obj.setdefault("name", name)
            if obj["name"] != name:
                raise TraceError(f"topic says {name!r} but payload says {obj['name']!r}")
            obj["event"] = "command"
            obj["t"] = 0.0
            event = parse_event(obj)
        except (ValueError, TraceError) as exc:
            self.submit_alert("command_malformed", f"command {name!r} refused: {exc}", {})
            return
        self.submit(event)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Recover from the journal, connect the broker, open the devices, start the loop."""
        recovered: list[Message] = []
        if self.config.journal.path is not None:
            self.journal = Journal(
                self.config.journal.path,
                self.config.table.id,
                now=self.clock(),
                fsync=self.config.journal.fsync,
                fsync_interval=self.config.journal.fsync_interval,
            )
            self.epoch = self.journal.epoch
            recovered = self._recover(self.journal)
        self.publisher = Publisher(
            self.broker,
            self.broker.prefix,
            self.broker.client_id,
            status={
                "table": self.config.table.id,
                "room": self.config.table.room,
                "version": __version__,
            },
            on_command=self.submit_command,
        )
        self.publisher.start()
        for message in recovered:
            self.publisher.publish(message)
        self._open_gpio()
        self._open_reader("card_reader", self.config.card_reader, kind="card")
        self._open_reader("chip_reader", self.config.chip_reader, kind="chip")
        self._thread = threading.Thread(target=self._loop, name="tablectl-engine", daemon=True)
        self._thread.start()

    def _recover(self, journal: Journal) -> list[Message]:
        """Re-apply the journal; return what to publish again (at-least-once).

        The current hand's events are published again (subscribers drop seq they have),
        then the latest state.
        """
        hand_events: list[Message] = []
        last_state: Message | None = None
        for event in journal:
            for message in self.engine.apply(event):
                if message.topic == EVENTS:
                    if message.payload["type"] == "hand_started":
                        hand_events = []
                    hand_events.append(message)
                elif message.retain:
                    last_state = message
            self.last_t = event.t
        if journal.events:
            log.info("recovered %d journaled events, seq=%d", len(journal.events), self.engine.seq)
        return [*hand_events, *([last_state] if last_state else [])]

    def _open_gpio(self) -> None:
        from drivers.gpio import get_backend
        from drivers.gpio.buttons import Lamps, TableButtons

        self.gpio = get_backend(self.config.gpio.backend)
        self.buttons = TableButtons(self.gpio, self.config.gpio, self.submit, self.now)
        self.lamps = Lamps(self.gpio, self.config.gpio)

    def _open_reader(self, name: str, cfg: ReaderConfig, *, kind: str) -> None:
        from drivers.reader.driver import ReaderDriver

        port = cfg.port
        if cfg.backend == "sim":
            from firmware_sim.reader_board import ReaderBoardSim

            board = ReaderBoardSim(cfg.antennas, kind=kind)
            board.start()
            self.sim_boards[name] = board
            port = board.path
        if port is None:
            raise DeviceError(f"{name}: no serial port configured")
        driver = ReaderDriver(
            port,
            cfg.antennas,
            on_event=self.submit,
            on_alert=self.submit_alert,
            clock=self.now,
            baudrate=cfg.baudrate,
            name=name,
        )
        driver.start()
        self.readers.append(driver)

    def stop(self) -> None:
        """Stop devices, drain the queue, say offline, close the journal."""
        for reader in self.readers:
            reader.stop()
        for board in self.sim_boards.values():
            board.stop()
        self._stopping.set()
        self.queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.lamps is not None:
            self.lamps.all_off()
        if self.gpio is not None:
            self.gpio.close()
        if self.publisher is not None:
            self.publisher.stop()
        if self.journal is not None:
            self.journal.close()

    # ------------------------------------------------------------------ the loop

    def _loop(self) -> None:
        while True:
            deadline = self.engine.deadline()
            timeout = None
            if deadline is not None:
                timeout = max(0.0, deadline - self.now())
            try:
                item = self.queue.get(timeout=timeout)
            except queue.Empty:
                item = Tick(t=self.now())
            if item is None:
                if self._stopping.is_set():
                    return
                continue
            try:
                self.process(item)
            except TableError as exc:  # never die on input
                log.error("input refused: %s", exc)
                self._publish(self._alert_message("input_error", str(exc), {}, "critical"))
            except Exception as exc:
                log.exception("engine failure on %r", item)
                self._publish(
                    self._alert_message(
                        "engine_fault", f"{type(exc).__name__}: {exc}", {}, "critical"
                    )
                )

    def process(self, item: Event | DeviceAlert) -> list[Message]:
        """Journal and apply one item; publish what it produced."""
        if isinstance(item, DeviceAlert):
            message = self._alert_message(item.kind, item.message, item.details, item.severity)
            self._publish(message)
            self._fault_lamp(item)
            return [message]
        t = max(item.t, self.last_t)
        if isinstance(item, Command):
            t = max(self.now(), self.last_t)
        if t != item.t:
            item = dataclasses.replace(item, t=t)
        self.last_t = t
        if self.journal is not None:
            self.journal.append(item)
        messages = self.engine.apply(item)
        for message in messages:
            self._publish(message)
        self.applied += 1
        self._update_lamps()
        return messages

    def _publish(self, message: Message) -> None:
        if self.publisher is not None:
            self.publisher.publish(message)

    def _alert_message(
        self, kind: str, text: str, details: dict[str, Any], severity: str
    ) -> Message:
        hand = self.engine.hand
        payload: dict[str, Any] = {
            "table": self.config.table.id,
            "type": kind,
            "severity": severity,
            "message": text,
            "hand": hand.number if hand else None,
            "t": self.now(),
        }
        payload.update(details)
        return Message(ALERTS, payload)

    def _fault_lamp(self, alert: DeviceAlert) -> None:
        """The panel's fault lamp shows a reader board that is not answering."""
        if self.lamps is None:
            return
        reader = str(alert.details.get("reader", ""))
        if alert.kind in FAULTS:
            self.faulty.add(reader or alert.kind)
        elif alert.kind in RECOVERIES:
            self.faulty.discard(reader or alert.kind)
        else:
            return
        self.lamps.set("fault", bool(self.faulty))

    def _update_lamps(self) -> None:
        if self.lamps is None:
            return
        for name, on in self.engine.lamps().items():
            if name.startswith("allin"):
                self.lamps.set_allin(int(name[5:]), on)
            else:
                self.lamps.set(name, on)
