"""The pcsc badge reader backend against a real pcscd, the vpcd reader and our virtual badge."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from drivers.badge.pcsc import PcscBadgeReader
from firmware_sim.badge_card import VirtualBadge
from tests.pcscd import SLOT0, SLOT1, Pcscd, check_prerequisites, free_port_pair

pytestmark = pytest.mark.timeout(120)

MARIA = "04A1B2C3D4E5F6"
LUCA = "04B2C3D4E5F607"
SHORT = "0A0B0C0D"


class Recorder:
    """What a driver reported, in order, with a way to wait for a condition on it."""

    def __init__(self) -> None:
        self.items: list[tuple[Any, ...]] = []
        self._cond = threading.Condition()

    def _add(self, item: tuple[Any, ...]) -> None:
        with self._cond:
            self.items.append(item)
            self._cond.notify_all()

    def on_badge(self, uid: str, removed: bool) -> None:
        self._add(("badge", uid, removed))

    def on_device(self, state: str) -> None:
        self._add(("device", state))

    def on_alert(self, kind: str, message: str, details: dict[str, Any]) -> None:
        self._add(("alert", kind, message, dict(details)))

    def badges(self) -> list[tuple[str, bool]]:
        with self._cond:
            return [(i[1], i[2]) for i in self.items if i[0] == "badge"]

    def devices(self) -> list[str]:
        with self._cond:
            return [i[1] for i in self.items if i[0] == "device"]

    def alerts(self) -> list[tuple[str, str, dict[str, Any]]]:
        with self._cond:
            return [(i[1], i[2], i[3]) for i in self.items if i[0] == "alert"]

    def wait_for(self, done: Callable[[], bool], timeout: float = 30.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))  # also conditions on the driver's state
            return True

    def wait_badges(self, expected: list[tuple[str, bool]], timeout: float = 30.0) -> None:
        ok = self.wait_for(lambda: len(self.badges()) >= len(expected), timeout)
        assert ok, f"expected badges {expected}, got {self.items}"
        assert self.badges() == expected, self.items


@pytest.fixture(scope="module")
def prerequisites() -> None:
    """A real pcscd with vpcd must be able to run: fail (never skip) with the reason."""
    check_prerequisites()


@pytest.fixture
def pcscd(tmp_path: Path, prerequisites: None) -> Iterator[Pcscd]:
    daemon = Pcscd(tmp_path / "pcscd", free_port_pair())
    daemon.start()
    yield daemon
    daemon.stop()


def start_reader(recorder: Recorder, **kw: Any) -> PcscBadgeReader:
    kw.setdefault("reader", SLOT0)
    reader = PcscBadgeReader(
        on_badge=recorder.on_badge,
        on_device=recorder.on_device,
        on_alert=recorder.on_alert,
        **kw,
    )
    reader.start()
    return reader


@pytest.fixture
def watched(pcscd: Pcscd) -> Iterator[tuple[PcscBadgeReader, Recorder]]:
    recorder = Recorder()
    reader = start_reader(recorder)
    assert recorder.wait_for(lambda: reader.reader_name == SLOT0), recorder.items
    yield reader, recorder
    reader.stop()


@pytest.fixture
def card(pcscd: Pcscd) -> Iterator[VirtualBadge]:
    badge = VirtualBadge(port=pcscd.port)
    yield badge
    badge.remove()


def wait_polls(card: VirtualBadge, polls: int, timeout: float = 30.0) -> None:
    """Until pcscd has polled the card's presence `polls` more times (~0.4 s apart)."""
    target = card.atr_requests + polls
    deadline = time.monotonic() + timeout
    while card.atr_requests < target:
        assert time.monotonic() < deadline, "pcscd stopped polling the virtual card"
        time.sleep(0.05)


def test_a_badge_is_one_arrival_with_its_uid(watched, card) -> None:  # type: ignore[no-untyped-def]
    reader, recorder = watched
    card.insert(MARIA.lower())
    recorder.wait_badges([(MARIA, False)])
    # pcscd keeps checking the card is there; it stays one arrival, read once.
    wait_polls(card, 5)
    assert recorder.badges() == [(MARIA, False)]
    assert card.apdus == [bytes.fromhex("FFCA000000")]
    assert recorder.devices() == [] and recorder.alerts() == []
    assert reader.current == MARIA


def test_removal_then_a_second_badge(watched, card) -> None:  # type: ignore[no-untyped-def]
    _reader, recorder = watched
    card.insert(MARIA)
    recorder.wait_badges([(MARIA, False)])
    card.remove()
    recorder.wait_badges([(MARIA, False), (MARIA, True)])
    card.insert(SHORT)
    recorder.wait_badges([(MARIA, False), (MARIA, True), (SHORT, False)])
    card.remove()
    recorder.wait_badges([(MARIA, False), (MARIA, True), (SHORT, False), (SHORT, True)])
    assert recorder.alerts() == []


def test_a_card_torn_away_abruptly_is_a_removal(watched, card) -> None:  # type: ignore[no-untyped-def]
    _reader, recorder = watched
    card.insert(MARIA)
    recorder.wait_badges([(MARIA, False)])
    card.drop()  # TCP reset: the card is gone without an orderly goodbye
    recorder.wait_badges([(MARIA, False), (MARIA, True)])
    card.insert(LUCA)
    recorder.wait_badges([(MARIA, False), (MARIA, True), (LUCA, False)])
    assert recorder.devices() == []


def test_a_card_that_refuses_get_uid_is_an_alert_not_a_crash(watched, pcscd) -> None:  # type: ignore[no-untyped-def]
    _reader, recorder = watched
    with VirtualBadge(port=pcscd.port, uid_status=bytes.fromhex("6A81")) as odd:
        odd.insert(MARIA)
        assert recorder.wait_for(lambda: len(recorder.alerts()) >= 1), recorder.items
    kind, message, details = recorder.alerts()[0]
    assert kind == "badge_read_failed" and details["sw"] == "6A81" and "6A81" in message
    assert recorder.badges() == []
    # the reader goes on: the next badge is read
    with VirtualBadge(port=pcscd.port) as good:
        good.insert(LUCA)
        recorder.wait_badges([(LUCA, False)])


def test_pcscd_killed_and_restarted(watched, card, pcscd) -> None:  # type: ignore[no-untyped-def]
    reader, recorder = watched
    card.insert(MARIA)
    recorder.wait_badges([(MARIA, False)])
    pcscd.kill()
    # the reader is gone with pcscd: offline, and the badge can no longer be seen
    assert recorder.wait_for(lambda: recorder.devices() == ["offline"]), recorder.items
    recorder.wait_badges([(MARIA, False), (MARIA, True)])
    pcscd.start()
    assert recorder.wait_for(lambda: recorder.devices() == ["offline", "online"]), recorder.items
    # the badge still lying on the reader is read again
    recorder.wait_badges([(MARIA, False), (MARIA, True), (MARIA, False)])
    assert reader.contexts >= 2
    card.remove()
    card.insert(LUCA)
    recorder.wait_badges(
        [(MARIA, False), (MARIA, True), (MARIA, False), (MARIA, True), (LUCA, False)]
    )
    # and once more, stopped in an orderly way this time
    pcscd.stop()
    assert recorder.wait_for(lambda: recorder.devices()[-1:] == ["offline"]), recorder.items
    pcscd.start()
    assert recorder.wait_for(lambda: recorder.devices()[-1:] == ["online"]), recorder.items
    assert recorder.wait_for(lambda: recorder.badges()[-1:] == [(LUCA, False)])
    assert {a[0] for a in recorder.alerts()} <= {"pcsc_unavailable"}


def test_started_while_pcscd_is_down_then_it_comes(tmp_path: Path, prerequisites: None) -> None:
    daemon = Pcscd(tmp_path / "pcscd", free_port_pair())
    recorder = Recorder()
    reader = start_reader(recorder)
    try:
        assert recorder.wait_for(lambda: recorder.devices() == ["offline"]), recorder.items
        assert recorder.wait_for(lambda: any(a[0] == "pcsc_unavailable" for a in recorder.alerts()))
        daemon.start()
        assert recorder.wait_for(lambda: recorder.devices() == ["offline", "online"]), (
            recorder.items
        )
        with VirtualBadge(port=daemon.port) as card:
            card.insert(MARIA)
            recorder.wait_badges([(MARIA, False)])
    finally:
        reader.stop()
        daemon.stop()


def test_the_reader_is_chosen_by_a_name_substring(pcscd) -> None:  # type: ignore[no-untyped-def]
    recorder = Recorder()
    reader = start_reader(recorder, reader="PCD 00 01")
    slot0 = VirtualBadge(port=pcscd.port)
    slot1 = VirtualBadge(port=pcscd.port + 1)
    try:
        assert recorder.wait_for(lambda: reader.reader_name == SLOT1), recorder.items
        slot0.insert(MARIA)  # on the other reader: not ours
        slot1.insert(LUCA)
        recorder.wait_badges([(LUCA, False)])
        wait_polls(slot0, 3)
        assert recorder.badges() == [(LUCA, False)]
    finally:
        slot0.remove()
        slot1.remove()
        reader.stop()


def test_no_matching_reader_is_offline(pcscd) -> None:  # type: ignore[no-untyped-def]
    recorder = Recorder()
    reader = start_reader(recorder, reader="ACR122")
    try:
        assert recorder.wait_for(lambda: recorder.devices() == ["offline"]), recorder.items
        assert reader.reader_name is None
    finally:
        reader.stop()


def test_stop_cancels_the_blocking_wait(pcscd) -> None:  # type: ignore[no-untyped-def]
    recorder = Recorder()
    reader = start_reader(recorder, wait_timeout=600.0)
    assert recorder.wait_for(lambda: reader.reader_name == SLOT0)
    thread = reader._thread
    assert thread is not None
    started = time.monotonic()
    reader.stop()
    assert not thread.is_alive()
    assert time.monotonic() - started < 60, "stop() must cancel SCardGetStatusChange"
