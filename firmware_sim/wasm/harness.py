"""The reader board under MicroPython's WebAssembly port: the real firmware (protocol loop,
scan, PN5180 driver) on simulated PN5180s, its USB link bridged to Node's stdio.

Runs under MicroPython only (board.mjs loads it); `hostio` is the JavaScript side.
"""

import hostio  # type: ignore[import-not-found]

from firmware import pn5180 as chip
from firmware.board import Board, TxFifo
from firmware.clock import TicksClock
from firmware.hal import Link
from firmware.pn5180 import PN5180
from firmware.scanner import Antenna, Scanner
from firmware_sim.pn5180_sim import SimBus, SimPN5180, VirtualClock


class JsLink(Link):
    """Bytes from and to Node's stdio, as hex strings across the JavaScript boundary."""

    def read(self) -> bytes | None:
        text = hostio.read()
        return bytes.fromhex(text) if text else None

    def write(self, data: bytes) -> int:
        return int(hostio.write(bytes(data).hex()))


class Harness:
    """One board: antennas with a simulated front-end each, the firmware's Board on top."""

    def __init__(self, names: list[str], kind: str, heartbeat_ms: int, inventory_ms: int) -> None:
        self.names = names
        self.kind = kind
        self.heartbeat_ms = heartbeat_ms
        self.inventory_ms = inventory_ms
        self.rf_clock = VirtualClock()
        self.frontends = [SimPN5180(self.rf_clock) for _ in names]
        self.bus = SimBus(self.frontends)
        self.board = self.boot()

    def boot(self) -> Board:
        self.bus.reset()
        protocols = (chip.ISO14443A, chip.ISO15693)
        antennas = []
        for i, name in enumerate(self.names):
            antennas.append(Antenna(name, [PN5180(self.bus, i, self.rf_clock)], protocols))
        return Board(
            Scanner(antennas),
            JsLink(),
            TicksClock(),
            kind=self.kind,
            firmware="tablefw-wasm",
            heartbeat_ms=self.heartbeat_ms,
            inventory_ms=self.inventory_ms,
            fifo=TxFifo(16384),
        )

    def step(self) -> int:
        return self.board.step()

    def restart(self) -> None:
        self.board = self.boot()

    def _scan(self, index: int, uid: bytes, present: bool) -> None:
        board = self.board
        if not board.booted:
            board.boot_scan()
        for _ in range(5):
            board.scan(index)
            if (uid in board.scanner.present[index]) == present:
                break
        board.transmit()

    def place(self, name: str, uid_hex: str) -> None:
        index = self.names.index(name)
        uid = bytes.fromhex(uid_hex)
        if not self.board.booted:
            self.board.boot_scan()
        self.frontends[index].place(uid)
        self._scan(index, uid, True)

    def remove(self, name: str, uid_hex: str) -> None:
        index = self.names.index(name)
        uid = bytes.fromhex(uid_hex)
        self.frontends[index].remove(uid)
        self._scan(index, uid, False)

    def drop(self, name: str, uid_hex: str) -> None:
        """A tag let go on an antenna: the firmware's own schedule finds it."""
        self.frontends[self.names.index(name)].place(bytes.fromhex(uid_hex))

    def focused(self) -> str:
        board = self.board
        return ",".join(board.names[i] for i in board.focused()) or "-"


harness = None


def start(names: str, kind: str, heartbeat_ms: int, inventory_ms: int) -> None:
    global harness
    harness = Harness(names.split(","), kind, heartbeat_ms, inventory_ms)


def step() -> int:
    assert harness is not None
    return harness.step()


def command(line: str) -> str:
    """A control line from the test: place/remove/drop ANTENNA UID, focused, cut, restart,
    uptime."""
    assert harness is not None
    words = line.split()
    if not words:
        return ""
    if words[0] == "place" and len(words) == 3:
        harness.place(words[1], words[2])
    elif words[0] == "remove" and len(words) == 3:
        harness.remove(words[1], words[2])
    elif words[0] == "drop" and len(words) == 3:
        harness.drop(words[1], words[2])
    elif words[0] == "focused":
        return harness.focused()
    elif words[0] == "cut":
        return str(harness.board.cut_frames)
    elif words[0] == "restart":
        harness.restart()
    elif words[0] == "uptime":
        return str(harness.board.now_ms())
    else:
        return "unknown command " + line
    return "ok"
