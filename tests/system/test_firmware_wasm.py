"""The firmware under the real MicroPython interpreter (its WebAssembly port, on Node),
talking to the host driver through a real pty, and the protocol module giving the same
bytes under MicroPython as under CPython."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import threading
import time
import tty
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from drivers.reader import messages as m
from drivers.reader.driver import ReaderDriver
from drivers.reader.framing import Frame, encode
from firmware import protocol
from kernel.inputs import TagIn, TagOut

pytestmark = pytest.mark.timeout(120)

ROOT = Path(__file__).resolve().parents[2]
WASM = ROOT / "firmware_sim" / "wasm"
PACKAGE = WASM / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"
ANTENNAS = ["seat1", "seat2", "board", "muck"]
CARD = "04A1B2C3D4E5F6"
CHIP = "E004015012345678"  # ISO 15693
SHORT = "DEADBEEF"


def node() -> str:
    path = shutil.which("node")
    assert path is not None, "node is missing: scripts/setup.sh installs it"
    assert PACKAGE.is_dir(), "MicroPython's WebAssembly port is missing: run scripts/setup.sh"
    return path


def run_micropython(tmp_path: Path, script: str) -> str:
    """Run a script under MicroPython with the firmware importable; its printed output."""
    source = tmp_path / "script.py"
    source.write_text(script)
    done = subprocess.run(
        [node(), str(WASM / "board.mjs"), str(ROOT), "--run", str(source)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stderr.decode()  # the interpreter's stdout goes to stderr (stdout is the link)


def test_the_protocol_module_gives_the_same_bytes_under_micropython(tmp_path: Path) -> None:
    script = """
import sys
from firmware import protocol as p
print(sys.implementation.name)
print(p.crc16(b'123456789'), p.crc16_table(b'123456789'))
card = bytes.fromhex('04A1B2C3D4E5F6')
print(p.encode_frame(7, p.TAG_IN, p.tag_payload(2, card)).hex())
chip = bytes.fromhex('E004015012345678')
print(p.encode_frame(9, p.TAG_OUT, p.tag_payload(1, chip, 4294967295)).hex())
inv = p.inventory_payload([[bytes.fromhex('04A1B2C3')], [], [card]], 1500)
print(p.encode_frame(8, p.INVENTORY, inv).hex())
hello = p.hello_payload('tablesim-1.0', 'card', ['seat1', 'seat2', 'board'])
print(p.encode_frame(0, p.HELLO, hello).hex())
r = p.FrameReader()
beat = p.encode_frame(3, p.HEARTBEAT, p.heartbeat_payload(1500))
frames = r.feed(b'\\x00\\xa5\\x5a\\x03' + beat + b'\\xa5')
print(frames[0][0], frames[0][1], frames[0][2].hex(), r.bad_bytes, len(r.buffer))
try:
    p.parse_tag(bytes([0, 5, 1, 2, 3, 4, 5]))
except p.WireError as e:
    print('refused', e)
print(p.encode_frame(4, p.FOCUS, p.focus_payload(0b1010, 5000)).hex())
stack = [bytes([0xE0, 4, 1, 0, 0, 0, i // 256, i % 256]) for i in range(300)]
pages = p.inventory_pages([[], stack], 77)
frames = [p.encode_frame(i, p.INVENTORY_PAGE, pg).hex() for i, pg in enumerate(pages)]
print(len(pages), ' '.join(frames))
"""
    lines = run_micropython(tmp_path, script).splitlines()
    assert lines[0] == "micropython"
    assert lines[1] == "10673 10673"  # 0x29B1, by the table: MicroPython has no crc_hqx
    uid7 = bytes.fromhex(CARD)
    tag_in = protocol.tag_payload(2, uid7)
    assert lines[2] == protocol.encode_frame(7, protocol.TAG_IN, tag_in).hex()
    assert lines[2] == "a55a00090702f3020704a1b2c3d4e5f63aef"  # docs/reader-protocol.md
    tag_out = protocol.tag_payload(1, bytes.fromhex(CHIP), 0xFFFFFFFF)
    assert lines[3] == protocol.encode_frame(9, protocol.TAG_OUT, tag_out).hex()
    inv = protocol.inventory_payload([[bytes.fromhex("04A1B2C3")], [], [uid7]], 1500)
    assert lines[4] == protocol.encode_frame(8, protocol.INVENTORY, inv).hex()
    hello = protocol.hello_payload("tablesim-1.0", "card", ["seat1", "seat2", "board"])
    assert lines[5] == protocol.encode_frame(0, protocol.HELLO, hello).hex()
    assert lines[6] == "3 5 000005dc 4 1"
    assert lines[7].startswith("refused tag UID must be 4, 7 or 10 bytes")
    focus = protocol.focus_payload(10, 5000)
    assert lines[8] == protocol.encode_frame(4, protocol.FOCUS, focus).hex()
    stack = [bytes([0xE0, 4, 1, 0, 0, 0, i // 256, i % 256]) for i in range(300)]
    pages = protocol.inventory_pages([[], stack], 77)
    kind = protocol.INVENTORY_PAGE
    frames = [protocol.encode_frame(i, kind, page).hex() for i, page in enumerate(pages)]
    assert lines[9] == f"{len(pages)} " + " ".join(frames) and len(pages) == 3


class WasmBoard:
    """The Node process running the board, its link bridged to a pty the driver opens."""

    def __init__(self, heartbeat_ms: int = 200, inventory_ms: int = 60000) -> None:
        self.ctl_r, self.ctl_w = os.pipe()
        self.proc = subprocess.Popen(
            [node(), str(WASM / "board.mjs"), str(ROOT), ",".join(ANTENNAS), "card",
             str(heartbeat_ms), str(inventory_ms), str(self.ctl_r)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(self.ctl_r,),
        )
        os.close(self.ctl_r)
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)
        self.answers: list[str] = []
        self.cond = threading.Condition()
        self.to_board: list[bytes] = []
        self._threads = [
            threading.Thread(target=self._up, daemon=True),
            threading.Thread(target=self._down, daemon=True),
            threading.Thread(target=self._log, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _up(self) -> None:
        """Board to host: Node's stdout into the pty."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while data := os.read(fd, 4096):
            os.write(self.master, data)

    def _down(self) -> None:
        """Host to board: the pty into Node's stdin."""
        assert self.proc.stdin is not None
        while self.proc.poll() is None:
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    return
                self.proc.stdin.write(data)
                self.proc.stdin.flush()

    def _log(self) -> None:
        assert self.proc.stderr is not None
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            with self.cond:
                self.answers.append(line)
                self.cond.notify_all()

    def command(self, line: str) -> str:
        """Send a control line; wait for its answer."""
        with self.cond:
            before = sum(1 for a in self.answers if a.startswith("ctl: "))
        os.write(self.ctl_w, (line + "\n").encode())
        with self.cond:
            assert self.cond.wait_for(
                lambda: sum(1 for a in self.answers if a.startswith("ctl: ")) > before, 20
            ), self.answers
            return [a for a in self.answers if a.startswith("ctl: ")][-1][5:]

    def inject(self, data: bytes) -> None:
        """Bytes to the board as if the host had sent them."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def close(self) -> None:
        os.close(self.ctl_w)
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        os.close(self.master)
        os.close(self.slave)
        assert not [a for a in self.answers if a.startswith("python error")], self.answers


class Recorder:
    def __init__(self) -> None:
        self.log: list[object] = []
        self.cond = threading.Condition()

    def add(self, item: object) -> None:
        with self.cond:
            self.log.append(item)
            self.cond.notify_all()

    def wait(self, predicate: Callable[[list[object]], bool], timeout: float = 20) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self.log), timeout)

    def moves(self) -> list[tuple[str, str, str | None]]:
        with self.cond:
            return [
                ("in" if isinstance(e, TagIn) else "out", e.antenna, e.uid)
                for e in self.log
                if isinstance(e, TagIn | TagOut)
            ]

    def frames(self) -> list[Frame]:
        with self.cond:
            return [f for f in self.log if isinstance(f, Frame)]


@pytest.fixture
def wasm_board() -> Iterator[WasmBoard]:
    board = WasmBoard()
    yield board
    board.close()


def test_firmware_under_micropython_talks_to_the_host_driver(wasm_board: WasmBoard) -> None:
    rec = Recorder()
    driver = ReaderDriver(
        wasm_board.path,
        ANTENNAS,
        rec.add,
        lambda kind, message, details: rec.add(("alert", kind, details)),
        time.monotonic,
        on_device=lambda state: rec.add(("device", state)),
        on_frame=rec.add,
    )
    driver.start()
    try:
        assert driver.wait_synced(30)
        assert driver.hello == m.Hello(
            "tablefw-wasm", "card", tuple(ANTENNAS), protocol=protocol.PROTOCOL_VERSION
        )
        assert wasm_board.command("place seat1 " + CARD) == "ok"
        assert wasm_board.command("place seat1 " + SHORT) == "ok"
        assert wasm_board.command("place board " + CHIP) == "ok"
        assert wasm_board.command("remove seat1 " + CARD) == "ok"
        assert wasm_board.command("place muck " + CARD) == "ok"
        assert rec.wait(lambda log: len(rec.moves()) >= 5), rec.log
        assert rec.moves() == [
            ("in", "seat1", CARD),
            ("in", "seat1", SHORT),
            ("in", "board", CHIP),
            ("out", "seat1", CARD),
            ("in", "muck", CARD),
        ]
        # Every report carries the board's own time, in order, on the heartbeat's clock.
        reports = [f.msg for f in rec.frames() if isinstance(f.msg, m.TagIn | m.TagOut)]
        times = [msg.board_ms for msg in reports]
        assert None not in times and times == sorted(times)  # type: ignore[type-var]
        uptime = int(wasm_board.command("uptime"))
        assert 0 < times[-1] <= uptime
        assert rec.wait(lambda log: driver.uptime_ms is not None and driver.uptime_ms >= times[-1])

        # An inventory on request reflects every report, and carries the board time too.
        before = driver.counters()["inventories"]
        driver.request_inventory()
        assert rec.wait(lambda log: driver.counters()["inventories"] > before)
        inventory = [f.msg for f in rec.frames() if isinstance(f.msg, m.Inventory)][-1]
        assert inventory.board_ms is not None and inventory.board_ms >= times[-1]
        assert driver.positions() == {
            "seat1": [SHORT], "seat2": [], "board": [CHIP], "muck": [CARD]
        }

        # A damaged host frame: the board says so (ERROR 2), and still answers the next one.
        bad = bytearray(encode(m.InventoryRequest(), 9))
        bad[-1] ^= 0xFF
        wasm_board.inject(bytes(bad))
        assert rec.wait(
            lambda log: any(
                isinstance(i, tuple) and i[:2] == ("alert", "reader_error")
                and i[2]["code"] == m.ERR_RX_CRC for i in log
            )
        )

        # A reboot: unasked HELLO, the driver holds the table and re-reads the antennas.
        mark = len(rec.log)
        assert wasm_board.command("restart") == "ok"
        assert rec.wait(lambda log: ("device", "online") in log[mark:])
        assert ("device", "offline") in rec.log[mark:]
        assert any(isinstance(i, tuple) and i[1] == "reader_restarted" for i in rec.log[mark:])
        assert driver.positions()["muck"] == [CARD]  # nothing moved: no change reported
        assert len(rec.moves()) == 5
        counters = driver.counters()
        assert counters["seq_gaps"] == 0 and counters["dropped_events"] == 0
    finally:
        driver.stop()


SCHEDULE = """
from firmware_sim.modelled import ModelledBoard
from firmware import protocol


def card(i):
    return bytes([4, (i * 97) % 256, (i * 57) % 256, i % 256, (i * 31) % 256, 7, (i * 13) % 256])


layout = [("seat1", 1), ("seat2", 1), ("seat3", 1), ("board", 3), ("muck", 1)]
board = ModelledBoard(layout, "card", ("iso15693", "iso14443a"), 0.0, background_ms=800)
n = 0
for name in ("seat1", "seat2", "seat3"):
    board.lay(name, [card(n), card(n + 1)])
    n += 2
board.lay("muck", [card(n + i) for i in range(6)])
n += 6
board.boot()
board.focus(["seat2", "muck"], 0.0)
board.run_until(board.now_us() + 500000)
out = []
for i in range(12):
    antenna = ("seat2", "board", "muck", "seat3")[i % 4]
    uid = card(n)
    n += 1
    at = board.now_us() + 37000 + (i * 53000) % 300000
    board.move(at, antenna, uid, True)
    sent = -1.0
    while sent < 0:
        board.run_until(board.now_us() + 2000)
        for when, kind, name, got in board.reports():
            if got == uid and kind == protocol.TAG_IN:
                sent = when
    out.append("%s %d" % (antenna, int(sent - at)))
    board.move(board.now_us() + 20000, antenna, uid, False)
print(" ".join(out))
print("turns", " ".join(str(t) for t in board.board.turns))
"""


def test_the_schedule_runs_under_micropython_as_under_cpython(tmp_path: Path) -> None:
    """The focus and the background on modelled time, under the real interpreter: the
    same reads in the same order as under CPython (every report to the microsecond), the
    focused antennas read far more often, every card found within the bound."""
    got = run_micropython(tmp_path, SCHEDULE).splitlines()
    source = tmp_path / "cpython.py"
    source.write_text(SCHEDULE)
    done = subprocess.run(
        [sys.executable, str(source)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert got == done.stdout.splitlines()
    moves = got[0].split()
    latency = {(moves[i], i): int(moves[i + 1]) for i in range(0, len(moves), 2)}
    assert all(us < 800_000 for us in latency.values())
    focused = [us for (antenna, _), us in latency.items() if antenna in ("seat2", "muck")]
    assert max(focused) < 100_000
    turns = [int(t) for t in got[1].split()[1:]]  # seat1 seat2 seat3 board muck
    assert turns[1] > 5 * turns[0] and turns[4] > 5 * turns[2]


def test_the_focus_reaches_the_board_under_micropython_and_a_dropped_card_is_found(
    wasm_board: WasmBoard,
) -> None:
    rec = Recorder()
    driver = ReaderDriver(
        wasm_board.path,
        ANTENNAS,
        rec.add,
        lambda kind, message, details: rec.add(("alert", kind, details)),
        time.monotonic,
        on_frame=rec.add,
    )
    driver.start()
    try:
        assert driver.wait_synced(30)
        assert driver.hello is not None and driver.hello.protocol == protocol.PROTOCOL_VERSION
        driver.set_focus({"seat2", "muck"})
        deadline = time.monotonic() + 20
        while wasm_board.command("focused") != "seat2,muck":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        # Let go on a focused antenna and on a background one: the board's own schedule
        # finds both (no hand scans them here).
        assert wasm_board.command("drop muck " + CARD) == "ok"
        assert wasm_board.command("drop board " + CHIP) == "ok"
        assert rec.wait(lambda log: len(rec.moves()) >= 2, 30), rec.log
        assert sorted(rec.moves()) == [("in", "board", CHIP), ("in", "muck", CARD)]
        driver.set_focus(set())
        deadline = time.monotonic() + 20
        while wasm_board.command("focused") != "-":
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        driver.stop()


def test_a_cut_host_frame_is_dropped_under_micropython(wasm_board: WasmBoard) -> None:
    """A host frame cut after its header, claiming a payload that never comes: the board
    drops it after the inter-byte timeout (ERROR 6) and answers the next request; before,
    that request would have waited inside the cut frame's claimed length."""
    rec = Recorder()
    driver = ReaderDriver(
        wasm_board.path,
        ANTENNAS,
        rec.add,
        lambda kind, message, details: rec.add(("alert", kind, details)),
        time.monotonic,
        on_frame=rec.add,
    )
    driver.start()
    try:
        assert driver.wait_synced(30)
        cut = protocol.encode_frame(7, protocol.FOCUS, bytes(40))[:12]  # header and 5 bytes
        wasm_board.inject(cut)
        assert rec.wait(
            lambda log: any(
                isinstance(i, Frame) and isinstance(i.msg, m.BoardError)
                and i.msg.code == m.ERR_RX_CUT for i in log
            ),
            20,
        ), rec.log
        error = next(
            i.msg for i in rec.frames()
            if isinstance(i.msg, m.BoardError) and i.msg.code == m.ERR_RX_CUT
        )
        # the cut frame, and whatever the host sent before the timeout (asked again)
        assert error.text.startswith("host frame cut: ") and error.text.endswith("bytes dropped")
        assert wasm_board.command("cut") == "1"
        before = driver.counters()["inventories"]
        wasm_board.inject(encode(m.InventoryRequest(), 8))
        assert rec.wait(lambda log: driver.counters()["inventories"] > before, 20)
    finally:
        driver.stop()
