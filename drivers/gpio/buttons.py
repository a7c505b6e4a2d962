"""The table's buttons (debounced presses as ButtonPress events) and lamps, on a PinBackend."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from drivers.gpio.base import PinBackend
from kernel.errors import ConfigError
from kernel.inputs import BUTTON_NAMES, ButtonPress

LAMP_NAMES = ("floor", "pending", "fault")
"""The table lamps the engine drives (besides one all-in lamp per seat, TDA RP-1)."""

DEFAULT_STUCK_AFTER = 10.0
"""Seconds a button may be held before `TableButtons.stuck()` reports it."""


@dataclass(frozen=True, slots=True)
class PinPlan:
    """Which BCM pin each button and lamp of the table is on, and the buttons' debounce time.

    Buttons: the shuffler's, the dealer panel's by name, the all-in buttons by seat. Lamps:
    floor / pending / fault by name, the all-in lamps by seat (TDA RP-1).
    """

    shuffler: int | None = None
    panel: Mapping[str, int] = field(default_factory=dict)
    allin_buttons: Mapping[int, int] = field(default_factory=dict)
    lamps: Mapping[str, int] = field(default_factory=dict)
    allin_lamps: Mapping[int, int] = field(default_factory=dict)
    bounce_ms: int = 50


@dataclass(slots=True)
class _Button:
    name: str
    seat: int | None
    inactive_since: float | None  # when the line last went high (released); None while low
    active_since: float | None  # when the line last went low (pressed); None while high


def _label(name: str, seat: int | None) -> str:
    return name if seat is None else f"{name} seat {seat}"


def _claim(used: dict[int, str], pin: int, what: str) -> None:
    if pin in used:
        raise ConfigError(f"pins: GPIO{pin} is used twice ({used[pin]} and {what})")
    used[pin] = what


class TableButtons:
    """Shuffler, dealer-panel and all-in buttons: active low, internal pull-ups.

    Each debounced press calls `on_event(ButtonPress(t=clock(), name, seat))`, from the
    backend's callback thread. Debouncing is done here rather than by the backend's
    `bounce_ms`: the backend's filter also drops the release edge of a short tap and lets
    the bounce of a release through as a new press after a long hold. Instead every edge
    (both directions) is checked against the pin's present level, and a low level counts
    as a press only when the line had been steadily high for `plan.bounce_ms`. A button
    held down gives one press; a button held at start-up gives none until released.
    """

    def __init__(
        self,
        backend: PinBackend,
        plan: PinPlan,
        on_event: Callable[[ButtonPress], None],
        clock: Callable[[], float],
        *,
        stuck_after: float = DEFAULT_STUCK_AFTER,
    ) -> None:
        self._backend = backend
        self._on_event = on_event
        self._clock = clock
        self._window = max(plan.bounce_ms, 0) / 1000.0
        self._stuck_after = stuck_after
        self._lock = threading.Lock()
        self._buttons: dict[int, _Button] = {}
        self.refusal: str | None = None  # set once the table is stopped: presses dropped

        wanted: list[tuple[int, str, int | None]] = []
        if plan.shuffler is not None:
            wanted.append((plan.shuffler, "shuffler", None))
        for name, pin in sorted(plan.panel.items()):
            if name not in BUTTON_NAMES or name in ("shuffler", "allin"):
                known = ", ".join(sorted(BUTTON_NAMES - {"shuffler", "allin"}))
                raise ConfigError(f"pins.panel.{name}: unknown panel button (one of: {known})")
            wanted.append((pin, name, None))
        for allin_seat, pin in sorted(plan.allin_buttons.items()):
            wanted.append((pin, "allin", allin_seat))
        used: dict[int, str] = {}
        for pin, name, seat in wanted:
            _claim(used, pin, f"button {_label(name, seat)}")

        for pin, name, seat in wanted:
            backend.setup_input(pin, pull_up=True)
            now = clock()
            held = not backend.read(pin)
            self._buttons[pin] = _Button(
                name=name,
                seat=seat,
                inactive_since=None if held else -math.inf,
                active_since=now if held else None,
            )
            backend.add_edge_callback(pin, "both", self._on_edge, bounce_ms=0)

    def pins(self) -> dict[int, tuple[str, int | None]]:
        """Configured buttons: pin -> (name, seat)."""
        return {pin: (b.name, b.seat) for pin, b in sorted(self._buttons.items())}

    def stuck(self) -> list[tuple[str, int | None]]:
        """Buttons held low for longer than `stuck_after` seconds, as (name, seat).

        Polls the pins, so the daemon can call it on its timer and raise a device alert.
        """
        out: list[tuple[str, int | None]] = []
        for pin, button in sorted(self._buttons.items()):
            low = not self._backend.read(pin)
            now = self._clock()
            with self._lock:
                if not low:
                    if button.active_since is not None:  # missed the release edge
                        button.active_since = None
                        button.inactive_since = now
                    continue
                if button.active_since is None:
                    button.active_since = now
                if now - button.active_since > self._stuck_after:
                    out.append((button.name, button.seat))
        return out

    def refuse(self, reason: str) -> None:
        """The table is stopped: no press is taken from now on, and the backend is told
        (the simulated bank answers its presses `refused: <reason>`)."""
        with self._lock:
            self.refusal = reason
        self._backend.refuse_inputs(reason)

    def _on_edge(self, pin: int) -> None:
        now = self._clock()  # the edge, stamped before anything else (the interrupt)
        button = self._buttons.get(pin)
        if button is None or self.refusal is not None:
            return
        low = not self._backend.read(pin)
        with self._lock:
            if not low:
                if button.inactive_since is None:
                    button.inactive_since = now
                button.active_since = None
                return
            if button.inactive_since is None:  # already low: a repeated edge, not a press
                return
            steady = now - button.inactive_since >= self._window
            button.inactive_since = None
            button.active_since = now
            if steady:
                # Emitted under the lock so that presses reach the queue in time order.
                self._on_event(ButtonPress(t=now, name=button.name, seat=button.seat))


class Lamps:
    """The floor / pending / fault lamps and the all-in lamps, active high, off at start.

    Lamps absent from the configuration are ignored silently, so a table wired without
    some of them runs unchanged; `available()` says which ones exist.
    """

    def __init__(self, backend: PinBackend, plan: PinPlan) -> None:
        self._backend = backend
        self._lock = threading.Lock()
        self._pins: dict[str, int] = {}
        self._allin: dict[int, int] = {}
        self._on: dict[int, bool] = {}

        used: dict[int, str] = {}
        for name, pin in sorted(plan.lamps.items()):
            if name not in LAMP_NAMES:
                raise ConfigError(
                    f"pins.lamps.{name}: unknown lamp (expected one of: {', '.join(LAMP_NAMES)})"
                )
            _claim(used, pin, f"lamp {name}")
            self._pins[name] = pin
        for seat, pin in sorted(plan.allin_lamps.items()):
            _claim(used, pin, f"all-in lamp seat {seat}")
            self._allin[seat] = pin
        for pin in used:
            backend.setup_output(pin, initial=False)
            self._on[pin] = False

    def available(self) -> list[str]:
        """Configured lamps: names among floor/pending/fault, then `allin<seat>`."""
        names = [name for name in LAMP_NAMES if name in self._pins]
        return names + [f"allin{seat}" for seat in sorted(self._allin)]

    def set(self, name: str, on: bool) -> None:
        """Switch the floor, pending or fault lamp; an unconfigured lamp is ignored."""
        pin = self._pins.get(name)
        if pin is not None:
            self._write(pin, on)

    def set_allin(self, seat: int, on: bool) -> None:
        """Switch seat `seat`'s all-in lamp (TDA RP-1); an unconfigured lamp is ignored."""
        pin = self._allin.get(seat)
        if pin is not None:
            self._write(pin, on)

    def is_on(self, name: str) -> bool:
        """Whether a lamp (`floor`, ..., or `allin<seat>`) was last switched on."""
        pin = self._pins.get(name)
        if pin is None and name.startswith("allin") and name[5:].isdigit():
            pin = self._allin.get(int(name[5:]))
        with self._lock:
            return pin is not None and self._on.get(pin, False)

    def apply(self, states: Mapping[str, bool]) -> None:
        """Switch several lamps by name (`floor`, `pending`, `fault`, `allin<seat>`)."""
        for name, on in states.items():
            seat = name[5:]
            if name.startswith("allin") and seat.isdigit():
                self.set_allin(int(seat), on)
            else:
                self.set(name, on)

    def all_off(self, keep: Iterable[str] = ()) -> None:
        """Switch every configured lamp off, except those named in `keep`."""
        kept = {self._pins.get(name) for name in keep}
        for pin in sorted(self._on):
            if pin not in kept:
                self._write(pin, False)

    def pins_of(self, names: Iterable[str]) -> list[int]:
        """The pins of the named lamps that are configured."""
        return [self._pins[name] for name in names if name in self._pins]

    def _write(self, pin: int, on: bool) -> None:
        with self._lock:
            self._backend.write(pin, bool(on))
            self._on[pin] = bool(on)
