"""A reader board on a real pseudo-terminal, running the real firmware on simulated hardware.

The firmware in `firmware/` (its main loop, antenna scan, debounce, PN5180 driver and the
shared protocol module) runs here unchanged; only the hardware is simulated: the PN5180
front-ends and the tags in their fields (firmware_sim/pn5180_sim.py), the clock, and the USB
link, which is a pty whose slave side pyserial opens like /dev/ttyACM0.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
import tty
from collections.abc import Callable, Sequence
from pathlib import Path

from drivers.reader.messages import Hello, Message, check_uid, uid_from_hex, uid_hex
from firmware import pn5180 as chip
from firmware import protocol
from firmware.board import BACKGROUND_MS, Board
from firmware.pn5180 import PN5180
from firmware.scanner import MAX_TAGS, Antenna, Scanner
from firmware_sim.hardware import Faults, FaultyFifo, PtyLink, SimClock
from firmware_sim.pn5180_sim import SimBus, SimPN5180, VirtualClock
from kernel.errors import ProtocolError

log = logging.getLogger(__name__)

TX_QUEUE_LIMIT = 64 * 1024  # bytes waiting for the host; beyond this new frames are dropped
#: The most line-noise bytes queued at once (see `inject_raw`): well under the FIFO's size.
NOISE_PIECE = 1024
#: Pause after each turn of the firmware's own scan. On the board it is 0 (scan
#: continuously); here every move is scanned at once by the hand that makes it, so the
#: loop's own turns only confirm what is already known and are spaced out to leave the CPU
#: to the table (a tag placed with `wait=False` is found by them, as on a real table).
SCAN_PAUSE_MS = 150


class _SimBoard(Board):
    """The firmware's Board, noting the host requests it answers (for the tests); with
    `legacy` set it speaks that older version (what came after it is an unknown request)."""

    requests: list[str]
    legacy: int | None = None

    def send_hello(self) -> None:
        if self.legacy is not None:
            self.hello = protocol.hello_payload(self.firmware, self.kind, self.names, self.legacy)
        super().send_hello()

    def handle_request(self, msg_type: int, payload: bytes) -> None:
        if not payload and msg_type == protocol.INVENTORY_REQUEST:
            self.requests.append("inventory")
        elif not payload and msg_type == protocol.HELLO_REQUEST:
            self.requests.append("hello")
        elif not payload and msg_type == protocol.ARRIVALS_REQUEST:
            self.requests.append("arrivals")
        elif msg_type == protocol.FOCUS:
            self.requests.append("focus")
        newer = {protocol.ARRIVALS_REQUEST: 3, protocol.FOCUS: 4}.get(msg_type, 0)
        if self.legacy is not None and newer > self.legacy:
            self.send_error(protocol.ERR_UNKNOWN_TYPE, f"unexpected 0x{msg_type:02X}")
            return
        super().handle_request(msg_type, payload)


class _Version2Board(_SimBoard):
    """A board of protocol version 2 (before ARRIVALS), for compatibility tests."""

    legacy = 2


class _Version3Board(_SimBoard):
    """A board of protocol version 3 (before FOCUS and paged inventories): every antenna
    in turn, whatever the host would like."""

    legacy = 3


class ReaderBoardSim:
    """A card or chip reader board whose pty slave path pyserial opens like /dev/ttyACM0.

    Each antenna has its own simulated PN5180. `place`/`remove` put a tag in or out of an
    antenna's field; a hand holds it there until the firmware has read it: the call runs
    the firmware's scan of that antenna until the firmware reports the change (TAG_IN at
    once, TAG_OUT after its debounce), so moves reach the host in the order they were made.
    A 4, 7 or 10-byte UID is an ISO 14443A card, an 8-byte UID an ISO 15693 tag.

    With `link`, a symlink at that path follows the board's pty the way udev's
    `/dev/tablectl-cards` follows the USB board: `unplug()` removes it and closes the pty
    (the board loses power), `plug()` boots the firmware again on a new pty and puts the link
    back. `restart()` is a reboot without unplugging (watchdog, brown-out). The tags in the
    fields are physical: they stay where they are through all of these, and may be moved
    meanwhile.
    """

    def __init__(
        self,
        antennas: Sequence[str],
        kind: str = "card",
        firmware: str = "tablesim-1.0",
        inventory_period: float = 5.0,
        heartbeat_period: float = 1.0,
        link: str | Path | None = None,
        *,
        protocols: Sequence[str] = (chip.ISO14443A, chip.ISO15693),
        debounce_out: int = 2,
        scan_pause_ms: int = SCAN_PAUSE_MS,
        legacy: bool | int = False,
        background_ms: int = BACKGROUND_MS,
        confirm_ms: int = 0,
        max_tags: int = MAX_TAGS,
    ) -> None:
        self._hello = Hello(firmware, kind, tuple(antennas))  # validates names and kind
        if len(set(antennas)) != len(antennas):
            raise ValueError(f"duplicate antenna names in {list(antennas)}")
        for name in protocols:
            if name not in chip.PROTOCOLS:
                raise ValueError(f"unknown air protocol {name!r}; known: {chip.PROTOCOLS}")
        self.inventory_period = inventory_period
        self.heartbeat_period = heartbeat_period
        self.protocols = tuple(protocols)
        self.debounce_out = debounce_out
        self.scan_pause_ms = scan_pause_ms
        # speak as an older board: True or 2 (no ARRIVALS), 3 (no FOCUS, no paging)
        self.legacy = 2 if legacy is True else int(legacy)
        self.background_ms = background_ms
        # the hand holds a tag until it is read: a departure is confirmed at once
        self.confirm_ms = confirm_ms
        self.max_tags = max_tags
        self.rf_clock = VirtualClock()
        self.frontends = [SimPN5180(self.rf_clock) for _ in antennas]
        self.bus = SimBus(self.frontends)
        self._fields: dict[str, dict[bytes, None]] = {name: {} for name in antennas}
        self._lock = threading.RLock()
        self._faults = Faults()
        self._board: _SimBoard | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._master = self._slave = -1
        self._wake_r = self._wake_w = -1
        self._counted = (0, 0)  # frames sent / dropped by earlier boots
        self.link = Path(link) if link is not None else None
        self.boots = 0
        self.path = ""
        self.requests: list[str] = []
        self.crashes: list[str] = []  # firmware exceptions (each rebooted the board)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Power up: open a pty, boot the firmware (HELLO, sequence 0) and run its loop."""
        if self._thread is not None:
            raise RuntimeError("reader board simulator already started")
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self.path = os.ttyname(self._slave)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._stop.clear()
        self._boot()
        if self.link is not None:
            tmp = self.link.with_name(self.link.name + ".new")
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            tmp.symlink_to(self.path)
            tmp.replace(self.link)  # atomic, like udev
        self._thread = threading.Thread(target=self._run, name=f"reader-sim {self.path}")
        self._thread.daemon = True
        self._thread.start()

    def _boot(self) -> None:
        """Firmware start: front-ends reset, fresh sequence numbers, empty FIFO, HELLO first."""
        with self._lock:
            self._retire()
            self._faults = Faults()
            self.bus.reset()
            antennas = [
                Antenna(name, [PN5180(self.bus, i, self.rf_clock)], self.protocols)
                for i, name in enumerate(self.antennas)
            ]
            firmware = {2: _Version2Board, 3: _Version3Board}.get(self.legacy, _SimBoard)
            scanner = Scanner(
                antennas,
                debounce_out=self.debounce_out,
                confirm_ms=self.confirm_ms,
                max_tags=self.max_tags,
            )
            board = firmware(
                scanner,
                PtyLink(self._master),
                SimClock(),
                kind=self._hello.kind,
                firmware=self._hello.firmware,
                heartbeat_ms=max(1, int(self.heartbeat_period * 1000)),
                inventory_ms=max(1, int(self.inventory_period * 1000)),
                scan_pause_ms=self.scan_pause_ms,
                fifo=FaultyFifo(TX_QUEUE_LIMIT, self._faults),
                background_ms=self.background_ms,
            )
            board.requests = self.requests
            self._board = board
            self.boots += 1

    def _retire(self) -> None:
        """The running firmware stops (held lock): keep its frame counts."""
        old, self._board = self._board, None
        if old is not None:
            sent, dropped = self._counted
            fifo = old.fifo
            injected = fifo.injected_drops if isinstance(fifo, FaultyFifo) else 0
            self._counted = (sent + fifo.frames_sent, dropped + fifo.frames_dropped + injected)

    def restart(self) -> None:
        """Reboot on the same port (watchdog, brown-out): new HELLO, sequence from 0."""
        self._boot()
        self._wake()

    def unplug(self) -> None:
        """Pull the USB cable: the link disappears, then the device (the pty) goes away."""
        self.stop()

    def plug(self) -> None:
        """Plug it back in: the board boots on a new device and the link points to it."""
        self.start()

    def stop(self) -> None:
        """Stop the firmware and close the pty: to the host the board was unplugged."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        if self.link is not None:
            with contextlib.suppress(FileNotFoundError):
                self.link.unlink()
        self._stop.set()
        self._wake()
        thread.join(timeout=5.0)
        with self._lock:
            self._retire()
        for fd in (self._master, self._slave, self._wake_r, self._wake_w):
            os.close(fd)
        self._master = self._slave = self._wake_r = self._wake_w = -1

    def __enter__(self) -> ReaderBoardSim:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the table -------------------------------------------------------------------------

    @property
    def antennas(self) -> tuple[str, ...]:
        return self._hello.antennas

    @property
    def firmware(self) -> Board | None:
        """The running firmware (None while unplugged)."""
        return self._board

    def place(self, antenna: str, uid: str | bytes, *, wait: bool = True) -> bool:
        """A tag enters `antenna`'s field: TAG_IN. False if it was already there.

        With `wait=False` the hand lets go at once: the firmware's own scan finds the tag
        when its schedule comes to that antenna, as on a real table.
        """
        raw = self._uid(uid)
        index = self._index(antenna)
        with self._lock:
            field = self._fields[antenna]
            if raw in field:
                return False
            board = self._ready_board()
            field[raw] = None
            self.frontends[index].place(raw)
            if board is not None and wait:
                present = board.scanner.present[index]
                if not self._scan_until(board, index, lambda: raw in present):
                    del field[raw]
                    self.frontends[index].remove(raw)
                    self._wake()
                    raise ProtocolError(f"the board did not take {uid_hex(raw)} at {antenna}")
        self._wake()
        return True

    def remove(self, antenna: str, uid: str | bytes, *, wait: bool = True) -> bool:
        """A tag leaves `antenna`'s field: TAG_OUT. False if it was not there (`wait=False`:
        the firmware's own scan notices it, as for `place`)."""
        raw = self._uid(uid)
        index = self._index(antenna)
        with self._lock:
            field = self._fields[antenna]
            if raw not in field:
                return False
            board = self._ready_board()
            del field[raw]
            self.frontends[index].remove(raw)
            if board is not None and wait:
                present = board.scanner.present[index]
                self._scan_until(board, index, lambda: raw not in present)
        self._wake()
        return True

    def move(self, uid: str | bytes, source: str, target: str) -> None:
        """A tag slides from one antenna to another: TAG_OUT then TAG_IN."""
        self.remove(source, uid)
        self.place(target, uid)

    def contents(self) -> dict[str, list[str]]:
        """Every antenna's tags (uppercase hex), in arrival order."""
        with self._lock:
            return {name: [uid_hex(uid) for uid in tags] for name, tags in self._fields.items()}

    def break_antenna(self, antenna: str, broken: bool = True) -> None:
        """Disconnect (or reconnect) an antenna's front-end: its reads fail (ERROR 1)."""
        with self._lock:
            self.frontends[self._index(antenna)].dead = broken
        self._wake()

    # -- explicit sends and fault injection ------------------------------------------------

    def send_hello(self) -> None:
        self._with_board(lambda board: board.send_hello())

    def send_inventory(self) -> None:
        self._with_board(lambda board: board.send_inventory())

    def send_error(self, code: int, text: str) -> None:
        """Report a board fault (ERROR frame), e.g. code 1 'antenna burn open circuit'."""
        self._with_board(lambda board: board.send_error(code, text))

    def send_message(self, msg: Message) -> None:
        """Send any message as the next frame (e.g. a duplicate TAG_IN from buggy firmware)."""
        self._with_board(lambda board: board.send_frame(msg.TYPE, msg.payload()))

    def inject_raw(self, data: bytes, timeout: float = 30.0) -> None:
        """Put raw bytes (line noise) on the wire between frames; return once they are on it.

        Noise comes from the wire, not from the firmware: it must not take the transmit
        FIFO's room from the frames made after it (a full FIFO drops frames, as on the
        board). So the bytes go in pieces the FIFO has room for, and the call waits until
        the host has taken each piece off the link (ProtocolError if it does not within
        `timeout` seconds: the host stopped reading).
        """
        piece_len = NOISE_PIECE
        deadline = time.monotonic() + timeout
        for start in range(0, len(data), piece_len):
            piece = bytes(data[start : start + piece_len])
            queued = False
            while True:
                with self._lock:
                    board = self._board
                    if board is None:
                        return  # unplugged: the noise has no wire to go on
                    fifo = board.fifo
                    if not queued:
                        queued = fifo.push_raw(piece)
                    elif all(chunk is not piece for chunk in fifo.chunks):
                        break  # on the wire
                self._wake()
                if time.monotonic() > deadline:
                    raise ProtocolError("the host did not read the line noise off the link")
                time.sleep(0.0005)

    def drop_next(self, n: int = 1) -> None:
        """The next `n` frames use up their sequence numbers but never reach the wire
        (heartbeats excepted: they come on the board's own schedule)."""
        with self._lock:
            self._faults.drop += n

    def corrupt_next(self) -> None:
        """The next frame (heartbeats excepted) goes out with a wrong CRC."""
        with self._lock:
            self._faults.corrupt += 1

    @property
    def frames_sent(self) -> int:
        with self._lock:
            board = self._board
            return self._counted[0] + (board.fifo.frames_sent if board else 0)

    @property
    def frames_dropped(self) -> int:
        with self._lock:
            board = self._board
            extra = 0
            if board is not None:
                fifo = board.fifo
                extra = fifo.frames_dropped
                extra += fifo.injected_drops if isinstance(fifo, FaultyFifo) else 0
            return self._counted[1] + extra

    # -- internals -------------------------------------------------------------------------

    @staticmethod
    def _uid(uid: str | bytes) -> bytes:
        if isinstance(uid, str):
            return uid_from_hex(uid)
        check_uid(uid)
        return bytes(uid)

    def _index(self, name: str) -> int:
        if name not in self._fields:
            raise ValueError(f"unknown antenna {name!r}; this board has {list(self._fields)}")
        return self.antennas.index(name)

    def _ready_board(self) -> _SimBoard | None:
        """The running firmware, past its power-up read (held lock)."""
        board = self._board
        if board is not None and not board.booted:
            board.boot_scan()
        return board

    def _scan_until(self, board: Board, index: int, done: Callable[[], bool]) -> bool:
        """Run the firmware's scan of one antenna until `done` (a few reads at most)."""
        for _ in range(self.debounce_out + 3):
            board.scan(index)
            if done():
                board.transmit()
                return True
        board.transmit()
        return False

    def _with_board(self, action: Callable[[_SimBoard], object]) -> None:
        with self._lock:
            board = self._board
            if board is not None:
                action(board)
        self._wake()

    def _wake(self) -> None:
        if self._wake_w >= 0:
            with contextlib.suppress(OSError):  # already awake (pipe full), or stopping
                os.write(self._wake_w, b"\0")

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                board = self._board
                if board is None:
                    return
                try:
                    wait_ms = board.step()
                except Exception as exc:  # a firmware bug: the board's watchdog reboots it
                    log.exception("reader board firmware failed; rebooting it")
                    self.crashes.append(f"{type(exc).__name__}: {exc}")
                    self._boot()
                    continue
                pending = board.fifo.size > 0
            poller = select.poll()  # not select.select: a room of tables passes fd 1023
            poller.register(self._master, select.POLLIN | (select.POLLOUT if pending else 0))
            poller.register(self._wake_r, select.POLLIN)
            readable = {fd for fd, _mask in poller.poll(wait_ms)}
            if self._wake_r in readable:
                os.read(self._wake_r, 4096)
