"""The daemon's parts around the loop: systemd supervision, the RP-14 draw, the restart's
resync, the staff file kept in step, the status line."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.draws import DrawRequests
from controller.resync import RESYNC_TIMEOUT, Resync
from controller.staff import StaffMember, load_staff
from controller.staff_sync import file_changes, save
from controller.supervision import Supervisor, status_text
from kernel.errors import RegistryError
from kernel.inputs import ButtonPress, Command, Device, Event, TagIn, TagOut

MARIA = StaffMember("04A1B2C3D4E5F6", "Maria Rossi", "dealer")
LUCA = StaffMember("04B2C3D4E5F607", "Luca Bianchi", "dealer")
GIULIA = StaffMember("04F1E2D3C4B5A6", "Giulia Ferrari", "floor")


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Manager:
    """The service manager's end of $NOTIFY_SOCKET: a real datagram socket."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.setblocking(False)

    def received(self) -> list[str]:
        out = []
        while True:
            try:
                out.append(self.sock.recv(4096).decode())
            except BlockingIOError:
                return out


@pytest.fixture
def manager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Manager]:
    path = tmp_path / "notify"
    end = Manager(path)
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    yield end
    end.sock.close()


def test_supervisor_pings_the_watchdog_every_half_period(
    manager: Manager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")  # WatchdogSec=10
    clock = Clock()
    supervisor = Supervisor(clock)
    supervisor.ready("table t01: between hands, 0 dealt")
    assert manager.received() == ["READY=1\nSTATUS=table t01: between hands, 0 dealt"]
    assert supervisor.wait_limit(None) == 0.0  # the first ping is due at once
    supervisor.ping()
    assert manager.received() == ["WATCHDOG=1"]
    assert supervisor.wait_limit(None) == 5.0
    assert supervisor.wait_limit(2.0) == 2.0  # an engine timer due sooner wins
    clock.now += 4.0
    supervisor.ping()
    assert manager.received() == []  # not due yet
    assert supervisor.wait_limit(3.0) == 1.0
    clock.now += 1.0
    supervisor.ping()
    assert manager.received() == ["WATCHDOG=1"]


def test_supervisor_sends_a_status_only_when_it_changes(manager: Manager) -> None:
    supervisor = Supervisor(Clock())
    supervisor.ready("a")
    supervisor.status("a")
    supervisor.status("b")
    supervisor.status("b")
    supervisor.stopping()
    assert manager.received() == ["READY=1\nSTATUS=a", "STATUS=b", "STOPPING=1"]


def test_supervisor_without_a_watchdog_never_shortens_a_wait(manager: Manager) -> None:
    supervisor = Supervisor(Clock())
    supervisor.ready("a")
    assert supervisor.wait_limit(None) is None and supervisor.wait_limit(7.5) == 7.5
    supervisor.ping()
    assert manager.received() == ["READY=1\nSTATUS=a"]


def test_status_text_says_the_hand_and_the_faulty_devices() -> None:
    assert status_text("t01", None, 12, set()) == "table t01: between hands, 12 dealt"
    assert (
        status_text("t01", 13, 12, {"chip_reader", "card_reader"})
        == "table t01: hand 13 in progress; device fault: card_reader, chip_reader"
    )


def test_rule_RP14_a_wanted_draw_becomes_one_journaled_draw_command() -> None:
    asked: list[int] = []

    def randbelow(of: int) -> int:
        asked.append(of)
        return of - 1

    draws = DrawRequests(randbelow)
    assert draws.command(None, lambda: 1.0) is None
    want = ("four_card_flop", 4)
    assert draws.command(want, lambda: 2.5) == Command(
        2.5, "draw", {"purpose": "four_card_flop", "pick": 3, "of": 4}
    )
    assert draws.command(want, lambda: 3.0) is None  # asked once, however often looked at
    assert draws.command(None, lambda: 4.0) is None  # answered
    assert draws.command(want, lambda: 9.0) is not None  # a later four-card flop: drawn anew
    assert asked == [4, 4]


def test_resync_dates_chips_of_a_cut_push_to_the_crash_until_the_reader_caught_up() -> None:
    clock = Clock()
    resync = Resync(clock)
    assert not resync.pending()
    resync.begin(("card_reader", "chip_reader"), crash_t=41.5, unsettled=[3])
    assert resync.pending()
    chip = TagIn(50.0, "bet3", chip="c1", value=100)
    assert resync.date("chip_reader", chip).t == 41.5  # the push is read whole
    assert resync.date("chip_reader", TagIn(50.0, "bet4", chip="c2", value=100)).t == 50.0
    assert resync.date("chip_reader", TagOut(50.0, "bet3", chip="c1", value=100)).t == 50.0
    resync.reader_back("chip_reader")
    assert resync.date("chip_reader", chip).t == 50.0  # caught up: a new push is a new push
    assert resync.pending()  # the card reader has not re-read its antennas yet
    resync.reader_back("card_reader")
    assert not resync.pending()


def test_resync_gives_up_waiting_after_its_timeout() -> None:
    clock = Clock()
    resync = Resync(clock)
    resync.begin(("card_reader",), crash_t=0.0, unsettled=[])
    clock.now += RESYNC_TIMEOUT - 0.1
    assert resync.pending()
    clock.now += 0.1
    assert not resync.pending()  # timers fire again; the table is not frozen by a dead board


def test_resync_merges_both_boards_catch_up_by_board_time_after_a_restart() -> None:
    """The chip board re-reads a call made at 10.2, the card board the burn (10.5) and the
    flop card (10.6), each board in its antenna order: released together, in the order
    the moves were made, once both are back; what has no known time (a tag gone from the
    table) first; the `online` reports after the moves."""
    out: list[Event] = []
    resync = Resync(Clock(), sink=out.append)
    resync.begin(("card_reader", "chip_reader"), crash_t=9.0, unsettled=[])
    flop = TagIn(20.0, "board", card="Kd")
    burn = TagIn(20.0, "burn", card="2c")
    gone = TagOut(20.0, "muck", card="7h")
    resync.catch_up("card_reader", [(gone, None), (flop, 10.6), (burn, 10.5)])
    resync.device("card_reader", Device(20.0, "card_reader", "online"))
    assert out == []  # the chip board has not said what it saw meanwhile
    call = TagIn(20.1, "bet3", chip="c1", value=100)
    resync.catch_up("chip_reader", [(call, 10.2)])
    resync.device("chip_reader", Device(20.1, "chip_reader", "online"))
    # each dated no earlier than the one before it (the reorder window keeps this order;
    # the loop would date them so anyway)
    assert out == [
        gone,
        call,
        dataclasses.replace(burn, t=20.1),
        dataclasses.replace(flop, t=20.1),
        Device(20.1, "card_reader", "online"),
        Device(20.1, "chip_reader", "online"),
    ]
    live = TagIn(21.0, "board", card="9s")
    resync.admit("card_reader", live)
    assert out[-1] == live  # caught up: live moves go straight through


def test_resync_holds_the_other_board_while_a_reader_is_unplugged() -> None:
    """The chip board goes offline with seat 3's push in progress; the card board's live
    moves wait. Replugged, its catch-up (times unknown: it rebooted) goes first, a chip
    for the cut push dated to the moment it went away, then the card board's moves."""
    out: list[Event] = []
    resync = Resync(Clock(), sink=out.append)
    offline = Device(30.0, "chip_reader", "offline")
    resync.device("chip_reader", offline)
    assert out == [offline]
    resync.gone("chip_reader", 30.0, unsettled=[3])
    burn = TagIn(31.0, "burn", card="2c")
    resync.admit("card_reader", burn)
    assert out == [offline]
    chip = TagIn(40.0, "bet3", chip="c2", value=100)
    other = TagIn(40.0, "bet4", chip="c3", value=100)
    resync.catch_up("chip_reader", [(chip, None), (other, None)])
    resync.device("chip_reader", Device(40.0, "chip_reader", "online"))
    assert out == [
        offline,
        TagIn(30.0, "bet3", chip="c2", value=100),  # the push goes on
        other,
        dataclasses.replace(burn, t=40.0),  # after `other`: dated no earlier
        Device(40.0, "chip_reader", "online"),
    ]


def test_resync_keeps_a_press_behind_the_moves_it_holds_back() -> None:
    """While the chip board is away the card board's fold is held; the next seat's check
    pressed after it waits behind it. With nothing held a press goes straight through."""
    out: list[Event] = []
    resync = Resync(Clock(), sink=out.append)
    resync.device("chip_reader", Device(30.0, "chip_reader", "offline"))
    shuffler = ButtonPress(30.5, "shuffler")
    resync.admit_press(shuffler)
    assert out[-1] == shuffler  # refused by the engine at once (the table is held)
    fold = TagIn(31.0, "muck", card="7h")
    check = ButtonPress(32.0, "check")
    resync.admit("card_reader", fold)
    resync.admit_press(check)
    assert out[-1] == shuffler
    resync.device("chip_reader", Device(40.0, "chip_reader", "online"))
    assert out[-3:] == [fold, check, Device(40.0, "chip_reader", "online")]


def test_resync_releases_what_it_held_when_a_board_never_comes_back_after_a_restart() -> None:
    clock = Clock()
    out: list[Event] = []
    resync = Resync(clock, sink=out.append)
    resync.begin(("card_reader", "chip_reader"), crash_t=0.0, unsettled=[])
    card = TagIn(1.0, "seat1", card="As")
    resync.catch_up("card_reader", [(card, 0.5)])
    resync.device("card_reader", Device(1.0, "card_reader", "online"))
    clock.now += RESYNC_TIMEOUT
    assert not resync.pending() and out == [card, Device(1.0, "card_reader", "online")]


def as_roster(*members: StaffMember) -> dict[str, tuple[str, str]]:
    return {m.uid: (m.name, m.role) for m in members}


def write_staff_file(path: Path, *members: StaffMember) -> Path:
    save(path, as_roster(*members))
    return path


def test_staff_file_edits_made_while_stopped_become_staff_commands(tmp_path: Path) -> None:
    renamed = StaffMember(LUCA.uid, "Luca Bianchi-Verdi", "floor")
    path = write_staff_file(tmp_path / "staff.toml", MARIA, renamed, GIULIA)
    registry = as_roster(MARIA, LUCA, StaffMember("0A0B0C0D", "Gone Person", "dealer"))
    assert file_changes(path, registry, 7.0) == [
        Command(7.0, "staff", {"uid": LUCA.uid, "person": "Luca Bianchi-Verdi", "role": "floor"}),
        Command(7.0, "staff", {"uid": GIULIA.uid, "person": "Giulia Ferrari", "role": "floor"}),
        Command(7.0, "staff", {"uid": "0A0B0C0D", "remove": True}),
    ]
    assert file_changes(path, as_roster(MARIA, renamed, GIULIA), 8.0) == []


def test_staff_file_follows_the_registry_and_a_bad_file_is_refused(tmp_path: Path) -> None:
    path = write_staff_file(tmp_path / "staff.toml", GIULIA, MARIA)
    assert sorted(m.uid for m in load_staff(path)) == sorted([GIULIA.uid, MARIA.uid])
    path.write_text("[[staff]]\nuid = 'zz'\n")
    with pytest.raises(RegistryError):
        file_changes(path, {}, 0.0)
