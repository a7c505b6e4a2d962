"""Plays a physical trace on a running daemon's simulated devices, in (scaled) real time."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from typing import Any

from controller.trace import Badge, ButtonPress, Command, Event, TagIn, TagOut, Tick


class ScriptPlayer:
    """Turns trace lines into simulator actions: tags placed on the simulated reader boards,
    buttons pressed on the simulated GPIO bank, badges laid on the simulated badge reader,
    commands sent like the room server's.

    `daemon` is a started `controller.daemon.Daemon` on sim backends.
    """

    def __init__(self, daemon: Any, *, speed: float = 1.0) -> None:
        self.daemon = daemon
        self.speed = speed
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
        start = time.monotonic()
        first_t: float | None = None
        for event in events:
            if stop is not None and stop.is_set():
                break
            if first_t is None:
                first_t = event.t
            due = start + (event.t - first_t) / self.speed
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.perform(event)
            self.played += 1
        return self.played

    def perform(self, event: Event) -> None:
        """Carry out one trace event on the simulated hardware."""
        if isinstance(event, TagIn | TagOut):
            self._tag(event)
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
            self.daemon.submit_command(event.name, json.dumps(event.args).encode())
        elif isinstance(event, Badge):
            reader = self.daemon.devices.sim_badge
            if reader is None:
                self.daemon.submit(Badge(self.daemon.now(), event.uid, event.removed))
            elif event.removed:
                reader.remove()
            else:
                reader.present(event.uid)
        elif isinstance(event, Tick):
            pass

    def _tag(self, event: TagIn | TagOut) -> None:
        uid = event.uid
        if uid is None and event.card is not None and self.deck is not None:
            uid = self.deck.uid_of(event.card)
        if uid is None and event.chip is not None:
            uid = self._chip_uid(event, event.chip, event.value or 0)
        board_name = "card_reader" if event.antenna in self.card_antennas else "chip_reader"
        board = self.daemon.devices.sim_boards.get(board_name)
        if board is None or uid is None:
            self.daemon.submit(event.__class__(**{**_fields(event), "t": self.daemon.now()}))
            return
        arriving = isinstance(event, TagIn)
        moved = board.place(event.antenna, uid) if arriving else board.remove(event.antenna, uid)
        if moved:
            self._wait_taken(board_name, event.antenna, uid.upper(), arriving)

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
