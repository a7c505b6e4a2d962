"""A reader board on modelled time: the real firmware (its loop, schedule, scan and PN5180
driver) whose clock is the simulated front-ends' clock, so every read takes what the RF and
the chip take on a board (firmware_sim/pn5180_sim.py), plus, if given, the interpreter's own
time per SPI transaction. Tags come and go at chosen moments, even in the middle of a read;
every frame the board sends is kept with the moment it went out.

For the schedule's tests and bench/reader_cycle.py. This file also runs under MicroPython
(the WebAssembly check), so it keeps to the subset firmware/protocol.py describes.
"""

from firmware import protocol
from firmware.board import Board, TxFifo
from firmware.hal import Link
from firmware.pn5180 import PN5180
from firmware.scanner import Antenna, Report, Scanner
from firmware_sim.pn5180_sim import SimBus, SimPN5180, VirtualClock


class CostBus(SimBus):
    """The simulated bus; each SPI transaction first costs `cpu_us` of the firmware's own
    time (a wait for BUSY or an interrupt absorbs it, as on the board), and lets the moves
    due by then happen."""

    def __init__(self, frontends: list[SimPN5180], clock: VirtualClock, cpu_us: float) -> None:
        super().__init__(frontends)
        self.clock = clock
        self.cpu_us = cpu_us
        # (at_us, order, +1/-1, the antenna's front-ends, uid): a tag arrives under the
        # first of them, leaves whichever holds it
        self.moves: list[tuple[float, int, int, list[int], bytes]] = []
        self.transactions = 0

    def due(self) -> None:
        """The moves whose time has come."""
        moves = self.moves
        now = self.clock.now
        while moves and moves[0][0] <= now:
            _at, _order, sign, channels, uid = moves.pop(0)
            if sign > 0:
                self.frontends[channels[0]].place(uid)
            else:
                for channel in channels:
                    self.frontends[channel].remove(uid)

    def select(self, channel: int) -> None:
        self.transactions += 1
        self.clock.advance(self.cpu_us)
        self.due()
        super().select(channel)


class Wire(Link):
    """The USB link: frames out, each with the modelled time (us) it went; host frames in."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.reader = protocol.FrameReader()
        self.frames: list[tuple[float, int, bytes]] = []  # (at_us, type, payload)
        self.inbox: list[tuple[float, bytes]] = []  # (deliver at us, bytes)

    def read(self) -> bytes | None:
        now = self.clock.now
        out = b""
        while self.inbox and self.inbox[0][0] <= now:
            out += self.inbox.pop(0)[1]
        return out

    def write(self, data: bytes) -> int:
        now = self.clock.now
        for _seq, msg_type, payload, _gap in self.reader.feed(data):
            self.frames.append((now, msg_type, payload))
        return len(data)


class CycleScanner(Scanner):
    """The scan of a board before protocol version 4: a read's reports go out when the
    read is whole."""

    def __init__(self, antennas: list[Antenna], debounce_out: int) -> None:
        super().__init__(antennas, debounce_out=debounce_out)
        self.held: list[list[Report]] = [[] for _ in antennas]

    def advance(self, index: int, now_ms: int) -> tuple[list[Report], list[bytes], bool]:
        reports, refused, done = super().advance(index, now_ms)
        held = self.held[index]
        held.extend(reports)
        if not done:
            return [], refused, False
        self.held[index] = []
        return held, refused, True


class CycleBoard(Board):
    """A board before protocol version 4 (the baseline): every antenna in turn, whatever
    the host says, a missed tag confirmed at its antenna's next turn."""

    def pick(self, now: int) -> tuple[int, bool]:
        index = self.next_antenna
        if not self.scanner.in_progress(index):
            self.next_antenna = (index + 1) % len(self.names)
        return index, False


class ModelledBoard:
    """One board: `layout` is [(antenna name, front-ends)], each front-end simulated; with
    `cycle`, the board as it read before protocol version 4 (CycleBoard)."""

    def __init__(
        self,
        layout: list[tuple[str, int]],
        kind: str = "card",
        protocols: tuple[str, ...] = ("iso15693", "iso14443a"),
        cpu_us: float = 0.0,
        debounce_out: int = 2,
        confirm_ms: int = 40,
        background_ms: int = 500,
        slice_ms: int = 12,
        start_us: float = 0.0,
        full_ms: int = 5000,
        recheck_ms: int = -1,
        cycle: bool = False,
    ) -> None:
        self.clock = VirtualClock(int(start_us))
        count = 0
        for _name, frontends in layout:
            count += frontends
        self.sims = [SimPN5180(self.clock) for _ in range(count)]
        self.bus = CostBus(self.sims, self.clock, cpu_us)
        self.names = [name for name, _f in layout]
        self.channels: list[list[int]] = []
        antennas = []
        channel = 0
        for name, frontends in layout:
            chips = [PN5180(self.bus, channel + i, self.clock) for i in range(frontends)]
            self.channels.append([channel + i for i in range(frontends)])
            antennas.append(Antenna(name, chips, protocols))
            channel += frontends
        self.wire = Wire(self.clock)
        scanner: Scanner
        if cycle:  # as boards before protocol version 4 read
            scanner = CycleScanner(antennas, debounce_out)
        else:
            scanner = Scanner(
                antennas,
                debounce_out=debounce_out,
                confirm_ms=confirm_ms,
                recheck_ms=2 * background_ms if recheck_ms < 0 else recheck_ms,
                full_ms=full_ms,
            )
        make = CycleBoard if cycle else Board
        self.board = make(
            scanner,
            self.wire,
            self.clock,
            kind=kind,
            heartbeat_ms=1000,
            inventory_ms=3600000,
            fifo=TxFifo(1 << 20),
            background_ms=background_ms,
            slice_ms=slice_ms,
        )
        self.writer = protocol.FrameWriter()
        self.spread = [0 for _ in layout]  # the next front-end of each antenna to get a tag

    # -- the table ---------------------------------------------------------------------

    def now_us(self) -> float:
        return self.clock.now

    def move(self, at_us: float, name: str, uid: bytes, arrive: bool) -> None:
        """A tag arrives at (or leaves) antenna `name` at modelled time `at_us`; on an
        antenna of several front-ends, under one of them (taken in turn)."""
        index = self.names.index(name)
        channels = self.channels[index]
        if arrive:
            channels = [channels[self.spread[index] % len(channels)]]
            self.spread[index] += 1
        moves = self.bus.moves
        moves.append((at_us, len(moves), 1 if arrive else -1, channels, uid))
        moves.sort(key=lambda move: (move[0], move[1]))

    def lay(self, name: str, uids: list[bytes]) -> None:
        """Tags already on antenna `name` (before the board starts)."""
        for uid in uids:
            self.move(self.clock.now, name, uid, True)
        self.bus.due()

    def focus(self, names: list[str], delay_us: float = 1000.0, lease_ms: int = 0) -> None:
        """The host's FOCUS, reaching the board `delay_us` from now."""
        mask = 0
        for name in names:
            if name in self.names:
                mask |= 1 << self.names.index(name)
        frame = self.writer.encode(protocol.FOCUS, protocol.focus_payload(mask, lease_ms))
        self.wire.inbox.append((self.clock.now + delay_us, frame))

    # -- running -----------------------------------------------------------------------

    def boot(self) -> None:
        """Power-up: the first read of every antenna (silent)."""
        while not self.board.booted:
            self.board.step()

    def run_until(self, at_us: float) -> None:
        """Run the firmware until modelled time `at_us`."""
        board = self.board
        clock = self.clock
        while clock.now < at_us:
            wait = board.step()
            self.bus.due()
            if wait > 0 and clock.now < at_us:
                clock.advance(min(wait * 1000.0, at_us - clock.now))

    def reports(self) -> list[tuple[float, int, str, bytes]]:
        """(sent at us, TAG_IN or TAG_OUT, antenna name, UID) of every tag report so far."""
        out = []
        for at, msg_type, payload in self.wire.frames:
            if msg_type == protocol.TAG_IN or msg_type == protocol.TAG_OUT:
                antenna, uid, _ms = protocol.parse_tag(payload)
                out.append((at, msg_type, self.names[antenna], uid))
        return out
