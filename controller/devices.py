"""The table's devices on their configured backends: their inputs go to the daemon's queue."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from controller.backends import create_backend
from kernel.errors import DeviceError, TableError
from kernel.inputs import Badge, ButtonPress, Device, Event, TagIn, TagOut, Timed

if TYPE_CHECKING:
    from controller.config import Config, GpioConfig, ReaderConfig
    from drivers.badge import BadgeReader
    from drivers.gpio import Lamps, PinBackend, PinPlan, TableButtons
    from drivers.reader.driver import ReaderDriver

log = logging.getLogger("tablectl.devices")

#: Device alerts that light the panel's fault lamp, and those that put it out again.
FAULTS = frozenset({"reader_disconnected", "reader_silent", "antenna_mismatch"})
RECOVERIES = frozenset({"reader_reconnected", "reader_recovered"})

TagContents = Mapping[str, Sequence[str]]
"""Antenna -> tag uids on it (what the journal says is on the table)."""


class InputSink(Protocol):
    """Where the devices' inputs go (thread-safe): the daemon's queue and its clock."""

    def now(self) -> float:
        """Trace time: seconds since the journal began."""
        ...

    def made_at(self, monotonic: float) -> float:
        """Trace time of a moment on the machine's monotonic clock (a GPIO edge stamped at
        the interrupt): when an input was made, however late it is queued."""
        ...

    def real_time(self) -> bool:
        """Whether trace time is the machine's clock: then the reader boards' reports are
        dated by the boards' own clocks; on a simulated clock (`tablectl sim`), where time
        stands still while an input is in flight, when they are decoded."""
        ...

    def submit(self, event: Event) -> None:
        """Queue an input event."""
        ...

    def submit_alert(self, kind: str, message: str, details: dict[str, Any]) -> None:
        """Queue a device alert."""
        ...

    def submit_device(self, name: str, state: str) -> None:
        """A reader board's availability changed ("offline" / "online")."""
        ...

    def submit_reader_event(self, name: str, event: TagIn | TagOut) -> None:
        """A reader board's tag event."""
        ...

    def submit_catch_up(self, name: str, batch: list[Timed]) -> None:
        """What a reader board re-read, each move with its board's time (None: unknown)."""
        ...


class BoardLink(Protocol):
    """How a reader board is reached: the serial port pyserial opens; `stop` lets go of it."""

    @property
    def path(self) -> str:
        """The serial device (e.g. /dev/ttyUSB0, or a simulated board's pty)."""
        ...

    def stop(self) -> None:
        """Release the board (a simulated one stops)."""
        ...


@dataclass(frozen=True, slots=True)
class SerialBoard:
    """A real reader board on a serial port: nothing to start or stop on our side."""

    path: str

    def stop(self) -> None:
        """Nothing to release: the driver closes the port."""


def serial_board(*, name: str, config: ReaderConfig, kind: str, tags: TagContents) -> SerialBoard:
    """Reader backend "serial": the board on the configured port."""
    if config.port is None:
        raise DeviceError(f"{name}: no serial port configured")
    return SerialBoard(config.port)


def simulated_board(*, name: str, config: ReaderConfig, kind: str, tags: TagContents) -> Any:
    """Reader backend "sim": the board's firmware simulated on a pty, with `tags` on it (a
    simulated table outlives the daemon, so its tags are where the journal left them)."""
    from firmware_sim.reader_board import ReaderBoardSim

    board = ReaderBoardSim(config.antennas, kind=kind)
    for antenna, uids in tags.items():
        for uid in uids if antenna in config.antennas else ():
            board.place(antenna, uid)
    board.start()
    return board


#: The reader backends that are simulated boards (a simulator and the tests move their tags).
SIMULATED_BOARDS = ("sim", "sim-field")


def field_board(*, name: str, config: ReaderConfig, kind: str, tags: TagContents) -> Any:
    """Reader backend "sim-field": the board's firmware on a pty, reading its antennas'
    fields directly (no simulated radio: a room of simulated tables)."""
    from firmware_sim.field_board import FieldBoardSim

    board = FieldBoardSim(config.antennas, kind=kind)
    for antenna, uids in tags.items():
        for uid in uids if antenna in config.antennas else ():
            board.place(antenna, uid)
    board.start()
    return board


def open_board(
    name: str, config: ReaderConfig, *, kind: str, tags: TagContents | None = None
) -> BoardLink:
    """The reader board `name` ("card_reader" / "chip_reader") on its configured backend."""
    link: BoardLink = create_backend(
        "reader", config.backend, name=name, config=config, kind=kind, tags=tags or {}
    )
    return link


def reader_driver(link: BoardLink, config: ReaderConfig, **kw: Any) -> ReaderDriver:
    """The host driver of a reader board reached through `link` (`kw`: its callbacks)."""
    from drivers.reader.driver import ReaderDriver

    return ReaderDriver(link.path, config.antennas, baudrate=config.baudrate, **kw)


@dataclass(frozen=True)
class BoardNote:
    """What one frame of a reader board said, for a live check of its antennas: a tag
    report (antenna index, uid, the board's time) or a board error."""

    antenna: int | None = None
    uid: str | None = None
    board_ms: int | None = None
    error: str | None = None


def board_note(frame: Any) -> BoardNote | None:
    """A reader driver's decoded frame as a `BoardNote`, or None for other messages."""
    from drivers.reader.messages import BoardError
    from drivers.reader.messages import TagIn as TagReport
    from drivers.reader.messages import TagOut as TagGone

    msg = frame.msg
    if isinstance(msg, TagReport | TagGone):
        return BoardNote(antenna=msg.antenna, uid=msg.uid_hex, board_ms=msg.board_ms)
    if isinstance(msg, BoardError):
        return BoardNote(error=f"{msg.code}: {msg.text}")
    return None


def pin_plan(config: GpioConfig) -> PinPlan:
    """The GPIO configuration's pins, as the button and lamp drivers take them."""
    from drivers.gpio import PinPlan

    return PinPlan(
        shuffler=config.shuffler,
        panel=config.panel,
        allin_buttons=config.allin_buttons,
        lamps=config.lamps,
        allin_lamps=config.allin_lamps,
        bounce_ms=config.bounce_ms,
    )


class Devices:
    """One table's reader boards, GPIO bank (buttons and lamps) and badge reader.

    `open` starts them on the backends the configuration names; their inputs go to `sink`
    from the drivers' threads. Simulated boards and badge reader stay reachable
    (`sim_boards`, `sim_badge`) for the simulator and the tests to move tags and badges.
    """

    def __init__(self, config: Config, sink: InputSink) -> None:
        self.config = config
        self.sink = sink
        self.boards: dict[str, BoardLink] = {}
        self.sim_boards: dict[str, Any] = {}  # firmware_sim ReaderBoardSim, by reader name
        self.readers: list[ReaderDriver] = []
        self.gpio: PinBackend | None = None
        self.buttons: TableButtons | None = None
        self.lamps: Lamps | None = None
        self.badge_reader: BadgeReader | None = None
        self.sim_badge: Any = None  # the badge reader, when it is the simulated one
        self.faulty: set[str] = set()  # reader boards whose fault lights the fault lamp
        self.stopped: str | None = None  # why the table stopped (its fault lamp stays lit)
        self._closing = threading.Event()

    def open(self, tags: TagContents) -> None:
        """Open the GPIO bank, both reader boards (seeded with `tags`) and the badge reader."""
        self._open_gpio()
        self._open_reader("card_reader", self.config.card_reader, kind="card", tags=tags)
        self._open_reader("chip_reader", self.config.chip_reader, kind="chip", tags=tags)
        self._open_badge()

    def stop_inputs(self) -> None:
        """Stop the readers, the badge reader and the simulated boards: no more inputs."""
        for reader in self.readers:
            reader.stop()
        if self.badge_reader is not None:
            self.badge_reader.stop()
        for board in self.boards.values():
            board.stop()
        self._closing.set()

    def close(self) -> None:
        """Switch every lamp off and release the GPIO bank (after the loop's last batch).

        A table that stopped on a fault (`stop_table`) leaves its fault lamp lit: the pin
        stays driven after the process has gone, until the next start takes the lamps over.
        """
        self._closing.set()
        keep = ("fault",) if self.stopped is not None else ()
        if self.lamps is not None:
            self.lamps.all_off(keep)
        if self.gpio is not None:
            self.gpio.close(self.lamps.pins_of(keep) if self.lamps is not None else ())

    def stop_table(self, reason: str) -> None:
        """The table is stopped (its journal failed): presses are refused from now on (the
        GPIO backend stops acknowledging them) and the fault lamp lights, steady."""
        self.stopped = reason
        if self.buttons is not None:
            self.buttons.refuse(reason)
        if self.lamps is not None:
            self.lamps.set("fault", True)

    def focus(self, antennas: frozenset[str]) -> None:
        """The antennas the reader boards read first (controller/focus.py; none: every one
        in turn); each board takes its own, and an older board ignores it."""
        for reader in self.readers:
            reader.set_focus(antennas)

    # ------------------------------------------------------------------ lamps

    def show(self, lamps: Mapping[str, bool]) -> None:
        """Switch the lamps as the engine wants them (floor, pending, allin<seat>)."""
        if self.lamps is not None:
            self.lamps.apply(lamps)

    def note_alert(self, kind: str, details: Mapping[str, Any]) -> None:
        """The panel's fault lamp shows a reader board that is not answering."""
        if self.lamps is None:
            return
        reader = str(details.get("reader", ""))
        if self.stopped is not None:
            return  # the fault lamp says the table is stopped, whatever the boards do
        if kind in FAULTS:
            self.faulty.add(reader or kind)
        elif kind in RECOVERIES:
            self.faulty.discard(reader or kind)
        else:
            return
        self.lamps.set("fault", bool(self.faulty))

    # ------------------------------------------------------------------ opening

    def _open_gpio(self) -> None:
        from drivers.gpio import Lamps, TableButtons

        cfg = self.config.gpio
        options: dict[str, Any] = {}
        if cfg.backend == "sim" and cfg.sim_socket is not None:
            options["control_socket"] = cfg.sim_socket
        self.gpio = gpio = create_backend("gpio", cfg.backend, **options)
        plan = pin_plan(cfg)
        # Debounce on a monotonic clock (trace time may stand still while resyncing);
        # each press is stamped at its edge, and that moment put on trace time as it is
        # queued (the reorder window orders it by then).
        self.buttons = TableButtons(gpio, plan, self._press, time.monotonic)
        self.lamps = Lamps(gpio, plan)
        threading.Thread(target=self._watch_buttons, name="buttons-watch", daemon=True).start()

    def _press(self, press: ButtonPress) -> None:
        self.sink.submit(dataclasses.replace(press, t=self.sink.made_at(press.t)))

    def _watch_buttons(self) -> None:
        """Poll the button pins every second: a release whose edge was never reported is
        caught from the pin's level (so the next press counts), a held button is alerted."""
        reported: set[tuple[str, int | None]] = set()
        while not self._closing.wait(1.0):
            buttons = self.buttons
            if buttons is None:
                continue
            try:
                stuck = set(buttons.stuck())
            except TableError:  # the GPIO bank is closing
                return
            for name, seat in sorted(stuck - reported, key=str):
                label = name if seat is None else f"{name} seat {seat}"
                self.sink.submit_alert(
                    "button_stuck",
                    f"the {label} button has been held down for over 10 s",
                    {"button": name, "seat": seat},
                )
            reported = stuck

    def _open_reader(self, name: str, cfg: ReaderConfig, *, kind: str, tags: TagContents) -> None:
        link = open_board(name, cfg, kind=kind, tags=tags)
        self.boards[name] = link
        if cfg.backend in SIMULATED_BOARDS:
            self.sim_boards[name] = link
        sink = self.sink
        driver = reader_driver(
            link,
            cfg,
            on_event=lambda event: sink.submit_reader_event(name, event),
            on_alert=sink.submit_alert,
            clock=sink.now,
            name=name,
            on_device=lambda state: sink.submit_device(name, state),
            on_catch_up=lambda batch: sink.submit_catch_up(name, batch),
            board_time=sink.real_time(),
            initial={a: u for a, u in tags.items() if a in cfg.antennas},
        )
        driver.start()
        self.readers.append(driver)

    def _open_badge(self) -> None:
        """The staff badge reader ([devices.badge_reader]): badges and its state are inputs."""
        cfg = self.config.badge
        if cfg.backend == "none":
            return
        sink = self.sink

        def on_badge(uid: str, removed: bool) -> None:
            sink.submit(Badge(t=sink.now(), uid=uid, removed=removed))

        def on_device(state: str) -> None:
            sink.submit(Device(t=sink.now(), name="badge_reader", state=state))

        reader: BadgeReader = create_backend(
            "badge_reader",
            cfg.backend,
            on_badge=on_badge,
            on_device=on_device,
            on_alert=sink.submit_alert,
            clock=sink.now,
            reader=cfg.reader,
        )
        reader.start()
        self.badge_reader = reader
        if cfg.backend == "sim":
            self.sim_badge = reader
