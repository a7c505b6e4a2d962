"""Simulated GPIO backend: a thread-safe pin bank with levels, pulls, edges, bounce and history."""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from drivers.gpio.base import Edge, EdgeCallback, PinBackend, check_edge, check_pin
from kernel.errors import DeviceError

BCM_HEADER_PINS = range(28)
"""GPIO0..GPIO27: the pins of a Raspberry Pi 40-pin header."""

log = logging.getLogger(__name__)


class ManualClock:
    """A clock that only moves when told to: deterministic time for tests and scripts."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds` (never backwards)."""
        if seconds < 0:
            raise ValueError(f"a clock cannot go backwards ({seconds} s)")
        with self._lock:
            self._now += seconds


@dataclass(slots=True)
class _Pin:
    mode: str  # "in" or "out"
    level: bool
    pull_up: bool = True
    history: list[tuple[float, bool]] = field(default_factory=list)
    edge: Edge | None = None
    callback: EdgeCallback | None = None
    bounce_s: float = 0.0
    last_reported: float | None = None
    lose_edges: int = 0  # fault injection: level changes whose callback never fires


class SimBackend(PinBackend):
    """A simulated pin bank: not a mock, it keeps levels and behaves like the real header.

    Inputs idle at their pull (high with a pull-up). `press`/`release`/`set_input` drive an
    input as the outside world would and fire its edge callback, honouring `bounce_ms`
    against `clock`. Every pin keeps a history of (time, level) changes. Misuse raises
    DeviceError, as the hardware library would. Callbacks run in the caller's thread,
    outside the backend's lock, so they may call back into the backend.

    With `control_socket`, the outside world may also be another process: a unix stream
    socket at that path takes one line per connection, `press <pin>`, `release <pin>` or
    `set <pin> <0|1>`, drives the input and answers `ok` or `error: <why>` (e.g. the pin
    is not configured yet); once the table is stopped (`refuse_inputs`) it answers
    `refused: <why>` to a press (and drives nothing). `level <pin>` answers the pin's level, `0` or
    `1` (a lamp, seen from outside). Nobody listening (the daemon is down) means nobody
    pressed.
    """

    name = "sim"

    def __init__(
        self,
        clock: Callable[[], float] | None = None,
        pins: Iterable[int] = BCM_HEADER_PINS,
        control_socket: str | Path | None = None,
    ) -> None:
        self._clock: Callable[[], float] = clock if clock is not None else time.monotonic
        if isinstance(self._clock, ManualClock):
            self._wait: Callable[[float], None] = self._clock.advance
        else:
            self._wait = time.sleep
        self._valid = frozenset(pins)
        self._pins: dict[int, _Pin] = {}
        self._lock = threading.RLock()
        self._closed = False
        self._control: socket.socket | None = None
        self._control_path: Path | None = None
        self._refusal: str | None = None  # why inputs are refused (the table is stopped)
        if control_socket is not None:
            self._listen(Path(control_socket))

    # -- PinBackend ---------------------------------------------------------------------

    def setup_input(self, pin: int, pull_up: bool = True) -> None:
        with self._lock:
            self._check_open()
            self._check_valid(pin)
            state = self._pins.get(pin)
            if state is not None and state.mode != "in":
                raise DeviceError(f"GPIO{pin} is already an output; cannot make it an input")
            if state is None:
                state = _Pin(mode="in", level=pull_up, pull_up=pull_up)
                state.history.append((self._clock(), pull_up))
                self._pins[pin] = state
            state.pull_up = pull_up

    def setup_output(self, pin: int, initial: bool = False) -> None:
        with self._lock:
            self._check_open()
            self._check_valid(pin)
            state = self._pins.get(pin)
            if state is not None and state.mode != "out":
                raise DeviceError(f"GPIO{pin} is already an input; cannot make it an output")
            if state is None:
                state = _Pin(mode="out", level=bool(initial))
                state.history.append((self._clock(), bool(initial)))
                self._pins[pin] = state
            else:
                self._change(state, bool(initial))

    def read(self, pin: int) -> bool:
        with self._lock:
            return self._get(pin).level

    def write(self, pin: int, value: bool) -> None:
        with self._lock:
            state = self._get(pin)
            if state.mode != "out":
                raise DeviceError(f"GPIO{pin} is an input; it cannot be written")
            self._change(state, bool(value))

    def add_edge_callback(
        self, pin: int, edge: Edge, callback: EdgeCallback, bounce_ms: int = 0
    ) -> None:
        check_edge(edge)
        if bounce_ms < 0:
            raise DeviceError(f"bounce_ms must not be negative, got {bounce_ms}")
        with self._lock:
            state = self._get(pin)
            if state.mode != "in":
                raise DeviceError(f"GPIO{pin} is an output; edges are detected on inputs only")
            if state.callback is not None:
                raise DeviceError(f"GPIO{pin} already has edge detection")
            state.edge = edge
            state.callback = callback
            state.bounce_s = bounce_ms / 1000.0

    def close(self, keep: Iterable[int] = ()) -> None:
        control, self._control = self._control, None
        if control is not None:
            with contextlib.suppress(OSError):
                control.shutdown(socket.SHUT_RDWR)
            control.close()
            if self._control_path is not None:
                with contextlib.suppress(FileNotFoundError):
                    self._control_path.unlink()
        with self._lock:
            self._pins.clear()
            self._closed = True

    # -- control socket (the outside world in another process) --------------------------

    def _listen(self, path: Path) -> None:
        try:
            if path.is_socket():
                path.unlink()  # left behind by a process that was killed
            elif path.exists():
                raise DeviceError(f"GPIO control socket {path}: exists and is not a socket")
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(str(path))
            os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
            server.listen(8)
        except OSError as exc:
            raise DeviceError(f"GPIO control socket {path}: {exc.strerror or exc}") from exc
        self._control, self._control_path = server, path
        thread = threading.Thread(
            target=self._serve_control, args=(server,), name="gpio-sim-control", daemon=True
        )
        thread.start()

    def _serve_control(self, server: socket.socket) -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return  # closed
            with conn:
                try:
                    conn.settimeout(2.0)
                    line = conn.makefile("r", encoding="ascii", errors="replace").readline()
                    conn.sendall((self._control_line(line.strip()) + "\n").encode())
                except OSError as exc:
                    log.warning("GPIO control socket: %s", exc)

    def refuse_inputs(self, reason: str) -> None:
        """From now on the control socket answers `refused: <reason>` and drives nothing:
        whoever presses learns that the press was not taken."""
        super().refuse_inputs(reason)
        with self._lock:
            self._refusal = reason

    def _control_line(self, line: str) -> str:
        """Carry out one control command; the answer line."""
        words = line.split()
        with self._lock:
            refusal = self._refusal
        # A release still drives the pin (a finger lets go): only a press is refused.
        if refusal is not None and (words[:1] == ["press"] or words[2:] == ["0"]):
            return f"refused: {refusal}"
        try:
            if len(words) == 2 and words[0] == "level" and words[1].isdigit():
                return "1" if self.read(int(words[1])) else "0"
            if len(words) == 2 and words[0] in ("press", "release") and words[1].isdigit():
                (self.press if words[0] == "press" else self.release)(int(words[1]))
            elif len(words) == 3 and words[0] == "set" and words[1].isdigit():
                if words[2] not in ("0", "1"):
                    return f"error: level must be 0 or 1, got {words[2]!r}"
                self.set_input(int(words[1]), words[2] == "1")
            else:
                return f"error: unknown command {line!r} (press N, release N, set N 0|1, level N)"
        except DeviceError as exc:
            return f"error: {exc}"
        return "ok"

    # -- the outside world --------------------------------------------------------------

    def set_input(self, pin: int, level: bool) -> None:
        """Drive input `pin` to `level` from outside; fire its callback on a matching edge."""
        fire: EdgeCallback | None = None
        with self._lock:
            state = self._get(pin)
            if state.mode != "in":
                raise DeviceError(f"GPIO{pin} is an output; only inputs can be driven")
            level = bool(level)
            if level == state.level:
                return
            now = self._change(state, level)
            wanted = state.edge == "both" or state.edge == ("rising" if level else "falling")
            if state.lose_edges and wanted:
                state.lose_edges -= 1  # the edge was missed (as an edge interrupt can be)
            elif state.callback is not None and wanted:
                last = state.last_reported
                if last is None or now - last >= state.bounce_s:
                    state.last_reported = now
                    fire = state.callback
        if fire is not None:
            fire(pin)

    def lose_next_edge(self, pin: int, n: int = 1) -> None:
        """Fault injection: the next `n` edges of `pin` change its level but fire no callback,
        like an edge interrupt the kernel never delivered. `read` still tells the truth."""
        with self._lock:
            self._get(pin).lose_edges += n

    def press(self, pin: int) -> None:
        """Close an active-low button's contact: the input goes low."""
        self.set_input(pin, False)

    def release(self, pin: int) -> None:
        """Open an active-low button's contact: the input returns high."""
        self.set_input(pin, True)

    def bounce(
        self, pin: int, n: int = 3, *, settle: bool | None = None, spacing_ms: float = 1.0
    ) -> None:
        """Drive `pin` to `settle` (default: the other level) the way a real contact does.

        The contact makes and breaks `n` times, `spacing_ms` apart, before it stays at
        `settle`: 2n+1 edges for a change of level, 2n for a glitch back to the same level.
        Time passes between edges: a ManualClock is advanced, a real clock is slept on.
        """
        if n < 0:
            raise ValueError(f"bounce count must not be negative, got {n}")
        current = self.read(pin)
        target = (not current) if settle is None else bool(settle)
        if target != current:
            levels = [target, not target] * n + [target]
        else:
            levels = [not target, target] * n
        for index, level in enumerate(levels):
            if index:
                self._wait(spacing_ms / 1000.0)
            self.set_input(pin, level)

    def level(self, pin: int) -> bool:
        """The present level of a configured pin (same as `read`)."""
        return self.read(pin)

    def history(self, pin: int) -> list[tuple[float, bool]]:
        """Every (time, level) the pin took, starting with its level at setup."""
        with self._lock:
            return list(self._get(pin).history)

    def configured(self) -> dict[int, str]:
        """Configured pins and their mode ("in" or "out")."""
        with self._lock:
            return {pin: state.mode for pin, state in sorted(self._pins.items())}

    # -- internals ----------------------------------------------------------------------

    def _change(self, state: _Pin, level: bool) -> float:
        now = self._clock()
        if level != state.level:
            state.level = level
            state.history.append((now, level))
        return now

    def _check_open(self) -> None:
        if self._closed:
            raise DeviceError("the simulated GPIO backend is closed")

    def _check_valid(self, pin: int) -> None:
        check_pin(pin)
        if pin not in self._valid:
            raise DeviceError(f"GPIO{pin} does not exist on this pin bank")

    def _get(self, pin: int) -> _Pin:
        self._check_open()
        check_pin(pin)
        state = self._pins.get(pin)
        if state is None:
            raise DeviceError(f"GPIO{pin} is not configured")
        return state


def send_control(path: str | Path, line: str, timeout: float = 5.0) -> str:
    """Send one control line to a SimBackend's control socket (from any process); its answer.

    Raises OSError when nobody listens (FileNotFoundError, ConnectionRefusedError).
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(path))
        sock.sendall(line.encode("ascii") + b"\n")
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = sock.recv(256)
            if not chunk:
                break
            answer += chunk
    return answer.decode("ascii", errors="replace").strip()
