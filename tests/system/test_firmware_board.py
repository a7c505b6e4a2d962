"""The firmware's main loop and antenna scan: boot, debounce, board time across the tick wrap,
faults, the tag limit; alone and on the simulated board read by the host driver."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from drivers.reader import messages as m
from drivers.reader.driver import ReaderDriver
from drivers.reader.framing import Frame, FrameDecoder, encode
from firmware import protocol
from firmware.board import Board, TxFifo
from firmware.hal import Clock, HardwareError, Link
from firmware.pn5180 import PN5180
from firmware.scanner import Antenna, Scanner
from firmware_sim.pn5180_sim import TICKS_HALF, TICKS_MASK, TICKS_PERIOD
from firmware_sim.reader_board import ReaderBoardSim
from kernel.errors import ProtocolError
from kernel.inputs import TagIn, TagOut

pytestmark = pytest.mark.timeout(60)

A, B, C = bytes.fromhex("04A1B2C3D4E5F6"), bytes.fromhex("E004015012345678"), b"\xde\xad\xbe\xef"


class FakeClock(Clock):
    """Milliseconds set by the test, with MicroPython's wrapping ticks."""

    def __init__(self, start_ms: int) -> None:
        self.ms = start_ms

    def ticks_ms(self) -> int:
        return self.ms & TICKS_MASK

    def ticks_us(self) -> int:
        return (self.ms * 1000) & TICKS_MASK

    def ticks_diff(self, new: int, old: int) -> int:
        return ((new - old + TICKS_HALF) & TICKS_MASK) - TICKS_HALF

    def sleep_us(self, us: int) -> None:
        self.ms += us // 1000

    def sleep_ms(self, ms: int) -> None:
        self.ms += ms


class ScriptedAntenna(Antenna):
    """An antenna whose reads the test scripts (None: the front-end fails)."""

    def __init__(self, name: str) -> None:
        super().__init__(name, [], ())
        self.reads: list[list[bytes] | None] = []
        self.now: list[bytes] = []

    def read(self) -> list[bytes]:
        if self.reads:
            self.now_read = self.reads.pop(0)
        else:
            self.now_read = list(self.now)
        if self.now_read is None:
            raise HardwareError("front-end 3: BUSY stuck high")
        return list(self.now_read)


class Wire(Link):
    """The host end of the link: collects what the board sends, feeds it host frames."""

    def __init__(self) -> None:
        self.sent = bytearray()
        self.inbox = bytearray()

    def read(self) -> bytes | None:
        data, self.inbox = bytes(self.inbox), bytearray()
        return data

    def write(self, data: bytes) -> int:
        self.sent += data
        return len(data)

    def frames(self) -> list[Frame]:
        decoder = FrameDecoder()
        return decoder.feed(bytes(self.sent))


def make_board(
    names: list[str], clock: Clock, debounce_out: int = 2
) -> tuple[Board, list[ScriptedAntenna], Wire]:
    antennas = [ScriptedAntenna(name) for name in names]
    wire = Wire()
    scanner = Scanner(list(antennas), debounce_out=debounce_out)
    board = Board(scanner, wire, clock, kind="chip", heartbeat_ms=1000, inventory_ms=60000)
    return board, antennas, wire


def test_boot_says_hello_reads_silently_and_answers_the_inventory_it_was_asked() -> None:
    clock = FakeClock(0)
    board, antennas, wire = make_board(["bet1", "pot"], clock)
    antennas[1].now = [B]  # on the antenna at power-up
    wire.inbox += encode(m.InventoryRequest(), 0)
    board.step()
    frames = wire.frames()
    assert frames[0].seq == 0
    assert frames[0].msg == m.Hello("tablefw-1.1", "chip", ("bet1", "pot"), protocol=4)
    assert [type(f.msg) for f in frames] == [m.Hello, m.Inventory]  # no TAG_IN at boot
    inventory = frames[1].msg
    assert isinstance(inventory, m.Inventory)
    assert inventory.antennas == ((), (B,)) and inventory.board_ms == 0


def test_debounce_a_tag_missed_once_stays_in_missed_twice_goes_out_at_the_first_miss() -> None:
    clock = FakeClock(0)
    board, antennas, wire = make_board(["seat1"], clock)
    board.step()  # boot
    antennas[0].reads = [[A], [], [A], [], []]
    times = []
    for _ in range(5):
        clock.ms += 40
        times.append(clock.ms)
        board.scan(0)
    board.transmit()
    reports = [f.msg for f in wire.frames() if isinstance(f.msg, m.TagIn | m.TagOut)]
    assert reports == [
        m.TagIn(0, A, board_ms=times[0]),  # the read that first saw it
        m.TagOut(0, A, board_ms=times[3]),  # the first of the two reads that missed it
    ]


def test_arrivals_say_when_each_tag_arrived_newest_first_and_not_those_found_at_power_up() -> None:
    clock = FakeClock(0)
    board, antennas, wire = make_board(["bet1", "pot"], clock, debounce_out=1)
    antennas[1].now = [B]  # on the antenna at power-up: its arrival is unknown
    wire.inbox += encode(m.ArrivalsRequest(), 0)
    board.step()  # boot: the request is answered once the antennas were read
    clock.ms += 40
    antennas[0].now = [A]
    board.scan(0)
    clock.ms += 40
    antennas[1].now = [B, C]
    board.scan(1)
    clock.ms += 40
    wire.inbox += encode(m.ArrivalsRequest(), 1) + encode(m.InventoryRequest(), 2)
    board.receive()
    board.transmit()
    answers = [f.msg for f in wire.frames() if isinstance(f.msg, m.Arrivals | m.Inventory)]
    assert answers == [
        m.Arrivals(0, ()),  # at power-up
        m.Arrivals(120, ((1, C, 80), (0, A, 40))),
        m.Inventory(((A,), (B, C)), 120),
    ]
    assert answers[1].ages() == {(1, C.hex().upper()): 40, (0, A.hex().upper()): 80}
    # the board time wraps at 2**32: an age is taken modulo 2**32
    assert m.Arrivals(5, ((0, A, 0xFFFFFFFE),)).ages() == {(0, A.hex().upper()): 7}


def test_board_time_runs_on_across_the_tick_wrap() -> None:
    clock = FakeClock(TICKS_PERIOD - 300)  # ticks_ms wraps 300 ms after boot
    board, antennas, wire = make_board(["seat1"], clock, debounce_out=1)
    board.step()
    antennas[0].now = [A]
    clock.ms += 200
    board.scan(0)
    antennas[0].now = []
    clock.ms += 250  # past the wrap: ticks_ms went back to a small number
    board.scan(0)
    clock.ms += 700
    board.timers()  # the heartbeat is due (1 s after boot)
    board.transmit()
    msgs = [f.msg for f in wire.frames()]
    tag_in, tag_out = (x for x in msgs if isinstance(x, m.TagIn | m.TagOut))
    (beat,) = (x for x in msgs if isinstance(x, m.Heartbeat))
    assert (tag_in.board_ms, tag_out.board_ms, beat.uptime_ms) == (200, 450, 1150)


def test_a_failed_read_is_reported_once_and_does_not_take_the_tags_away() -> None:
    clock = FakeClock(0)
    board, antennas, wire = make_board(["burn"], clock, debounce_out=1)
    board.step()
    antennas[0].now = [C]
    board.scan(0)
    antennas[0].reads = [None, None, None]
    for _ in range(3):
        board.scan(0)
    board.scan(0)  # back, and C is still there
    board.transmit()
    msgs = [f.msg for f in wire.frames()]
    errors = [x for x in msgs if isinstance(x, m.BoardError)]
    assert [(e.code, e.text) for e in errors] == [
        (m.ERR_ANTENNA_FAULT, "antenna burn: front-end 3: BUSY stuck high")
    ]
    assert [type(x) for x in msgs if isinstance(x, m.TagIn | m.TagOut)] == [m.TagIn]


def test_host_frames_bad_crc_unknown_type_and_payload_are_answered_with_errors() -> None:
    clock = FakeClock(0)
    board, _, wire = make_board(["seat1"], clock)
    board.step()
    bad = bytearray(encode(m.HelloRequest(), 0))
    bad[-1] ^= 0x55
    wire.inbox += bytes(bad) + protocol.encode_frame(1, 0x99, b"")
    wire.inbox += protocol.encode_frame(2, protocol.HELLO_REQUEST, b"x")
    wire.inbox += encode(m.HelloRequest(), 3)
    board.step()
    msgs = [f.msg for f in wire.frames()]
    codes = [x.code for x in msgs if isinstance(x, m.BoardError)]
    assert codes == [m.ERR_UNKNOWN_TYPE, m.ERR_UNKNOWN_TYPE, m.ERR_RX_CRC]
    assert sum(isinstance(x, m.Hello) for x in msgs) == 2  # power-up, and the good request


def test_a_full_fifo_drops_frames_and_says_how_many_once_drained() -> None:
    class Stuck(Wire):
        open = False

        def write(self, data: bytes) -> int:
            return super().write(data) if self.open else 0

    clock = FakeClock(0)
    antennas = [ScriptedAntenna("seat1")]
    wire = Stuck()
    board = Board(Scanner(list(antennas)), wire, clock, fifo=TxFifo(200))
    board.step()
    for i in range(20):
        antennas[0].now = [bytes([4, i, 0, 0, 0, 0, 0])]
        board.scan(0)
    assert board.fifo.frames_dropped > 0
    wire.open = True
    board.step()
    board.step()
    frames = wire.frames()
    error = [f.msg for f in frames if isinstance(f.msg, m.BoardError)][-1]
    dropped = board.fifo.frames_dropped
    assert (error.code, error.text) == (m.ERR_TX_OVERFLOW, f"{dropped} frames dropped")
    gaps = [f.gap for f in frames if f.gap]
    assert sum(gaps) == board.fifo.frames_dropped  # the host sees the very same loss


# -- the simulated board, read by the host driver ------------------------------------------

ANTENNAS = ["seat1", "seat2", "board", "burn", "muck"]


class Recorder:
    def __init__(self) -> None:
        self.log: list[object] = []
        self.cond = threading.Condition()

    def add(self, item: object) -> None:
        with self.cond:
            self.log.append(item)
            self.cond.notify_all()

    def alert(self, kind: str, message: str, details: dict[str, object]) -> None:
        self.add(("alert", kind, details))

    def wait(self, predicate: Callable[[], bool], timeout: float = 10) -> bool:
        with self.cond:
            return self.cond.wait_for(predicate, timeout)

    def reports(self) -> list[m.TagIn | m.TagOut]:
        with self.cond:
            frames = [x for x in self.log if isinstance(x, Frame)]
            return [f.msg for f in frames if isinstance(f.msg, m.TagIn | m.TagOut)]

    def moves(self) -> list[tuple[str, str, str | None]]:
        with self.cond:
            return [
                ("in" if isinstance(e, TagIn) else "out", e.antenna, e.uid)
                for e in self.log
                if isinstance(e, TagIn | TagOut)
            ]


@pytest.fixture
def sim_and_driver() -> Iterator[tuple[ReaderBoardSim, ReaderDriver, Recorder]]:
    rec = Recorder()
    with ReaderBoardSim(ANTENNAS, heartbeat_period=0.2, inventory_period=60) as board:
        driver = ReaderDriver(
            board.path, ANTENNAS, rec.add, rec.alert, time.monotonic, on_frame=rec.add
        )
        driver.start()
        try:
            assert driver.wait_synced(10)
            yield board, driver, rec
        finally:
            driver.stop()


def test_reports_carry_the_boards_own_time(
    sim_and_driver: tuple[ReaderBoardSim, ReaderDriver, Recorder],
) -> None:
    board, driver, rec = sim_and_driver
    board.place("seat1", A)
    time.sleep(0.15)
    board.place("board", B)  # an ISO 15693 tag: 8-byte UID
    board.move(A, "seat1", "muck")
    assert rec.wait(lambda: len(rec.reports()) == 4)
    reports = rec.reports()
    stamps = [r.board_ms for r in reports]
    assert None not in stamps
    assert stamps == sorted(stamps)  # type: ignore[type-var]
    assert stamps[1] - stamps[0] >= 150  # type: ignore[operator]
    assert rec.moves() == [
        ("in", "seat1", A.hex().upper()),
        ("in", "board", B.hex().upper()),
        ("out", "seat1", A.hex().upper()),
        ("in", "muck", A.hex().upper()),
    ]
    assert driver.hello is not None and driver.hello.protocol == protocol.PROTOCOL_VERSION


def test_a_broken_antenna_is_alerted_and_its_tags_stay(
    sim_and_driver: tuple[ReaderBoardSim, ReaderDriver, Recorder],
) -> None:
    board, driver, rec = sim_and_driver
    board.place("burn", C)
    board.break_antenna("burn")
    board.send_inventory()
    assert rec.wait(lambda: any(isinstance(i, tuple) and i[1] == "reader_error" for i in rec.log))
    details = next(i[2] for i in rec.log if isinstance(i, tuple) and i[1] == "reader_error")
    assert details["code"] == m.ERR_ANTENNA_FAULT and "antenna burn" in str(details["text"])
    assert driver.positions()["burn"] == [C.hex().upper()]  # not reported out
    board.break_antenna("burn", broken=False)
    assert board.remove("burn", C)
    assert rec.wait(lambda: ("out", "burn", C.hex().upper()) in rec.moves())


def test_the_tag_limit_refuses_the_tag_and_says_so() -> None:
    rec = Recorder()
    with ReaderBoardSim(ANTENNAS, heartbeat_period=0.2, inventory_period=60, max_tags=20) as board:
        driver = ReaderDriver(board.path, ANTENNAS, rec.add, rec.alert, time.monotonic)
        driver.start()
        try:
            assert driver.wait_synced(10)
            placed = 0
            with pytest.raises(ProtocolError):
                for i in range(30):
                    board.place("muck", bytes([0xE0, 4, 1, 0, 0, 0, i * 37 % 256, i]))
                    placed += 1
            assert placed == 20
            assert rec.wait(
                lambda: any(
                    isinstance(i, tuple)
                    and i[1] == "reader_error"
                    and i[2]["code"] == m.ERR_TAG_LIMIT
                    for i in rec.log
                )
            )
            assert len(board.contents()["muck"]) == placed
            assert rec.wait(lambda: len(driver.positions()["muck"]) == placed)
        finally:
            driver.stop()


def stack(count: int, seed: int) -> list[bytes]:
    """`count` ISO 15693 chips with random UIDs (E0 04 01 + 5 random bytes)."""
    import random

    rng = random.Random(seed)
    uids: dict[bytes, None] = {}
    while len(uids) < count:
        uids[bytes([0xE0, 4, 1, *(rng.randrange(256) for _ in range(5))])] = None
    return list(uids)


def test_a_pot_of_500_chips_is_read_and_paged_across_frames_to_the_host() -> None:
    """500 stacked chips on one antenna: the real firmware's anticollision reads them all
    (in steps, between which the board answers and beats), the host gets each one, and
    every inventory of them comes paged, joined by the driver into one snapshot."""
    chips = stack(500, 7)
    rec = Recorder()
    pot = ["bet1", "pot"]
    with ReaderBoardSim(
        pot, kind="chip", heartbeat_period=0.2, inventory_period=60, scan_pause_ms=5
    ) as board:
        driver = ReaderDriver(
            board.path, pot, rec.add, rec.alert, time.monotonic, on_frame=rec.add
        )
        driver.start()
        try:
            assert driver.wait_synced(10)
            for uid in chips:  # the dealer's whole pot at once: the board's own scan reads it
                board.place("pot", uid, wait=False)
            want = sorted(uid.hex().upper() for uid in chips)
            assert rec.wait(lambda: sorted(driver.positions()["pot"]) == want, timeout=60)
            assert sorted(u for d, a, u in rec.moves() if d == "in" and a == "pot") == want
            before = driver.counters()["inventories"]
            driver.request_inventory()
            assert rec.wait(lambda: driver.counters()["inventories"] > before, timeout=20)
            with rec.cond:
                pages = [f.msg for f in rec.log if isinstance(f, Frame)]
            pages = [p for p in pages if isinstance(p, m.InventoryPage)]
            assert len(pages) >= 5 and {p.pages for p in pages} == {len(pages)}
            assert all(len(p.payload()) <= protocol.MAX_PAYLOAD for p in pages)
            joined = m.InventoryPage.join(pages)
            assert sorted(uid.hex().upper() for uid in joined.antennas[1]) == want
            assert joined.antennas[0] == ()
            # the inventory changed nothing, nothing was lost on the way, nothing flickered
            assert sorted(driver.positions()["pot"]) == want
            counters = driver.counters()
            assert counters["seq_gaps"] == 0 and counters["malformed"] == 0
            assert not [u for d, _a, u in rec.moves() if d == "out"]
            assert not [i for i in rec.log if isinstance(i, tuple) and i[0] == "alert"]
            # A reboot: the power-up read takes the 500 again, the host resyncs from pages.
            mark = len(rec.moves())
            board.restart()
            assert rec.wait(lambda: driver.counters()["restarts"] == 1, timeout=20)
            assert rec.wait(lambda: driver.counters()["inventories"] > before + 1, timeout=60)
            assert sorted(driver.positions()["pot"]) == want and len(rec.moves()) == mark
        finally:
            driver.stop()


def test_the_simulated_board_runs_the_real_pn5180_driver() -> None:
    board = ReaderBoardSim(["seat1"])
    board.place("seat1", A)
    board.start()
    try:
        firmware = board.firmware
        assert firmware is not None
        deadline = time.monotonic() + 10
        while not firmware.booted and time.monotonic() < deadline:  # the power-up read
            time.sleep(0.01)
        (frontend,) = firmware.scanner.antennas[0].frontends
        assert isinstance(frontend, PN5180) and frontend.spi_frames > 0
        assert firmware.scanner.present == [[A]]
        assert board.frontends[0].violations == 0
    finally:
        board.stop()


def test_the_documented_frames_of_both_versions() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "reader-protocol.md").read_text()
    card = bytes.fromhex("04A1B2C3D4E5F6")
    v2 = encode(m.TagIn(2, card, board_ms=1234567), 7)
    assert v2.hex(" ").upper() in doc
    assert FrameDecoder().feed(v2)[0].msg == m.TagIn(2, card, board_ms=1234567)
    v1 = bytes.fromhex("A55A00090702F3020704A1B2C3D4E5F63AEF")  # a version 1 board's TAG_IN
    assert v1.hex(" ").upper() in doc
    assert FrameDecoder().feed(v1)[0].msg == m.TagIn(2, card, board_ms=None)
    inventory = m.Inventory(((card[:4],), (), (card,)), board_ms=1500)
    assert encode(inventory, 8).hex(" ").upper() in doc.replace("\n", " ")
    arrivals = m.Arrivals(1300000, ((2, card, 1299400), (0, bytes.fromhex("DEADBEEF"), 1250000)))
    assert encode(arrivals, 9).hex(" ").upper() in doc.replace("\n", " ")
    assert encode(m.ArrivalsRequest(), 2).hex(" ").upper() in doc
    hello = m.Hello("tablesim-1.0", "card", ("seat1", "seat2", "board"), protocol=3)
    assert encode(hello, 0).hex(" ").upper() in doc.replace("\n", " ")
    # Neither three trailing bytes nor five: only none (version 1) or four (version 2).
    for extra in (b"\x00\x01\x02", b"\x00\x01\x02\x03\x04"):
        payload = protocol.tag_payload(2, card) + extra
        with pytest.raises(ProtocolError, match=r"truncated|trailing"):
            m.TagIn.parse(payload)


def test_an_empty_write_never_stalls_the_fifo() -> None:
    fifo = TxFifo(100)
    wire = Wire()
    assert fifo.push_raw(b"")
    assert fifo.push_frame(encode(m.Heartbeat(5), 0))
    fifo.drain(wire)
    assert fifo.size == 0 and [f.msg for f in wire.frames()] == [m.Heartbeat(5)]


def test_the_boards_table_crc_is_the_hosts_crc() -> None:
    import random

    rng = random.Random(17)
    for size in (0, 1, 9, 100, 1033):
        data = rng.randbytes(size)
        assert protocol.crc16_table(data) == protocol.crc16(data)  # table (board) == C (host)
    assert protocol.crc16_table(b"123456789") == 0x29B1
