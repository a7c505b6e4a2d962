"""The firmware under the real MicroPython interpreter (its WebAssembly port, on Node),
talking to the host driver through a real pty, and the protocol module giving the same
bytes under MicroPython as under CPython."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import threading
import time
import tty
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.trace import TagIn, TagOut
from drivers.reader import messages as m
from drivers.reader.driver import ReaderDriver
from drivers.reader.framing import Frame, encode
from firmware import protocol

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
        assert driver.hello == m.Hello("tablefw-wasm", "card", tuple(ANTENNAS), protocol=3)
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
