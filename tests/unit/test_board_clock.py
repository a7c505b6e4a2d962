"""A reader board's live reports dated when the board read them, on the host's clock."""

from __future__ import annotations

import pytest

from drivers.reader.board_clock import CREEP, WRAP, BoardClock


def test_a_report_decoded_late_is_dated_when_the_board_read_it() -> None:
    clock = BoardClock()
    # 2 ms in transit
    assert clock.host_time(5_000, received=100.002) == pytest.approx(100.002, abs=1e-3)
    # the host was busy: the next report, read 1 s later on the board, is decoded 45 ms late
    assert clock.host_time(6_000, received=101.047) == pytest.approx(101.002, abs=1e-3)
    # a report that came through faster than any before tightens the offset
    assert clock.host_time(7_000, received=102.001) == pytest.approx(102.001, abs=1e-3)
    assert clock.host_time(7_500, received=102.600) == pytest.approx(102.501, abs=1e-3)


def test_never_later_than_decoded_and_a_slow_board_clock_is_followed() -> None:
    clock = BoardClock()
    clock.host_time(0, received=10.0)
    # the board's crystal is 100 ppm slow: after 1,000 s its time is 0.1 s behind
    t = clock.host_time(999_900, received=1010.0)
    assert t <= 1010.0
    assert 1010.0 - t <= 1000 * CREEP  # followed within the creep allowed


def test_a_board_restart_and_a_wrap_of_its_clock() -> None:
    clock = BoardClock()
    clock.host_time(WRAP - 1_000, received=50.0)
    # wrapped after 49.7 days: 2 s later on the board
    assert clock.host_time(1_000, received=52.0) == pytest.approx(52.0, abs=1e-3)
    # time went back by little: the board restarted; its times start afresh
    assert clock.host_time(500, received=60.0) == pytest.approx(60.0, abs=1e-3)
    assert clock.host_time(1_500, received=61.03) == pytest.approx(61.0, abs=1e-3)
    clock.reset()
    assert clock.host_time(10, received=70.0) == pytest.approx(70.0, abs=1e-3)
