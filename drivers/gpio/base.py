"""GPIO pin-backend interface: a bank of digital pins by BCM number, and its argument checks."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import ClassVar, Literal, get_args

from kernel.errors import DeviceError

log = logging.getLogger(__name__)

Edge = Literal["falling", "rising", "both"]
"""Which transitions of an input fire its edge callback."""

EdgeCallback = Callable[[int], None]
"""Called with the BCM pin number whose edge was detected (possibly from another thread)."""

EDGES: tuple[str, ...] = get_args(Edge)


class PinBackend(ABC):
    """A bank of digital pins addressed by BCM number.

    Levels are booleans: True is high (3.3 V), False is low (GND). A backend knows nothing
    about buttons or lamps; `drivers.gpio.buttons` gives the pins their meaning.
    """

    name: ClassVar[str]

    @abstractmethod
    def setup_input(self, pin: int, pull_up: bool = True) -> None:
        """Make `pin` an input with the internal pull-up (True) or pull-down (False)."""

    @abstractmethod
    def setup_output(self, pin: int, initial: bool = False) -> None:
        """Make `pin` an output driven at `initial`."""

    @abstractmethod
    def read(self, pin: int) -> bool:
        """The present level of a configured pin (input or output)."""

    @abstractmethod
    def write(self, pin: int, value: bool) -> None:
        """Drive an output pin high (True) or low (False)."""

    @abstractmethod
    def add_edge_callback(
        self, pin: int, edge: Edge, callback: EdgeCallback, bounce_ms: int = 0
    ) -> None:
        """Call `callback(pin)` on each `edge` of an input pin.

        With `bounce_ms` > 0, edges arriving less than `bounce_ms` after the last reported
        one are dropped (RPi.GPIO's `bouncetime` semantics). One registration per pin.
        """

    @abstractmethod
    def close(self, keep: Iterable[int] = ()) -> None:
        """Release every pin this backend configured; idempotent.

        Outputs in `keep` are left driven as they are (e.g. the fault lamp of a table that
        stopped on a fault stays lit after the process has gone).
        """

    def refuse_inputs(self, reason: str) -> None:
        """The table is stopped: stop acknowledging inputs from outside (`reason` says why).

        A backend whose inputs are acknowledged (the simulated bank's control socket)
        answers them as refused from now on; on real pins there is nothing to answer, and
        the button driver drops the presses itself.
        """
        log.info("GPIO %s: inputs refused: %s", self.name, reason)

    def __enter__(self) -> PinBackend:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def check_pin(pin: int) -> int:
    """Validate a pin number (a non-negative int, not a bool); raise DeviceError."""
    if isinstance(pin, bool) or not isinstance(pin, int) or pin < 0:
        raise DeviceError(f"GPIO pin must be a non-negative BCM number, got {pin!r}")
    return pin


def check_edge(edge: str) -> Edge:
    """Validate an edge name; raise DeviceError."""
    if edge not in EDGES:
        raise DeviceError(f"unknown edge {edge!r} (expected one of {', '.join(EDGES)})")
    return edge  # type: ignore[return-value]
