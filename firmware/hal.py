"""What the firmware needs from the hardware: a clock, the front-ends' SPI bus and the USB link.

The board implements these with `machine` and `time` (hal_rp2.py); the simulator implements
them with simulated front-ends and a pseudo-terminal. The firmware's logic (protocol loop,
antenna scan, PN5180 driver) only ever sees these interfaces, so the simulator runs it as is.
"""


class HardwareError(Exception):
    """A front-end or the link misbehaved (stuck BUSY, no interrupt, wrong chip).

    It never crosses the USB link: the board reports it as an ERROR frame.
    """


class Clock:
    """MicroPython's `time` tick functions: ticks wrap, so compare them with ticks_diff."""

    def ticks_ms(self) -> int:
        raise NotImplementedError

    def ticks_us(self) -> int:
        raise NotImplementedError

    def ticks_diff(self, new: int, old: int) -> int:
        raise NotImplementedError

    def sleep_us(self, us: int) -> None:
        raise NotImplementedError

    def sleep_ms(self, ms: int) -> None:
        raise NotImplementedError


class SpiBus:
    """The SPI bus shared by every PN5180, with one chip select and one BUSY line per channel.

    `select(channel)` drives that front-end's NSS low; `busy()` reads the BUSY line of the
    selected channel (the reference board routes it through a multiplexer).
    """

    def select(self, channel: int) -> None:
        raise NotImplementedError

    def deselect(self) -> None:
        raise NotImplementedError

    def busy(self, channel: int) -> bool:
        raise NotImplementedError

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def read(self, count: int) -> bytes:
        raise NotImplementedError

    def reset(self) -> None:
        """Pulse the front-ends' shared RST line (all PN5180s restart)."""
        raise NotImplementedError


class Link:
    """The USB serial link to the host; neither call may block."""

    def read(self) -> bytes | None:
        """The bytes received since the last call (None or b'' when there are none)."""
        raise NotImplementedError

    def write(self, data: bytes) -> int:
        """Send what the link takes now; return how many bytes it took (maybe 0)."""
        raise NotImplementedError
