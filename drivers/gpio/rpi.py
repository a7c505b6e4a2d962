"""RPi.GPIO backend (BCM numbering); RPi.GPIO or rpi-lgpio is imported only when it is created."""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Iterable
from typing import Any

from drivers.gpio.base import Edge, EdgeCallback, PinBackend, check_edge, check_pin
from kernel.errors import DeviceError

log = logging.getLogger(__name__)

INSTALL_HINT = (
    "install RPi.GPIO on a Raspberry Pi 4 (`pip install RPi.GPIO`) or rpi-lgpio on a "
    "Raspberry Pi 5 (`pip install rpi-lgpio`, or `apt install python3-rpi-lgpio`); rpi-lgpio "
    "provides the same RPi.GPIO module, is also needed on a Pi 4 running kernel 6.6 or later, "
    "and must not be installed next to RPi.GPIO"
)
EDGE_HINT = (
    "; RPi.GPIO 0.7 cannot detect edges on kernel 6.6 or later (Raspberry Pi OS since "
    "March 2024): replace RPi.GPIO with rpi-lgpio"
)


def _import_gpio() -> Any:
    try:
        return importlib.import_module("RPi.GPIO")
    except ImportError as exc:
        raise DeviceError(
            f"GPIO backend 'rpi' needs the RPi.GPIO module, which is missing ({exc}): "
            f"{INSTALL_HINT}; off a Pi, use backend 'sim'"
        ) from exc
    except RuntimeError as exc:  # RPi.GPIO raises this when not run on a Raspberry Pi
        raise DeviceError(f"GPIO backend 'rpi' cannot start: {exc}") from exc


class RpiBackend(PinBackend):
    """The Raspberry Pi header through RPi.GPIO (Pi 4) or rpi-lgpio (Pi 5), BCM numbers.

    `close()` cleans up only the pins this backend configured, leaving others alone.
    Errors of the library are re-raised as DeviceError naming the pin.
    """

    name = "rpi"

    def __init__(self, gpio: Any = None) -> None:
        self._gpio: Any = gpio if gpio is not None else _import_gpio()
        self._lock = threading.Lock()
        self._modes: dict[int, str] = {}
        self._edges: set[int] = set()
        self._closed = False
        self._call("setwarnings", False)  # a restart after a crash finds our pins in use
        self._call("setmode", self._gpio.BCM)

    def setup_input(self, pin: int, pull_up: bool = True) -> None:
        pud = self._gpio.PUD_UP if pull_up else self._gpio.PUD_DOWN
        with self._lock:
            self._claim(pin, "in")
            self._call("setup", pin, self._gpio.IN, pull_up_down=pud, pin=pin)
            self._modes[pin] = "in"

    def setup_output(self, pin: int, initial: bool = False) -> None:
        level = self._gpio.HIGH if initial else self._gpio.LOW
        with self._lock:
            self._claim(pin, "out")
            self._call("setup", pin, self._gpio.OUT, initial=level, pin=pin)
            self._modes[pin] = "out"

    def read(self, pin: int) -> bool:
        self._known(pin)
        return bool(self._call("input", pin, pin=pin))

    def write(self, pin: int, value: bool) -> None:
        if self._known(pin) != "out":
            raise DeviceError(f"GPIO{pin} is an input; it cannot be written")
        self._call("output", pin, self._gpio.HIGH if value else self._gpio.LOW, pin=pin)

    def add_edge_callback(
        self, pin: int, edge: Edge, callback: EdgeCallback, bounce_ms: int = 0
    ) -> None:
        check_edge(edge)
        if bounce_ms < 0:
            raise DeviceError(f"bounce_ms must not be negative, got {bounce_ms}")
        gpio_edge = {
            "falling": self._gpio.FALLING,
            "rising": self._gpio.RISING,
            "both": self._gpio.BOTH,
        }[edge]

        def guarded(channel: int) -> None:
            # Runs in RPi.GPIO's event thread, which would only print an exception.
            try:
                callback(channel)
            except Exception:
                log.exception("GPIO%d edge callback failed", channel)

        kwargs: dict[str, Any] = {"callback": guarded}
        if bounce_ms > 0:  # RPi.GPIO refuses bouncetime=0: leave it out instead
            kwargs["bouncetime"] = bounce_ms
        with self._lock:
            if self._known(pin) != "in":
                raise DeviceError(f"GPIO{pin} is an output; edges are detected on inputs only")
            if pin in self._edges:
                raise DeviceError(f"GPIO{pin} already has edge detection")
            self._call("add_event_detect", pin, gpio_edge, pin=pin, **kwargs)
            self._edges.add(pin)

    def close(self, keep: Iterable[int] = ()) -> None:
        held = set(keep)
        with self._lock:
            if self._closed:
                return
            self._closed = True
            for pin in sorted(self._edges):
                try:
                    self._gpio.remove_event_detect(pin)
                except Exception as exc:  # best effort while shutting down
                    log.warning("GPIO%d: remove_event_detect failed: %s", pin, exc)
            # a kept output stays driven after exit (RPi.GPIO resets only the pins cleaned up)
            pins = sorted(p for p, mode in self._modes.items() if not (mode == "out" and p in held))
            self._edges.clear()
            self._modes.clear()
            if pins:
                try:
                    self._gpio.cleanup(pins)
                except Exception as exc:
                    log.warning("GPIO cleanup of %s failed: %s", pins, exc)

    # -- internals ----------------------------------------------------------------------

    def _claim(self, pin: int, mode: str) -> None:
        if self._closed:
            raise DeviceError("the RPi.GPIO backend is closed")
        check_pin(pin)
        existing = self._modes.get(pin)
        if existing is not None and existing != mode:
            kind = "an output" if existing == "out" else "an input"
            raise DeviceError(f"GPIO{pin} is already {kind}")

    def _known(self, pin: int) -> str:
        if self._closed:
            raise DeviceError("the RPi.GPIO backend is closed")
        check_pin(pin)
        mode = self._modes.get(pin)
        if mode is None:
            raise DeviceError(f"GPIO{pin} is not configured")
        return mode

    def _call(self, func: str, *args: Any, pin: int | None = None, **kwargs: Any) -> Any:
        try:
            return getattr(self._gpio, func)(*args, **kwargs)
        except (RuntimeError, ValueError, OSError) as exc:
            where = f"GPIO{pin}: " if pin is not None else ""
            hint = EDGE_HINT if func == "add_event_detect" else ""
            raise DeviceError(f"{where}RPi.GPIO {func} failed: {exc}{hint}") from exc
