"""RFID reader board firmware simulator: speaks the reader protocol on a real pseudo-terminal."""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
import tty
from collections import deque
from collections.abc import Sequence
from pathlib import Path

from controller.errors import ProtocolError
from drivers.reader.framing import MAX_PAYLOAD, FrameDecoder, FrameEncoder
from drivers.reader.messages import (
    ERR_RX_CRC,
    ERR_TAG_LIMIT,
    ERR_TX_OVERFLOW,
    ERR_UNKNOWN_TYPE,
    BoardError,
    Heartbeat,
    Hello,
    HelloRequest,
    Inventory,
    InventoryRequest,
    Message,
    TagIn,
    TagOut,
    check_uid,
    uid_from_hex,
    uid_hex,
)

TX_QUEUE_LIMIT = 64 * 1024  # bytes waiting for the host; beyond this new frames are dropped


class ReaderBoardSim:
    """A card or chip reader board on a pty whose slave path pyserial opens like /dev/ttyUSB0.

    Tag changes emit TAG_IN / TAG_OUT; HELLO is sent at start and on request, INVENTORY every
    `inventory_period` seconds and on request, HEARTBEAT every `heartbeat_period` seconds.
    Frames wait in a bounded transmit queue written without blocking by the board thread, so a
    host that is not reading never blocks the caller (an overflow drops frames, like a FIFO).

    With `link`, a symlink at that path follows the board's pty the way udev's
    `/dev/tablectl-cards` follows the USB board: `unplug()` removes it and closes the pty,
    `plug()` boots the board again on a new pty and puts the link back. `restart()` is a
    reboot without unplugging (watchdog, brown-out). The tags on the antennas are physical:
    they stay where they are through all of these, and may be moved meanwhile.
    """

    def __init__(
        self,
        antennas: Sequence[str],
        kind: str = "card",
        firmware: str = "tablesim-1.0",
        inventory_period: float = 5.0,
        heartbeat_period: float = 1.0,
        link: str | Path | None = None,
    ) -> None:
        self._hello = Hello(firmware, kind, tuple(antennas))  # validates names and kind
        if len(set(antennas)) != len(antennas):
            raise ValueError(f"duplicate antenna names in {list(antennas)}")
        self.inventory_period = inventory_period
        self.heartbeat_period = heartbeat_period
        self._tags: dict[str, dict[bytes, None]] = {name: {} for name in antennas}
        self._lock = threading.Lock()
        self._encoder = FrameEncoder()
        self._tx: deque[bytes] = deque()
        self._tx_bytes = 0
        self._drop = 0
        self._corrupt = 0
        self._overflowed = 0  # frames lost to a full FIFO, reported once it drains
        self._rx = FrameDecoder()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._master = self._slave = -1
        self._wake_r = self._wake_w = -1
        self._started = 0.0
        self.link = Path(link) if link is not None else None
        self.boots = 0
        self.path = ""
        self.frames_sent = 0
        self.frames_dropped = 0
        self.requests: list[str] = []

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Power up: open a pty, queue HELLO (sequence 0) and start the board thread."""
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
        """Firmware start: fresh sequence numbers, empty FIFOs, uptime 0, HELLO first."""
        with self._lock:
            self._encoder = FrameEncoder()
            self._rx = FrameDecoder()
            self._tx.clear()
            self._tx_bytes = 0
            self._drop = self._corrupt = self._overflowed = 0
            self._started = time.monotonic()
            self.boots += 1
        self.send_hello()

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
        """Stop the thread and close the pty: to the host this is the board being unplugged."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        if self.link is not None:
            with contextlib.suppress(FileNotFoundError):
                self.link.unlink()
        self._stop.set()
        self._wake()
        thread.join(timeout=5.0)
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

    def place(self, antenna: str, uid: str | bytes) -> bool:
        """A tag enters `antenna`'s field: TAG_IN. False if it was already there."""
        raw = self._uid(uid)
        with self._lock:
            tags = self._antenna(antenna)
            if raw in tags:
                return False
            if len(self._inventory_locked(extra=raw).payload()) > MAX_PAYLOAD:
                self._send_locked(BoardError(ERR_TAG_LIMIT, f"tag limit reached on {antenna}"))
                raise ProtocolError("inventory would exceed the maximum payload")
            tags[raw] = None
            self._send_locked(TagIn(self.antennas.index(antenna), raw))
        return True

    def remove(self, antenna: str, uid: str | bytes) -> bool:
        """A tag leaves `antenna`'s field: TAG_OUT. False if it was not there."""
        raw = self._uid(uid)
        with self._lock:
            tags = self._antenna(antenna)
            if raw not in tags:
                return False
            del tags[raw]
            self._send_locked(TagOut(self.antennas.index(antenna), raw))
        return True

    def move(self, uid: str | bytes, source: str, target: str) -> None:
        """A tag slides from one antenna to another: TAG_OUT then TAG_IN."""
        self.remove(source, uid)
        self.place(target, uid)

    def contents(self) -> dict[str, list[str]]:
        """Every antenna's tags (uppercase hex), in arrival order."""
        with self._lock:
            return {name: [uid_hex(uid) for uid in tags] for name, tags in self._tags.items()}

    # -- explicit sends and fault injection ------------------------------------------------

    def send_hello(self) -> None:
        self._send(self._hello)

    def send_inventory(self) -> None:
        with self._lock:
            self._send_locked(self._inventory_locked())

    def send_error(self, code: int, text: str) -> None:
        """Report a board fault (ERROR frame), e.g. code 1 'antenna burn open circuit'."""
        self._send(BoardError(code, text))

    def send_message(self, msg: Message) -> None:
        """Send any message as the next frame (e.g. a duplicate TAG_IN from buggy firmware)."""
        self._send(msg)

    def inject_raw(self, data: bytes) -> None:
        """Put raw bytes (line noise) on the wire between frames."""
        with self._lock:
            self._queue_locked(bytes(data))
        self._wake()

    def drop_next(self, n: int = 1) -> None:
        """The next `n` frames use up their sequence numbers but never reach the wire."""
        with self._lock:
            self._drop += n

    def corrupt_next(self) -> None:
        """The next frame goes out with a wrong CRC."""
        with self._lock:
            self._corrupt += 1

    # -- internals -------------------------------------------------------------------------

    @staticmethod
    def _uid(uid: str | bytes) -> bytes:
        if isinstance(uid, str):
            return uid_from_hex(uid)
        check_uid(uid)
        return bytes(uid)

    def _antenna(self, name: str) -> dict[bytes, None]:
        if name not in self._tags:
            raise ValueError(f"unknown antenna {name!r}; this board has {list(self._tags)}")
        return self._tags[name]

    def _inventory_locked(self, extra: bytes | None = None) -> Inventory:
        lists = [tuple(tags) for tags in self._tags.values()]
        if extra is not None:
            lists[0] = (*lists[0], extra)
        return Inventory(tuple(lists))

    def _send(self, msg: Message) -> None:
        with self._lock:
            self._send_locked(msg)

    def _send_locked(self, msg: Message) -> None:
        if self._drop:
            self._drop -= 1
            self._encoder.skip()
            self.frames_dropped += 1
            return
        frame = self._encoder.encode(msg)
        if self._corrupt:
            self._corrupt -= 1
            frame = frame[:-1] + bytes([frame[-1] ^ 0xFF])
        if self._queue_locked(frame):
            self.frames_sent += 1
        else:
            self.frames_dropped += 1
            self._overflowed += 1
        self._wake()

    def _queue_locked(self, data: bytes) -> bool:
        if self._tx_bytes + len(data) > TX_QUEUE_LIMIT:
            return False
        self._tx.append(data)
        self._tx_bytes += len(data)
        return True

    def _wake(self) -> None:
        if self._wake_w >= 0:
            with contextlib.suppress(OSError):  # already awake (pipe full), or stopping
                os.write(self._wake_w, b"\0")

    def _run(self) -> None:
        next_beat = self._started + self.heartbeat_period
        next_inventory = self._started + self.inventory_period
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= next_beat:
                uptime = int((now - self._started) * 1000) & 0xFFFFFFFF
                self._send(Heartbeat(uptime))
                next_beat = now + self.heartbeat_period
            if now >= next_inventory:
                self.send_inventory()
                next_inventory = now + self.inventory_period
            with self._lock:
                pending = bool(self._tx)
            timeout = max(0.0, min(next_beat, next_inventory) - time.monotonic())
            readable, writable, _ = select.select(
                [self._master, self._wake_r], [self._master] if pending else [], [], timeout
            )
            if self._wake_r in readable:
                os.read(self._wake_r, 4096)
            if self._master in readable:
                self._receive()
            if self._master in writable:
                self._transmit()

    def _receive(self) -> None:
        try:
            data = os.read(self._master, 4096)
        except (BlockingIOError, OSError):
            return
        crc_before = self._rx.crc_errors
        malformed_before = self._rx.malformed
        for frame in self._rx.feed(data):
            if isinstance(frame.msg, InventoryRequest):
                self.requests.append("inventory")
                self.send_inventory()
            elif isinstance(frame.msg, HelloRequest):
                self.requests.append("hello")
                self.send_hello()
            else:
                self._send(BoardError(ERR_UNKNOWN_TYPE, f"unexpected 0x{frame.msg.TYPE:02X}"))
        if self._rx.crc_errors > crc_before:
            self._send(BoardError(ERR_RX_CRC, "bad CRC on a host frame"))
        if self._rx.malformed > malformed_before:
            self._send(BoardError(ERR_UNKNOWN_TYPE, self._rx.last_error or "malformed frame"))

    def _transmit(self) -> None:
        with self._lock:
            while self._tx:
                chunk = self._tx[0]
                try:
                    written = os.write(self._master, chunk)
                except (BlockingIOError, OSError):
                    return  # pty buffer full: the host is not reading; try again later
                self._tx_bytes -= written
                if written < len(chunk):
                    self._tx[0] = chunk[written:]
                    return
                self._tx.popleft()
            if self._overflowed:
                lost, self._overflowed = self._overflowed, 0
                self._send_locked(BoardError(ERR_TX_OVERFLOW, f"{lost} frames dropped"))
