"""The boards read where the hand is: the host driver's FOCUS to a simulated board on a pty
(and none to an older board), and, through the daemon, cards dealt to an antenna out of
focus (a premature card, a first card to the wrong seat) still caught, within the bound,
with the same ruling."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.config import load_config
from controller.daemon import Daemon
from controller.trace import load_trace
from drivers.reader.driver import ReaderDriver
from firmware_sim.reader_board import ReaderBoardSim
from kernel.inputs import Event, TagIn
from sim.player import ScriptPlayer
from tests.broker import Mosquitto, Received, Subscriber

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"
SCENARIOS = ROOT / "tests" / "scenarios"
PREFIX = "poker/sim/t01"
ANTENNAS = ["seat1", "seat2", "board", "burn", "muck"]
BOUND_S = 0.8  # the card board's background bound (firmware/config.py)
SLACK_S = 1.2  # a real pty, threads and a loaded test machine on top of it


class Log:
    def __init__(self) -> None:
        self.items: list[object] = []
        self.cond = threading.Condition()

    def add(self, *item: object) -> None:
        with self.cond:
            self.items.append(item if len(item) != 1 else item[0])
            self.cond.notify_all()

    def wait(self, predicate: Callable[[], bool], timeout: float = 10) -> bool:
        """Poll `predicate` (it may look at the board, which tells nobody)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def alerts(self) -> set[object]:
        with self.cond:
            return {i[1] for i in self.items if isinstance(i, tuple) and i[0] == "alert"}


@pytest.fixture
def log() -> Log:
    return Log()


def driver_for(board: ReaderBoardSim, log: Log, **kw: Any) -> ReaderDriver:
    driver = ReaderDriver(
        board.path,
        ANTENNAS,
        log.add,
        lambda kind, message, details: log.add(("alert", kind)),
        time.monotonic,
        focus_lease=kw.pop("focus_lease", 5.0),
        **kw,
    )
    driver.start()
    assert driver.wait_synced(10)
    return driver


def test_the_focus_reaches_the_board_again_after_a_reboot_and_lapses_without_a_host(
    log: Log,
) -> None:
    with ReaderBoardSim(ANTENNAS, heartbeat_period=0.2, scan_pause_ms=5) as board:
        driver = driver_for(board, log, focus_lease=0.6)
        try:
            driver.set_focus({"seat2", "muck", "bet4"})  # bet4 is the other board's
            firmware = lambda: board.firmware  # noqa: E731

            def focused() -> list[str]:
                fw = firmware()
                return [] if fw is None else [fw.names[i] for i in fw.focused()]

            assert log.wait(lambda: focused() == ["seat2", "muck"])
            assert driver.focus == ("seat2", "muck")
            sent = driver.counters()["focus_frames"]
            time.sleep(1.0)  # renewed within its lease (0.6 s): still there
            assert focused() == ["seat2", "muck"]
            assert driver.counters()["focus_frames"] > sent
            board.restart()  # a reboot forgets the focus; the driver tells it again
            assert log.wait(lambda: driver.counters()["restarts"] == 1)
            assert log.wait(lambda: focused() == ["seat2", "muck"])
            driver.set_focus(set())  # every antenna in turn
            assert log.wait(lambda: focused() == [])
            driver.set_focus({"board"})
            assert log.wait(lambda: focused() == ["board"])
        finally:
            driver.stop()
        # The host gone: the lease runs out, and the board reads every antenna in turn.
        deadline = time.monotonic() + 3
        while focused() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert focused() == []
    assert "focus" in board.requests
    assert log.alerts() <= {"reader_restarted"}


def test_an_older_board_is_never_sent_a_focus_and_keeps_its_full_cycle(log: Log) -> None:
    with ReaderBoardSim(ANTENNAS, heartbeat_period=0.2, legacy=3) as board:
        driver = driver_for(board, log)
        try:
            assert driver.hello is not None and driver.hello.protocol == 3
            driver.set_focus({"seat1"})
            board.place("seat1", "04A1B2C3D4E5F6")
            assert log.wait(lambda: any(isinstance(i, TagIn) for i in log.items))
            time.sleep(0.5)
            assert driver.focus == () and driver.counters()["focus_frames"] == 0
            fw = board.firmware
            assert fw is not None and fw.focus == 0
        finally:
            driver.stop()
    assert "focus" not in board.requests
    assert log.alerts() == set()


# -- through the daemon ---------------------------------------------------------------


@pytest.fixture
def table(tmp_path: Path, mosquitto_acl: Mosquitto) -> Iterator[tuple[Daemon, ReaderBoardSim]]:
    """The daemon on the example table, its card reader a simulated board on a pty read
    as a USB board (backend "serial"), scanning without the simulator's usual pause."""
    base = load_config(EXAMPLE)
    link = tmp_path / "tablectl-cards"
    board = ReaderBoardSim(
        base.card_reader.antennas, link=link, scan_pause_ms=2, background_ms=800
    )
    board.start()
    config = dataclasses.replace(
        base,
        card_reader=dataclasses.replace(base.card_reader, backend="serial", port=str(link)),
        journal=dataclasses.replace(base.journal, path=tmp_path / "t01.journal"),
    )
    broker = mosquitto_acl.broker_config("table-t01", prefix=PREFIX, client_id="tablectl-t01")
    daemon = Daemon(config, broker=broker)
    daemon.start()
    daemon.devices.sim_boards["card_reader"] = board  # the player deals on it
    try:
        yield daemon, board
    finally:
        daemon.stop()
        board.stop()


def events_of(room: Subscriber) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in room.messages(f"{PREFIX}/events")]


def has_event(kind: str) -> Callable[[list[Received]], bool]:
    return lambda msgs: any(
        json.loads(m.payload).get("type") == kind
        for m in msgs
        if m.topic == f"{PREFIX}/events"
    )


def drop(daemon: Daemon, board: ReaderBoardSim, antenna: str, card: str) -> float:
    """The dealer lets a card fall on an antenna out of focus: only the board's own scan
    can find it. How long until the daemon's driver had it (seconds)."""
    reader = next(d for d in daemon.devices.readers if d.name == "card_reader")
    assert antenna not in reader.focus, (antenna, reader.focus)
    assert reader.focus, "the board has a focus: the hand is under way"
    deck = daemon.engine.deck
    assert deck is not None
    uid = deck.uid_of(card)
    assert uid is not None
    start = time.monotonic()
    board.place(antenna, uid, wait=False)
    while uid.upper() not in reader.positions().get(antenna, ()):
        assert time.monotonic() - start < 10, f"{card} at {antenna} never read"
        time.sleep(0.002)
    return time.monotonic() - start


def play(player: ScriptPlayer, events: list[Event]) -> None:
    for event in events:
        player.perform(event)
        time.sleep(0.02)


def test_rule_RP5B_a_premature_turn_on_a_board_out_of_focus_is_caught_within_the_bound(
    table: tuple[Daemon, ReaderBoardSim], mosquitto_acl: Mosquitto
) -> None:
    """The flop is bet, one player has checked; the dealer burns and turns while the
    others still have to act. The board and the burn are out of focus then (the seat to
    act, its bet zone and the muck are in it): the board's background scan finds them,
    within the bound, and the table rules the premature turn (RP-5B) as it would with
    every antenna read in turn."""
    daemon, board = table
    room = Subscriber(mosquitto_acl, "poker/#", username="room")
    try:
        events = [e for e in load_trace(SCENARIOS / "rule_RP5B_premature_turn.jsonl")]
        burn_at = next(
            i for i, e in enumerate(events)
            if isinstance(e, TagIn) and e.antenna == "burn" and e.card == "3h"
        )
        player = ScriptPlayer(daemon, speed=4.0)
        play(player, events[:burn_at])
        assert room.wait_for(has_event("board_dealt"), 30)  # the flop
        time.sleep(0.3)
        took = [drop(daemon, board, "burn", "3h"), drop(daemon, board, "board", "Jh")]
        assert room.wait_for(has_event("premature_card"), 30), events_of(room)
        premature = next(e for e in events_of(room) if e["type"] == "premature_card")
        assert (premature["street"], premature["rule"], premature["cards"]) == (
            "turn",
            "RP-5B",
            ["Jh"],
        )
        assert max(took) < BOUND_S + SLACK_S, took
    finally:
        room.close()


def test_rule_35A2_a_first_card_to_a_seat_out_of_focus_is_caught_within_the_bound(
    table: tuple[Daemon, ReaderBoardSim], mosquitto_acl: Mosquitto
) -> None:
    """The shuffler: the first two seats left of the button are in focus. The first card
    pitched to the third seat is found by the background scan, within the bound, and the
    hand is a misdeal (rule 35A-2), as with every antenna read in turn."""
    daemon, board = table
    room = Subscriber(mosquitto_acl, "poker/#", username="room")
    try:
        events = load_trace(SCENARIOS / "rule_35A2_first_card_wrong_seat.jsonl")
        first_card = next(i for i, e in enumerate(events) if isinstance(e, TagIn) and e.card)
        player = ScriptPlayer(daemon, speed=4.0)
        play(player, events[:first_card])
        assert room.wait_for(has_event("hand_started"), 30)
        time.sleep(0.3)
        took = drop(daemon, board, "seat3", "Ah")
        assert room.wait_for(has_event("misdeal"), 30), events_of(room)
        misdeal = next(e for e in events_of(room) if e["type"] == "misdeal")
        assert (misdeal["reason"], misdeal["rule"], misdeal["seat"]) == (
            "first_card_wrong_seat",
            "35A-2",
            3,
        )
        assert took < BOUND_S + SLACK_S, took
    finally:
        room.close()
