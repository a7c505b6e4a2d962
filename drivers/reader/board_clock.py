"""A reader board's clock on the host's: when a live tag report was read, in host time."""

from __future__ import annotations

WRAP = 1 << 32  # board_ms counts milliseconds modulo 2**32 (docs/reader-protocol.md)

#: How fast the estimated offset may creep up between two reports (seconds per second):
#: a board crystal slower than the host's (the Pico's is within 50 ppm) moves the true
#: offset up; 200 ppm follows it with room to spare while a late report moves it by
#: 0.2 ms per second at most.
CREEP = 200e-6


class BoardClock:
    """Maps the `board_ms` of a board's live reports onto the host's clock.

    Each report says when the board read the tag, on the board's clock; the host decoded
    it some time later (USB, the driver's thread, a busy host: from under a millisecond to
    tens of milliseconds). `offset` is the smallest (host time - board time) seen, the
    report that came through fastest: each report is then dated at its board time plus
    that offset, i.e. when it was read as nearly as the host can tell, however late it was
    decoded, and never later than it was decoded. The offset creeps up by at most CREEP
    between reports, so a board clock slower than the host's is followed, and starts
    afresh when the board restarts (its time goes back) or the link is reopened (`reset`).
    """

    def __init__(self) -> None:
        self._offset: float | None = None
        self._last_raw = 0
        self._turns = 0  # how many times board_ms wrapped since the reset
        self._seen = 0.0  # host time of the last report

    def reset(self) -> None:
        """The board restarted or its link was reopened: its times start afresh."""
        self._offset = None
        self._last_raw = 0
        self._turns = 0

    def host_time(self, board_ms: int, received: float) -> float:
        """When the report stamped `board_ms` and decoded at `received` (host time) was made."""
        raw = board_ms % WRAP
        if self._offset is not None and raw < self._last_raw:
            if self._last_raw - raw > WRAP // 2:
                self._turns += 1  # wrapped (after 49.7 days up)
            else:
                self.reset()  # time went back: the board restarted
        self._last_raw = raw
        board = (self._turns * WRAP + raw) / 1000.0
        sample = received - board
        if self._offset is None:
            self._offset = sample
        else:
            crept = self._offset + max(0.0, received - self._seen) * CREEP
            self._offset = min(crept, sample)
        self._seen = received
        return min(received, board + self._offset)
