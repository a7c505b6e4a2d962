"""The simulated board around the real firmware: its clock, its USB link on a pseudo-terminal,
and a transmit FIFO that can lose or damage frames on request (fault injection)."""

from __future__ import annotations

import os
import time

from firmware import protocol
from firmware.board import TxFifo
from firmware.hal import Clock, Link
from firmware_sim.pn5180_sim import TICKS_HALF, TICKS_MASK, TICKS_PERIOD


class SimClock(Clock):
    """Real time with MicroPython's ticks: they wrap at 2**30, here two seconds after boot,
    so every simulated board exercises the firmware's wrap handling."""

    def __init__(self, wrap_after_ms: int = 2000) -> None:
        now = time.monotonic()
        self._ms_offset = TICKS_PERIOD - wrap_after_ms - int(now * 1000)
        self._us_offset = TICKS_PERIOD - wrap_after_ms * 1000 - int(now * 1_000_000)

    def ticks_ms(self) -> int:
        return (int(time.monotonic() * 1000) + self._ms_offset) & TICKS_MASK

    def ticks_us(self) -> int:
        return (int(time.monotonic() * 1_000_000) + self._us_offset) & TICKS_MASK

    def ticks_diff(self, new: int, old: int) -> int:
        return ((new - old + TICKS_HALF) & TICKS_MASK) - TICKS_HALF

    def sleep_us(self, us: int) -> None:
        time.sleep(us / 1_000_000)

    def sleep_ms(self, ms: int) -> None:
        time.sleep(ms / 1000)


class PtyLink(Link):
    """The board's USB CDC port: the master side of a pty, never blocking."""

    def __init__(self, master: int) -> None:
        self.master = master

    def read(self) -> bytes | None:
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, OSError):
            return None

    def write(self, data: bytes) -> int:
        try:
            return os.write(self.master, data)
        except (BlockingIOError, OSError):
            return 0  # the pty buffer is full: the host is not reading


TX_CHUNK = 4096  # whole frames to the pty (a port opening flushes whole frames, not halves)


class Faults:
    """Frames to lose or damage between the firmware and the wire."""

    def __init__(self) -> None:
        self.drop = 0
        self.corrupt = 0


class FaultyFifo(TxFifo):
    """The firmware's transmit FIFO, with fault injection: a dropped frame used up its
    sequence number but never reaches the wire; a corrupted one goes out with a bad CRC.

    HEARTBEATs, which the board sends on its own clock, are never the frame chosen: the
    fault falls on the next frame the test itself caused (a report, a HELLO, an ERROR...).
    """

    def __init__(self, limit: int, faults: Faults) -> None:
        super().__init__(limit, chunk=TX_CHUNK)
        self.faults = faults
        self.injected_drops = 0

    def push_frame(self, frame: bytes) -> bool:
        if frame[5] == protocol.HEARTBEAT:
            return super().push_frame(frame)
        if self.faults.drop:
            self.faults.drop -= 1
            self.injected_drops += 1
            return False
        if self.faults.corrupt:
            self.faults.corrupt -= 1
            frame = frame[:-1] + bytes([frame[-1] ^ 0xFF])
        return super().push_frame(frame)
