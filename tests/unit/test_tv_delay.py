"""The secure delay line, on an injected clock: nothing leaves before its time."""

from __future__ import annotations

import math

import pytest

from broadcast.clock import ManualClock
from broadcast.delay import DelayError, DelayLine, Held, check_delay


def held(t: float, hand: int | None, n: int = 0) -> Held:
    return Held(arrived=t, hand=hand, kind="events", payload={"n": n})


def test_nothing_is_released_before_its_arrival_plus_the_delay() -> None:
    clock = ManualClock(100.0)
    line = DelayLine(30.0)
    line.push(held(clock.now(), 1, 1))
    clock.advance(5)
    line.push(held(clock.now(), 1, 2))
    clock.advance(24.999)
    assert line.release(clock.now()) == []
    clock.advance(0.001)
    assert [h.payload["n"] for h in line.release(clock.now())] == [1]
    clock.advance(4.999)
    assert line.release(clock.now()) == []
    clock.advance(0.001)
    assert [h.payload["n"] for h in line.release(clock.now())] == [2]
    assert len(line) == 0 and line.next_release() is None


def test_zero_delay_releases_at_once_in_order() -> None:
    line = DelayLine(0.0)
    for n in range(5):
        line.push(held(10.0, 1, n))
    assert [h.payload["n"] for h in line.release(10.0)] == [0, 1, 2, 3, 4]


def test_a_longer_delay_applies_at_once_to_what_is_held() -> None:
    line = DelayLine(10.0)
    line.push(held(0.0, 1, 1))
    line.set_delay(20.0)
    assert line.release(15.0) == []
    assert len(line.release(20.0)) == 1
    assert line.in_force == 20.0


def test_a_shorter_delay_waits_for_the_next_hand() -> None:
    line = DelayLine(30.0)
    line.push(held(0.0, 7, 1))  # hand 7 starts under 30 s
    line.set_delay(5.0)
    line.push(held(10.0, 7, 2))  # still hand 7: still 30 s
    assert line.in_force == 30.0 and line.configured == 5.0
    assert line.release(29.999) == []
    assert [h.payload["n"] for h in line.release(30.0)] == [1]
    line.push(held(50.0, 8, 3))  # hand 8 starts under the new 5 s
    assert line.in_force == 5.0
    assert line.release(39.999) == []  # hand 7's second input waits its 30 s
    assert [h.payload["n"] for h in line.release(40.0)] == [2]
    assert line.release(54.999) == []
    assert [h.payload["n"] for h in line.release(55.0)] == [3]


def test_order_is_kept_when_a_shorter_delay_starts_a_hand() -> None:
    line = DelayLine(30.0)
    line.push(held(0.0, 1, 1))
    line.set_delay(2.0)
    line.push(held(1.0, 2, 2))  # due at 3.0 on its own, but never before hand 1's input
    assert line.release(3.0) == []
    assert [h.payload["n"] for h in line.release(30.0)] == [1, 2]


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, 3601.0, True, "30"])
def test_impossible_delays_are_refused(bad: object) -> None:
    with pytest.raises(DelayError):
        check_delay(bad)  # type: ignore[arg-type]
    line = DelayLine(1.0)
    with pytest.raises(DelayError):
        line.set_delay(bad)  # type: ignore[arg-type]
    assert line.configured == 1.0


def test_the_manual_clock_never_goes_back() -> None:
    clock = ManualClock(5.0)
    with pytest.raises(ValueError):
        clock.advance(-1)
    assert clock.advance(2.5) == 7.5
