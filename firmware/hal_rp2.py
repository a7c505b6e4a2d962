"""The reference board's hardware (Raspberry Pi Pico / Pico 2): SPI to the PN5180s through a
chip-select decoder and a BUSY multiplexer, the USB serial link, and the start-up."""

import select
import sys

import machine
import micropython

from firmware import config
from firmware.board import Board, TxFifo
from firmware.clock import TicksClock
from firmware.hal import Link, SpiBus
from firmware.pn5180 import PN5180
from firmware.scanner import Antenna, Scanner


class MuxSpiBus(SpiBus):
    """SPI0 shared by every PN5180; S0..S3 address one of 16 front-ends on a 74HC154 (NSS)
    and on a CD74HC4067 (its BUSY line); the NSS pin enables the decoder."""

    def __init__(self, pins: dict[str, object], spi_hz: int) -> None:
        def pin(name: str) -> int:
            value = pins[name]
            assert isinstance(value, int)
            return value

        select_pins = pins["select"]
        assert isinstance(select_pins, list)
        self.spi = machine.SPI(
            0,
            baudrate=spi_hz,
            polarity=0,
            phase=0,
            sck=machine.Pin(pin("sck")),
            mosi=machine.Pin(pin("mosi")),
            miso=machine.Pin(pin("miso")),
        )
        self.nss = machine.Pin(pin("nss"), machine.Pin.OUT, value=1)
        self.address = [machine.Pin(number, machine.Pin.OUT, value=0) for number in select_pins]
        self.busy_pin = machine.Pin(pin("busy"), machine.Pin.IN)
        self.reset_pin = machine.Pin(pin("reset"), machine.Pin.OUT, value=1)
        self.channel = -1

    def _route(self, channel: int) -> None:
        if channel != self.channel:
            for bit, line in enumerate(self.address):
                line.value((channel >> bit) & 1)
            self.channel = channel

    def select(self, channel: int) -> None:
        self._route(channel)
        self.nss.value(0)

    def deselect(self) -> None:
        self.nss.value(1)

    def busy(self, channel: int) -> bool:
        self._route(channel)
        return self.busy_pin.value() == 1

    def write(self, data: bytes) -> None:
        self.spi.write(data)

    def read(self, count: int) -> bytes:
        buffer = bytearray(count)
        self.spi.readinto(buffer, 0xFF)
        return bytes(buffer)

    def reset(self) -> None:
        import time

        self.reset_pin.value(0)
        time.sleep_us(100)  # RESET_N low for at least 10 us
        self.reset_pin.value(1)
        time.sleep_ms(3)  # boot of the PN5180s (BUSY is high meanwhile)


class UsbLink(Link):
    """The Pico's USB CDC serial port (MicroPython's stdio) as a raw byte link.

    Ctrl-C is turned off (a 0x03 in a frame must not interrupt the firmware); writes go out
    only when the port can take them, in small pieces, so the scan loop never blocks.
    """

    def __init__(self) -> None:
        micropython.kbd_intr(-1)
        self.inp = select.poll()
        self.inp.register(sys.stdin, select.POLLIN)
        self.out = select.poll()
        self.out.register(sys.stdout, select.POLLOUT)
        self.waiting = -1  # ticks_ms since the port last refused to take bytes

    def read(self) -> bytes | None:
        data = bytearray()
        while len(data) < 256 and self.inp.poll(0):
            chunk = sys.stdin.buffer.read(1)
            if not chunk:
                break
            data += chunk
        return bytes(data)

    def write(self, data: bytes) -> int:
        import time

        if not self.out.poll(0):
            # Not writable: the host is not reading. Should a port never report POLLOUT,
            # write anyway after a second (MicroPython then waits at most its CDC timeout).
            now = time.ticks_ms()
            if self.waiting < 0:
                self.waiting = now  # type: ignore[assignment]
                return 0
            if time.ticks_diff(now, self.waiting) < 1000:
                return 0
        self.waiting = -1
        written = sys.stdout.buffer.write(data)
        return len(data) if written is None else written


def build(settings: dict[str, object]) -> Board:
    """The board described by `settings` (firmware/config.py, /board.json)."""
    pins = settings["pins"]
    assert isinstance(pins, dict)
    spi_hz = settings["spi_hz"]
    assert isinstance(spi_hz, int)
    bus = MuxSpiBus(pins, spi_hz)
    bus.reset()
    clock = TicksClock()
    chips: dict[int, PN5180] = {}
    antennas = []
    protocols = settings["protocols"]
    assert isinstance(protocols, list)
    layout = settings["antennas"]
    assert isinstance(layout, list)
    for name, channels in layout:
        frontends = []
        for channel in channels:
            if channel not in chips:
                chips[channel] = PN5180(bus, channel, clock)
            frontends.append(chips[channel])
        antennas.append(Antenna(name, frontends, tuple(protocols)))

    def number(key: str) -> int:
        value = settings[key]
        assert isinstance(value, int)
        return value

    scanner = Scanner(
        antennas,
        number("debounce_in"),
        number("debounce_out"),
        confirm_ms=number("confirm_ms"),
        max_tags=number("max_tags"),
        recheck_ms=number("recheck_ms"),
        full_ms=number("full_ms"),
    )
    kind = settings["kind"]
    firmware = settings["firmware"]
    assert isinstance(kind, str) and isinstance(firmware, str)
    return Board(
        scanner,
        UsbLink(),
        clock,
        kind=kind,
        firmware=firmware,
        heartbeat_ms=number("heartbeat_ms"),
        inventory_ms=number("inventory_ms"),
        fifo=TxFifo(number("tx_fifo")),
        background_ms=number("background_ms"),
        slice_ms=number("slice_ms"),
        rx_timeout_ms=number("rx_timeout_ms"),
    )


def start() -> None:
    """Run the board, unless the maintenance jumper is set (then the REPL stays free)."""
    settings = config.load()
    pins = settings["pins"]
    assert isinstance(pins, dict)
    jumper = machine.Pin(pins["maintenance"], machine.Pin.IN, machine.Pin.PULL_UP)
    if jumper.value() == 0:
        print("tablefw: maintenance jumper set, not starting")
        return
    led = machine.Pin(pins["led"], machine.Pin.OUT)
    board = build(settings)
    watchdog = machine.WDT(timeout=8000)  # a stuck loop reboots: the host sees a new HELLO
    beat = 0
    while True:
        wait = board.step()
        watchdog.feed()
        beat += 1
        led.value((beat >> 6) & 1)
        if wait > 0:
            machine.idle()
