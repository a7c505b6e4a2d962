"""A reader board whose firmware reads its antennas' fields directly (no simulated radio)."""

from __future__ import annotations

from firmware.scanner import Antenna
from firmware_sim.reader_board import ReaderBoardSim


class _FieldAntenna(Antenna):
    """An antenna read straight from the simulated field: the tags lying on it, in the
    order they arrived (what a perfect radio would read)."""

    def __init__(self, name: str, field: dict[bytes, None]) -> None:
        super().__init__(name, [], ())
        self._field = field

    def read(self) -> list[bytes]:
        return list(self._field)


class FieldBoardSim(ReaderBoardSim):
    """The reader board of a room of simulated tables (`tablectl sim --tables N`).

    The same firmware as `ReaderBoardSim` (its scan loop, debounce, reports, inventories,
    heartbeats, FIFO and framing, on a pty) with one part left out: each antenna reads the
    tags lying in its field directly, instead of through the PN5180 driver talking to a
    simulated PN5180 over a simulated SPI bus. That radio is three quarters of a simulated
    table's CPU, and a room's load test does not need it; the radio itself is what the
    one-table sim and the firmware tests exercise.
    """

    def _boot(self) -> None:
        super()._boot()
        with self._lock:
            board = self._board
            if board is not None:
                board.scanner.antennas = [
                    _FieldAntenna(name, self._fields[name]) for name in self.antennas
                ]
