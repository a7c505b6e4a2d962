"""Reader board simulator on a real pty, read by the real driver through pyserial."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from drivers.reader import messages as m
from drivers.reader.alerts import AlertLimiter
from drivers.reader.driver import ReaderDriver
from firmware_sim.reader_board import ReaderBoardSim
from kernel.inputs import TagIn, TagOut

pytestmark = pytest.mark.timeout(60)

CARD_ANTENNAS = ["seat1", "seat2", "seat3", "board", "burn", "muck"]
A, B, C = "04A1B2C3D4E5F6", "0466778899AABB", "DEADBEEF"
WAIT = 5.0


class Recorder:
    """Collects driver callbacks from the driver thread; lets the test wait for them."""

    def __init__(self) -> None:
        self.events: list[TagIn | TagOut] = []
        self.alerts: list[tuple[str, str, dict[str, object]]] = []
        self._cond = threading.Condition()

    def on_event(self, event: TagIn | TagOut) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def on_alert(self, kind: str, message: str, details: dict[str, object]) -> None:
        with self._cond:
            self.alerts.append((kind, message, details))
            self._cond.notify_all()

    def wait(self, predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def moves(self) -> list[tuple[str, str, str | None]]:
        with self._cond:
            return [
                ("in" if isinstance(e, TagIn) else "out", e.antenna, e.uid) for e in self.events
            ]

    def kinds(self) -> list[str]:
        with self._cond:
            return [kind for kind, _, _ in self.alerts]

    def wait_moves(self, count: int) -> list[tuple[str, str, str | None]]:
        assert self.wait(lambda: len(self.events) >= count), self.moves()
        return self.moves()

    def wait_alert(self, kind: str) -> dict[str, object]:
        assert self.wait(lambda: kind in self.kinds()), self.alerts
        with self._cond:
            return next(details for k, _, details in self.alerts if k == kind)


def make_sim(heartbeat_period: float = 30.0, inventory_period: float = 60.0) -> ReaderBoardSim:
    return ReaderBoardSim(
        CARD_ANTENNAS, heartbeat_period=heartbeat_period, inventory_period=inventory_period
    )


@pytest.fixture
def sim() -> Iterator[ReaderBoardSim]:
    board = make_sim()
    board.start()
    yield board
    board.stop()


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


def start_driver(
    port: str, rec: Recorder, antennas: list[str] = CARD_ANTENNAS, silent_after: float = 30.0
) -> ReaderDriver:
    driver = ReaderDriver(
        port,
        antennas,
        rec.on_event,
        rec.on_alert,
        time.monotonic,
        reconnect_delay=0.1,
        silent_after=silent_after,
    )
    driver.start()
    return driver


@pytest.fixture
def driver(sim: ReaderBoardSim, rec: Recorder) -> Iterator[ReaderDriver]:
    drv = start_driver(sim.path, rec)
    assert drv.wait_synced(WAIT)
    yield drv
    drv.stop()


def as_sets(contents: dict[str, list[str]]) -> dict[str, set[str]]:
    return {name: set(uids) for name, uids in contents.items()}


def test_sim_opens_a_real_pty(sim: ReaderBoardSim) -> None:
    assert sim.path.startswith("/dev/pts/")
    assert os.path.exists(sim.path)


def test_place_remove_and_move_reach_the_host_in_order(
    sim: ReaderBoardSim, driver: ReaderDriver, rec: Recorder
) -> None:
    assert driver.hello == m.Hello("tablesim-1.0", "card", tuple(CARD_ANTENNAS))
    sim.place("seat1", A)
    sim.place("seat1", B)
    sim.place("board", C)
    sim.remove("seat1", B)
    sim.move(A, "seat1", "muck")
    assert not sim.remove("seat2", A)  # nothing there: no frame
    got = rec.wait_moves(6)
    assert got == [
        ("in", "seat1", A),
        ("in", "seat1", B),
        ("in", "board", C),
        ("out", "seat1", B),
        ("out", "seat1", A),
        ("in", "muck", A),
    ]
    assert as_sets(driver.positions()) == as_sets(sim.contents())
    assert sim.contents()["muck"] == [A]
    counters = driver.counters()
    assert counters["crc_errors"] == counters["seq_gaps"] == counters["dropped_events"] == 0
    assert rec.kinds() == []


def test_tags_present_before_the_host_connects_come_from_the_inventory(
    rec: Recorder,
) -> None:
    with make_sim() as board:
        board.place("seat2", A)
        board.place("burn", C)
        drv = start_driver(board.path, rec)
        try:
            assert drv.wait_synced(WAIT)
            # Whatever part of the pre-connect backlog survives the port opening arrives live;
            # the inventory supplies the rest, each tag exactly once.
            assert sorted(rec.wait_moves(2)) == [("in", "burn", C), ("in", "seat2", A)]
            time.sleep(0.2)
            assert len(rec.moves()) == 2
            assert "inventory" in board.requests and "hello" in board.requests
        finally:
            drv.stop()


def test_hello_with_other_antennas_raises_antenna_mismatch(rec: Recorder) -> None:
    chip_antennas = ["bet1", "bet2", "pot"]
    with ReaderBoardSim(chip_antennas, kind="chip", heartbeat_period=30.0) as board:
        drv = start_driver(board.path, rec, antennas=["bet1", "bet2", "bet3"])
        try:
            details = rec.wait_alert("antenna_mismatch")
            assert details["configured"] == ["bet1", "bet2", "bet3"]
            assert details["board"] == chip_antennas
            assert drv.hello is not None and drv.hello.kind == "chip"
        finally:
            drv.stop()


def test_dropped_frame_is_recovered_from_the_inventory(
    sim: ReaderBoardSim, driver: ReaderDriver, rec: Recorder
) -> None:
    requests_before = sim.requests.count("inventory")
    sim.drop_next()
    sim.place("seat1", A)  # never reaches the wire
    sim.place("seat2", B)  # arrives one seq number late
    got = rec.wait_moves(2)
    assert got == [("in", "seat2", B), ("in", "seat1", A)]
    assert rec.wait_alert("reader_seq_gap")["lost"] == 1
    assert driver.counters()["seq_gaps"] == 1
    assert sim.requests.count("inventory") == requests_before + 1
    assert as_sets(driver.positions()) == as_sets(sim.contents())


def test_dropped_tag_out_is_recovered_from_the_inventory(
    sim: ReaderBoardSim, driver: ReaderDriver, rec: Recorder
) -> None:
    sim.place("seat3", A)
    rec.wait_moves(1)
    sim.drop_next()
    sim.move(A, "seat3", "muck")  # the TAG_OUT is lost, the TAG_IN arrives
    got = rec.wait_moves(3)
    assert got == [("in", "seat3", A), ("in", "muck", A), ("out", "seat3", A)]
    assert driver.positions()["seat3"] == []


def test_corrupt_frame_and_garbage_raise_alerts_and_later_frames_arrive(
    sim: ReaderBoardSim, driver: ReaderDriver, rec: Recorder
) -> None:
    sim.inject_raw(b"\x00\xa5\x5a\x03\xe8\x07noise\xa5")
    sim.corrupt_next()
    sim.place("board", A)  # bad CRC on the wire
    sim.place("board", B)
    got = rec.wait_moves(2)
    assert set(got) == {("in", "board", A), ("in", "board", B)}
    assert got[0] == ("in", "board", B)  # A only comes back through the inventory
    rec.wait_alert("reader_crc_error")
    counters = driver.counters()
    assert counters["crc_errors"] == 1
    assert counters["bad_bytes"] > 0
    sim.remove("board", B)
    assert rec.wait_moves(3)[-1] == ("out", "board", B)


def test_stale_tag_reports_are_dropped_and_counted(
    sim: ReaderBoardSim, driver: ReaderDriver, rec: Recorder
) -> None:
    sim.place("seat1", A)
    rec.wait_moves(1)
    sim.send_message(m.TagIn(0, bytes.fromhex(A)))  # already there
    sim.send_message(m.TagOut(1, bytes.fromhex(A)))  # never was at seat2
    sim.place("seat2", B)
    assert rec.wait_moves(2) == [("in", "seat1", A), ("in", "seat2", B)]
    assert driver.counters()["dropped_events"] == 2


def test_unsolicited_hello_means_a_reboot_and_triggers_an_inventory(
    sim: ReaderBoardSim, driver: ReaderDriver, rec: Recorder
) -> None:
    sim.place("seat1", A)
    rec.wait_moves(1)
    asked = sim.requests.count("inventory")
    sim.drop_next()
    sim.remove("seat1", A)  # lost, and the HELLO restarts sequence tracking: no gap seen
    sim.send_hello()
    assert rec.wait_moves(2)[-1] == ("out", "seat1", A)
    assert sim.requests.count("inventory") == asked + 1
    assert driver.counters()["seq_gaps"] == 0


def test_board_error_is_alerted(sim: ReaderBoardSim, driver: ReaderDriver, rec: Recorder) -> None:
    sim.send_error(m.ERR_ANTENNA_FAULT, "antenna burn: open circuit")
    details = rec.wait_alert("reader_error")
    assert details["code"] == m.ERR_ANTENNA_FAULT
    assert details["text"] == "antenna burn: open circuit"


def test_silent_board_is_alerted_once_then_recovers(rec: Recorder) -> None:
    with make_sim() as board:
        drv = start_driver(board.path, rec, silent_after=0.5)
        try:
            rec.wait_alert("reader_silent")
            time.sleep(0.8)
            assert rec.kinds().count("reader_silent") == 1
            board.send_inventory()
            rec.wait_alert("reader_recovered")
        finally:
            drv.stop()


def test_periodic_heartbeat_and_inventory_keep_the_host_in_step(rec: Recorder) -> None:
    with make_sim(heartbeat_period=0.1, inventory_period=0.3) as board:
        drv = start_driver(board.path, rec, silent_after=0.5)
        try:
            assert drv.wait_synced(WAIT)
            assert rec.wait(lambda: drv.counters()["inventories"] >= 3)
            assert drv.uptime_ms is not None and drv.uptime_ms > 0
            assert "reader_silent" not in rec.kinds()
        finally:
            drv.stop()


def test_unplugged_board_alerts_and_the_driver_survives_then_reconnects(
    tmp_path: Path, rec: Recorder
) -> None:
    link = tmp_path / "ttyREADER"  # like /dev/serial/by-id/...: follows the board
    first = make_sim()
    first.start()
    first.place("seat1", A)
    link.symlink_to(first.path)
    drv = start_driver(str(link), rec)
    try:
        assert rec.wait_moves(1) == [("in", "seat1", A)]
        link.unlink()  # unplugged: udev removes the by-id link, then the device goes
        first.stop()
        rec.wait_alert("reader_disconnected")
        time.sleep(0.3)  # several failed reopen attempts: one alert only, thread alive
        assert rec.kinds().count("reader_disconnected") == 1
        with make_sim() as second:
            second.place("muck", A)
            second.place("seat2", B)
            link.symlink_to(second.path)
            rec.wait_alert("reader_reconnected")
            got = rec.wait_moves(4)
            # Frames the new board sent before the port opened may or may not survive the open;
            # either way the inventory brings the view to the board's truth.
            assert set(got[1:]) == {("out", "seat1", A), ("in", "seat2", B), ("in", "muck", A)}
            assert len(got) == 4
            assert drv.counters()["reconnects"] == 1
            assert as_sets(drv.positions()) == as_sets(second.contents())
    finally:
        drv.stop()


def test_missing_port_is_alerted_without_crashing(tmp_path: Path, rec: Recorder) -> None:
    drv = start_driver(str(tmp_path / "nothing"), rec)
    try:
        details = rec.wait_alert("reader_disconnected")
        assert details["port"] == str(tmp_path / "nothing")
        drv.request_inventory()  # harmless while disconnected
        assert drv.counters()["frames"] == 0
    finally:
        drv.stop()


def test_sim_never_blocks_when_nobody_reads(rec: Recorder) -> None:
    with make_sim() as board:
        started = time.monotonic()
        for i in range(3000):  # ~60 KB of frames, far beyond the pty buffer
            uid = f"{i:08X}"
            board.place("board", uid)
            board.remove("board", uid)
        board.place("seat3", C)
        assert time.monotonic() - started < 10.0
        drv = start_driver(board.path, rec)
        try:
            assert drv.wait_synced(WAIT)
            assert rec.wait(lambda: ("in", "seat3", C) in rec.moves())
            assert rec.wait(lambda: as_sets(drv.positions()) == as_sets(board.contents()))
            assert board.frames_dropped > 0  # the FIFO overflowed and told the host so:
            assert rec.wait_alert("reader_error")["code"] == m.ERR_TX_OVERFLOW
        finally:
            drv.stop()


def test_host_requests_are_answered(sim: ReaderBoardSim, driver: ReaderDriver) -> None:
    sim.place("seat1", A)
    assert sim.requests[:3] == ["hello", "arrivals", "inventory"]
    asked = sim.requests.count("inventory")
    before = driver.counters()["inventories"]
    driver.request_inventory()
    deadline = time.monotonic() + WAIT
    while driver.counters()["inventories"] == before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert driver.counters()["inventories"] > before
    assert sim.requests.count("inventory") > asked


def test_alert_limiter_folds_repeats_into_one_alert_per_interval() -> None:
    sent: list[tuple[str, str, dict[str, object]]] = []
    limiter = AlertLimiter(lambda k, msg, d: sent.append((k, msg, d)), interval=1.0)
    limiter.offer("reader_crc_error", "crc", {}, now=10.0)
    limiter.offer("reader_crc_error", "crc", {}, now=10.1, count=3)
    limiter.offer("reader_crc_error", "crc", {}, now=10.2)
    limiter.offer("reader_error", "e1", {}, now=10.2, key="1")
    assert [(k, d["count"]) for k, _, d in sent] == [("reader_crc_error", 1), ("reader_error", 1)]
    limiter.flush(10.5)
    assert len(sent) == 2
    limiter.flush(11.0)
    assert [(k, d["count"]) for k, _, d in sent][-1] == ("reader_crc_error", 4)
    limiter.flush(20.0)
    assert len(sent) == 3
