"""MicroPython's clock for the firmware: the `time` module's wrapping ticks."""

import time

from firmware.hal import Clock


class TicksClock(Clock):
    """time.ticks_ms / ticks_us (they wrap: 2**30 on the RP2040), compared with ticks_diff.

    Ticks are small ints; the MicroPython stubs make them opaque types so that only
    ticks_diff compares them, which the Clock interface also requires.
    """

    def ticks_ms(self) -> int:
        return time.ticks_ms()  # type: ignore[return-value]

    def ticks_us(self) -> int:
        return time.ticks_us()  # type: ignore[return-value]

    def ticks_diff(self, new: int, old: int) -> int:
        return time.ticks_diff(new, old)

    def sleep_us(self, us: int) -> None:
        time.sleep_us(us)

    def sleep_ms(self, ms: int) -> None:
        time.sleep_ms(ms)
