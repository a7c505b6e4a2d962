"""Plays a physical trace on a running daemon's simulated devices, on a virtual clock or in
(scaled) real time."""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import threading
import time
from collections.abc import Iterable
from typing import Any

from kernel.clock import ManualClock
from kernel.inputs import Badge, ButtonPress, Command, Event, TagIn, TagOut, Tick

log = logging.getLogger("tablectl.sim")

#: Real seconds the conductor waits for an action's input to reach the daemon, and for the
#: daemon to handle it, before it goes on regardless (a board that lost the move).
ARRIVAL_TIMEOUT = 5.0
#: The virtual clock's resolution: a journal's `t` has six decimals.
TICK = 1e-6


class ScriptPlayer:
    """Turns trace lines into simulator actions: tags placed on the simulated reader boards,
    buttons pressed on the simulated GPIO bank, badges laid on the simulated badge reader,
    commands sent like the room server's.

    `daemon` is a started `controller.daemon.Daemon` on sim backends. With `clock` (the
    daemon's virtual clock) the player is the conductor of simulated time: it sets the
    clock to each event's time, carries the event out and waits until the daemon has
    handled what it caused, and steps the clock to every engine timer on the way; `speed`
    only paces that against the wall clock (None: as fast as the machine goes). So the
    same script gives the same journal at any speed. Without `clock`, events are played
    at their times divided by `speed` on the daemon's real clock. With `devices=False`
    the hardware is left out: every tag, button and badge is queued as the trace input it
    is, dated by the daemon (a soak of the daemon alone, bench/soak.py).
    """

    def __init__(
        self,
        daemon: Any,
        *,
        speed: float | None = 1.0,
        clock: ManualClock | None = None,
        devices: bool = True,
    ) -> None:
        if clock is None and not speed:
            raise ValueError("as fast as possible (speed None) needs a virtual clock")
        self.daemon = daemon
        self.speed = speed
        self.clock = clock
        self.devices = devices
        self._real_start = 0.0
        self._trace_start = 0.0
        cfg = daemon.config
        self.card_antennas = set(cfg.card_reader.antennas)
        self.deck = daemon.engine.deck
        self.pins: dict[tuple[str, int | None], int] = {}
        if cfg.gpio.shuffler is not None:
            self.pins[("shuffler", None)] = cfg.gpio.shuffler
        for name, pin in cfg.gpio.panel.items():
            self.pins[(name, None)] = pin
        for seat, pin in cfg.gpio.allin_buttons.items():
            self.pins[("allin", seat)] = pin
        self.played = 0
        self._last_press: dict[int, float] = {}
        # Trace chips are (id, value); the simulated board needs registered UIDs, so each
        # chip id is given the next UID of its value from the chip registry, in turn, that
        # fits the move (see _chip_uid).
        self.chip_uids: dict[str, str] = {}
        self._pools: dict[int, list[str]] = {}
        self._next: dict[int, int] = {}
        registry = daemon.engine.chips
        if registry is not None:
            for uid, value in sorted(registry.items()):
                self._pools.setdefault(value, []).append(uid.upper())

    def play(self, events: Iterable[Event], stop: threading.Event | None = None) -> int:
        """Play events at their times (divided by speed); return how many were played."""
        if self.clock is not None:
            return self._conduct(events, stop)
        start = time.monotonic()
        first_t: float | None = None
        for event in events:
            if stop is not None and stop.is_set():
                break
            if first_t is None:
                first_t = event.t
            due = start + (event.t - first_t) / (self.speed or 1.0)
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.perform(event)
            self.played += 1
        return self.played

    # ------------------------------------------------------------------ simulated time

    def _conduct(self, events: Iterable[Event], stop: threading.Event | None) -> int:
        """Play events on the virtual clock: each at trace time `now + (t - first t)`."""
        first_t: float | None = None
        self._real_start = time.monotonic()
        self._trace_start = self.daemon.now()
        for event in events:
            if stop is not None and stop.is_set():
                break
            if first_t is None:
                first_t = event.t
            self.advance(round(self._trace_start + event.t - first_t, 6))
            before = self.daemon.queue.puts
            self._settle(before if self.perform(event) else None)
            self.played += 1
        return self.played

    def advance(self, moment: float) -> None:
        """Step the virtual clock to trace time `moment`, stopping at every engine timer
        on the way (a push that settles, a hold that ends) until the daemon handled it."""
        assert self.clock is not None
        self._settle(None)
        while (due := self.daemon.next_timer()) is not None and due <= moment:
            if not self._fire(due):
                break
        self._pace(moment)
        self._jump(moment)
        self._settle(None)

    def flush(self) -> None:
        """Step the virtual clock until the daemon's reorder window has let go every input
        it holds (a script's last input waits there for the window after it was made; on
        a virtual clock nothing else moves time on)."""
        window = getattr(self.daemon, "window", None)
        if self.clock is None or window is None:
            return
        for _ in range(16):
            self._settle(None)
            due = self.daemon.next_timer()
            if not len(window) or due is None:
                return
            self.advance(max(due, self.daemon.now()))

    def _fire(self, due: float) -> bool:
        """Step to a timer and let the daemon handle its tick; False if it did not fire."""
        at = max(self.daemon.now(), round(due, 6))
        for _ in range(3):  # a timer a float's breadth past six decimals fires a tick later
            self._pace(at)
            self._jump(at)
            self._settle(None)
            if self.daemon.next_timer() != due:
                return True
            at = round(at + TICK, 6)
        log.warning("engine timer at %s did not fire; going on", due)
        return False

    def _jump(self, moment: float) -> None:
        assert self.clock is not None
        step = round(moment - self.daemon.now(), 6)
        if step > 0:
            self.clock.advance(step)

    def _pace(self, moment: float) -> None:
        """With a speed, wait until the wall clock reaches `moment` scaled."""
        if not self.speed or math.isinf(self.speed):
            return
        due = self._real_start + (moment - self._trace_start) / self.speed
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def _settle(self, before: int | None) -> None:
        """Wait until the action's input reached the daemon (`before`: the count of queued
        inputs before it) and the daemon handled everything queued."""
        if before is not None:
            deadline = time.monotonic() + ARRIVAL_TIMEOUT
            while self.daemon.queue.puts == before:
                if time.monotonic() > deadline:
                    log.warning("no input arrived for a script action; going on")
                    break
                time.sleep(0.0005)
        if not self.daemon.wait_idle(ARRIVAL_TIMEOUT):
            log.warning("the daemon is still busy after %s s; going on", ARRIVAL_TIMEOUT)

    # ------------------------------------------------------------------ actions

    def perform(self, event: Event) -> bool:
        """Carry out one trace event on the simulated hardware; False when it gives the
        daemon no input (a tick, a tag already where it is placed)."""
        if not self.devices and isinstance(event, TagIn | TagOut | ButtonPress | Badge):
            self.daemon.submit(dataclasses.replace(event, t=self.daemon.now()))
            return True
        if isinstance(event, TagIn | TagOut):
            return self._tag(event)
        elif isinstance(event, ButtonPress):
            pin = self.pins.get((event.name, event.seat))
            gpio = self.daemon.devices.gpio
            if pin is None or gpio is None or not hasattr(gpio, "press"):
                self.daemon.submit(ButtonPress(self.daemon.now(), event.name, event.seat))
            else:
                # A finger cannot press faster than the debounce filter lets through.
                gap = 2 * self.daemon.config.gpio.bounce_ms / 1000
                wait = self._last_press.get(pin, -1e9) + gap - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                gpio.press(pin)
                gpio.release(pin)
                self._last_press[pin] = time.monotonic()
        elif isinstance(event, Command):
            self.daemon.commands.submit(event.name, json.dumps(event.args).encode())
        elif isinstance(event, Badge):
            reader = self.daemon.devices.sim_badge
            if reader is None:
                self.daemon.submit(Badge(self.daemon.now(), event.uid, event.removed))
            elif event.removed:
                reader.remove()
            else:
                reader.present(event.uid)
        elif isinstance(event, Tick):
            return False
        return True

    def _tag(self, event: TagIn | TagOut) -> bool:
        uid = event.uid
        if uid is None and event.card is not None and self.deck is not None:
            uid = self.deck.uid_of(event.card)
        if uid is None and event.chip is not None:
            uid = self._chip_uid(event, event.chip, event.value or 0)
        board_name = "card_reader" if event.antenna in self.card_antennas else "chip_reader"
        board = self.daemon.devices.sim_boards.get(board_name)
        if board is None or uid is None:
            self.daemon.submit(event.__class__(**{**_fields(event), "t": self.daemon.now()}))
            return True
        arriving = isinstance(event, TagIn)
        moved = board.place(event.antenna, uid) if arriving else board.remove(event.antenna, uid)
        if moved:
            self._wait_taken(board_name, event.antenna, uid.upper(), arriving)
        return bool(moved)

    def _wait_taken(self, reader: str, antenna: str, uid: str, present: bool) -> None:
        """Wait (2 s at most) until the daemon's reader has the move: a dealer's next action
        comes after the board has reported this one, as at a real table, where a hand takes
        longer than a scan (at a high --speed it might otherwise overtake the report)."""
        drivers = [d for d in self.daemon.devices.readers if d.name == reader]
        if not drivers:
            return
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            if (uid in drivers[0].positions().get(antenna, ())) == present:
                return
            time.sleep(0.002)

    def _chip_uid(self, event: TagIn | TagOut, chip: str, value: int) -> str | None:
        """The registered UID of the trace's chip `chip`: the one it was given, or else the
        next of its value, in turn, that fits the move and is no other trace chip's: a chip
        arriving is one not lying on the board, a chip leaving an antenna one lying there.
        A trace played in parts, one player each, thus neither puts the pot's chips in a
        bet zone (read at two antennas, a tag is counted once) nor pushes a pot of chips
        that are not there. With none that fits, the next in turn."""
        uid = self.chip_uids.get(chip)
        if uid is None:
            pool = self._pools.get(value)
            if not pool:
                return None  # no registered chip of that value: sent as a trace event
            i = self._next.get(value, 0)
            where = self._chips_on_board()
            given = set(self.chip_uids.values())
            if isinstance(event, TagIn):
                lying = {u for tags in where.values() for u in tags}
                fits = [j for j in range(i, i + len(pool)) if pool[j % len(pool)] not in lying]
            else:
                here = set(where.get(event.antenna, ()))
                fits = [j for j in range(i, i + len(pool)) if pool[j % len(pool)] in here]
            fresh = [j for j in fits if pool[j % len(pool)] not in given]
            i = (fresh or fits or [i])[0]
            uid = pool[i % len(pool)]
            self._next[value] = i + 1
            self.chip_uids[chip] = uid
        return uid

    def _chips_on_board(self) -> dict[str, list[str]]:
        """The UIDs (uppercase hex) the simulated chip board holds, by antenna."""
        board = self.daemon.devices.sim_boards.get("chip_reader")
        return {} if board is None else dict(board.contents())


def _fields(event: TagIn | TagOut) -> dict[str, Any]:
    return {
        "t": event.t,
        "antenna": event.antenna,
        "card": event.card,
        "chip": event.chip,
        "value": event.value,
        "uid": event.uid,
    }
