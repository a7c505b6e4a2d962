"""Reader board faults: unplugged mid-hand, rebooted, silent; the table is held, nothing guessed.

A USB unplug is simulated honestly: the stable device link disappears and the pty closes
(`ReaderBoardSim.unplug`); the replugged board boots on a new pty, sequence numbers from 0,
and the link points to it again. The daemon is `tablectl run` in a subprocess; the boards
and the dealer's hands are in this process.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from drivers.reader.driver import ReaderDriver
from firmware_sim.reader_board import ReaderBoardSim
from kernel.inputs import Device, TagIn, TagOut
from tests.broker import Subscriber
from tests.table_rig import (
    PREFIX,
    Expectation,
    Player,
    Step,
    TableRig,
    events_of,
    poll,
    session,
    top_seq,
    without_t,
)

pytestmark = pytest.mark.timeout(180)

CARDS = ["seat1", "seat2", "seat3", "board", "burn", "muck"]
A, B, C = "04A1B2C3D4E5F6", "0466778899AABB", "DEADBEEF"


def _alerts(room: Subscriber) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in room.messages(f"{PREFIX}/alerts")]


def _alert_types(room: Subscriber) -> list[str]:
    return [a["type"] for a in _alerts(room)]


def _held(room: Subscriber) -> list[str] | None:
    """The `held` list of the latest state (None before any state)."""
    states = [json.loads(m.payload) for m in room.messages(f"{PREFIX}/state")]
    return list(states[-1].get("held", [])) if states else None


def _fold_steps(steps: list[Step]) -> list[int]:
    """Indexes of the first fold's two motions (each card from the seat into the muck)."""
    first = next(
        k
        for k, s in enumerate(steps)
        if [m.op for m in s.moves] == ["out", "in"] and s.moves[1].antenna == "muck"
    )
    assert steps[first + 1].moves[0].antenna == steps[first].moves[0].antenna
    return [first, first + 1]


def test_unplugged_card_reader_holds_the_table_and_catches_up_on_replug(
    table: tuple[TableRig, Subscriber],
) -> None:
    rig, room = table
    steps = session(rig.config, 1, 7)
    expect = Expectation(rig.config, steps)
    player = Player(rig, room, steps, expect)
    player.start()
    folds = _fold_steps(steps)
    player.play(range(folds[0]))
    seq = top_seq(room)

    rig.cards_board.unplug()  # mid-hand, preflop: the link goes, then the device
    assert poll(lambda: "reader_offline" in _alert_types(room), 30), _alert_types(room)
    offline = next(a for a in _alerts(room) if a["type"] == "reader_offline")
    assert offline["severity"] == "critical" and offline["device"] == "card_reader"
    assert "reader_disconnected" in _alert_types(room)  # the driver's own, with the port
    assert poll(lambda: _held(room) == ["card_reader"], 10), _held(room)

    for k in folds:  # the player folds while nobody can read the cards
        for move in steps[k].moves:
            rig.move(move)
        player.made.add(k)
    assert top_seq(room) == seq  # nothing guessed

    rig.cards_board.plug()  # a new device, a rebooted board
    assert poll(lambda: "reader_online" in _alert_types(room), 30), _alert_types(room)
    assert poll(lambda: _held(room) == [], 10), _held(room)
    # The catch-up (the fold's moves) was journaled before the board was declared online.
    journal = rig.journal_inputs()
    devices = [i for i, e in enumerate(journal) if isinstance(e, Device)]
    assert [journal[i].state for i in devices] == ["offline", "online"]  # type: ignore[union-attr]
    fold_uids = {m.uid for k in folds for m in steps[k].moves}
    caught_up = [
        i
        for i, e in enumerate(journal)
        if isinstance(e, TagIn | TagOut) and e.uid in fold_uids and i > devices[0]
    ]
    assert len(caught_up) == 4 and max(caught_up) < devices[1]

    player.play(range(folds[0], len(steps)))
    final = expect.seq_after[-1]
    assert poll(lambda: top_seq(room) >= final, 30)
    got = [without_t(e) for e in events_of(room.messages())]
    assert got == [without_t(e) for e in expect.events], "the fold read after the replug"


def test_no_hand_starts_while_a_reader_is_offline(table: tuple[TableRig, Subscriber]) -> None:
    rig, room = table
    steps = session(rig.config, 1, 7)
    expect = Expectation(rig.config, steps)
    player = Player(rig, room, steps, expect)
    player.start()
    shuffler = next(k for k, s in enumerate(steps) if s.press == ("shuffler", None))
    player.play(range(shuffler))  # seated, between hands

    rig.chips_board.unplug()
    assert poll(lambda: _held(room) == ["chip_reader"], 30), _held(room)
    assert poll(lambda: rig.press("shuffler"), 10)
    assert poll(lambda: "table_held" in _alert_types(room), 10), _alert_types(room)
    assert not [e for e in events_of(room.messages()) if e["type"] == "hand_started"]

    rig.chips_board.plug()
    assert poll(lambda: _held(room) == [], 30), _held(room)
    player.presses_due += 1  # the refused press is journaled too
    player.play(range(shuffler, len(steps)))
    final = expect.seq_after[-1]
    assert poll(lambda: top_seq(room) >= final, 30)
    got = [without_t(e) for e in events_of(room.messages())]
    assert got == [without_t(e) for e in expect.events]


def test_board_restart_holds_the_table_until_its_antennas_are_read_again(
    table: tuple[TableRig, Subscriber],
) -> None:
    rig, room = table
    steps = session(rig.config, 1, 7)
    expect = Expectation(rig.config, steps)
    player = Player(rig, room, steps, expect)
    player.start()
    flop = next(k for k, s in enumerate(steps) if [m.antenna for m in s.moves] == ["board"])
    player.play(range(flop))

    board = rig.cards_board
    board.drop_next()  # the card lands as the board reboots: its TAG_IN never goes out
    rig.move(steps[flop].moves[0])
    board.restart()  # watchdog reset: HELLO again, sequence from 0, same port
    player.made.add(flop)
    assert poll(lambda: "reader_restarted" in _alert_types(room), 30), _alert_types(room)
    # Resynchronised as after an unplug: held, re-read whole, released.
    assert poll(lambda: "reader_online" in _alert_types(room), 30), _alert_types(room)
    assert "reader_offline" in _alert_types(room)
    assert poll(lambda: _held(room) == [], 10), _held(room)
    journal = rig.journal_inputs()
    devices = [i for i, e in enumerate(journal) if isinstance(e, Device)]
    assert [journal[i].state for i in devices] == ["offline", "online"]  # type: ignore[union-attr]
    flop_uid = steps[flop].moves[0].uid
    found = [i for i, e in enumerate(journal) if isinstance(e, TagIn) and e.uid == flop_uid]
    assert len(found) == 1 and devices[0] < found[0] < devices[1], "read by the inventory"

    player.play(range(flop, len(steps)))
    final = expect.seq_after[-1]
    assert poll(lambda: top_seq(room) >= final, 30)
    got = [without_t(e) for e in events_of(room.messages())]
    assert got == [without_t(e) for e in expect.events], "the flop card came from the inventory"


# --------------------------------------------------------------------------- the driver alone


class Recorder:
    """Everything the driver reports, in one ordered list: events, alerts, availability."""

    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []
        self._cond = threading.Condition()

    def _add(self, item: tuple[str, Any]) -> None:
        with self._cond:
            self.log.append(item)
            self._cond.notify_all()

    def on_event(self, event: TagIn | TagOut) -> None:
        self._add(("in" if isinstance(event, TagIn) else "out", (event.antenna, event.uid)))

    def on_alert(self, kind: str, message: str, details: dict[str, object]) -> None:
        self._add(("alert", kind))

    def on_device(self, state: str) -> None:
        self._add(("device", state))

    def wait(self, predicate: Callable[[list[tuple[str, Any]]], bool], timeout: float = 10) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self.log), timeout)

    def devices(self) -> list[str]:
        with self._cond:
            return [state for kind, state in self.log if kind == "device"]


def _driver(link: Path, rec: Recorder, **kw: Any) -> ReaderDriver:
    driver = ReaderDriver(
        str(link),
        CARDS,
        rec.on_event,
        rec.on_alert,
        time.monotonic,
        on_device=rec.on_device,
        **kw,
    )
    driver.start()
    return driver


def test_driver_reports_offline_then_the_catch_up_then_online(tmp_path: Path) -> None:
    link = tmp_path / "tablectl-cards"
    rec = Recorder()
    with ReaderBoardSim(CARDS, link=link, heartbeat_period=0.2) as board:
        board.place("seat1", A)
        driver = _driver(link, rec, reconnect_delay=0.05, reconnect_max_delay=0.4)
        try:
            assert rec.wait(lambda log: ("device", "online") in log)
            assert rec.log.index(("in", ("seat1", A))) < rec.log.index(("device", "online"))

            board.unplug()
            assert rec.wait(lambda log: ("device", "offline") in log)
            board.move(A, "seat1", "muck")  # moved while unplugged
            board.place("seat2", B)
            failures = driver.counters()["open_failures"]
            assert poll(lambda: driver.counters()["open_failures"] >= failures + 3, 10)
            mark = len(rec.log)
            board.plug()
            assert rec.wait(lambda log: log[-1] == ("device", "online"))
            tail = [item for item in rec.log[mark:] if item[0] != "alert"]
            assert tail == [
                ("out", ("seat1", A)),
                ("in", ("seat2", B)),
                ("in", ("muck", A)),
                ("device", "online"),
            ]
            assert rec.devices() == ["online", "offline", "online"]

            # Every answer the driver waits for is in (a late one would be the frame the
            # board drops next, and a HELLO it still waits for would take the reboot's)
            assert poll(lambda: driver.counters()["awaiting"] == 0, 10)
            board.drop_next()
            board.place("board", C)  # during the reboot: never reported by TAG_IN
            board.restart()
            assert rec.wait(lambda log: ("in", ("board", C)) in log)
            assert ("alert", "reader_restarted") in rec.log
            # held while it is re-read, exactly as after an unplug
            assert rec.wait(lambda log: rec.devices()[-2:] == ["offline", "online"])
            assert rec.devices() == ["online", "offline", "online", "offline", "online"]
            mark = max(i for i, item in enumerate(rec.log) if item == ("device", "offline"))
            assert rec.log.index(("in", ("board", C))) > mark
            assert driver.counters()["restarts"] == 1
        finally:
            driver.stop()


def test_driver_backs_off_while_the_port_is_missing(tmp_path: Path) -> None:
    rec = Recorder()
    driver = _driver(tmp_path / "nothing", rec, reconnect_delay=0.05, reconnect_max_delay=0.4)
    try:
        assert poll(lambda: driver.counters()["open_failures"] >= 1, 10)
        first = time.monotonic()
        assert poll(lambda: driver.counters()["open_failures"] >= 5, 10)
        # Waits of 0.05, 0.1, 0.2 and 0.4 s between the five attempts (a fixed delay: 0.2 s).
        assert time.monotonic() - first >= 0.7
        assert rec.devices() == ["offline"]  # once, not once per attempt
    finally:
        driver.stop()


def test_silent_board_goes_offline_and_comes_back_online_after_an_inventory(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    link = tmp_path / "tablectl-cards"
    with ReaderBoardSim(CARDS, link=link, heartbeat_period=30.0, inventory_period=60.0) as board:
        driver = _driver(link, rec, silent_after=0.5)
        try:
            assert rec.wait(lambda log: ("device", "online") in log)
            assert rec.wait(lambda log: ("device", "offline") in log)  # nothing for 0.5 s
            assert ("alert", "reader_silent") in rec.log
            board.place("seat3", C)
            assert rec.wait(lambda log: log[-1] == ("device", "online"))
            assert rec.log.index(("in", ("seat3", C))) < len(rec.log) - 1
        finally:
            driver.stop()
