"""The readers' catch-up after a gap: both boards' re-read moves merged by board time."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from kernel.inputs import ButtonPress, Device, Event, TagIn, TagOut, Timed

log = logging.getLogger("tablectl.resync")

#: After a restart no timer fires until every reader has re-read its antennas (or this
#: many seconds passed), and chips the catch-up adds to a push the crash cut short are
#: dated to the last journaled input: the push is read whole, not settled in two halves.
RESYNC_TIMEOUT = 15.0

READERS = ("card_reader", "chip_reader")


class Resync:
    """The catch-up after a gap: a restart (both readers re-read), or a reader board that
    went offline (unplugged, silent, rebooted) and came back.

    While a reader has not caught up, the tag events of both boards are held back here;
    once every reader is back they go to `sink` merged in the order the boards saw the
    moves (docs/reader-protocol.md, *Board time on the host*): moves whose time is not
    known first (a departure from the table, what a rebooted board found at power-up),
    in the order their board reported them, then the others by board time. The readers'
    `online` reports follow them; a button pressed while moves are held back waits behind
    them (by time). After a restart no engine timer fires until every reader
    re-read its antennas (or RESYNC_TIMEOUT passed). Chips the catch-up adds to a bet zone
    whose push the gap cut short are dated to the gap's start (the crash, or the reader
    going offline), so the push reads as one, not as two pushes (an undercall, then more).
    """

    def __init__(
        self,
        monotonic: Callable[[], float] = time.monotonic,
        sink: Callable[[Event], None] | None = None,
    ) -> None:
        self._monotonic = monotonic
        self._sink = sink if sink is not None else (lambda _event: None)
        self._waiting: set[str] = set()  # readers not re-read since the restart
        self._away: set[str] = set()  # readers that reported offline, not back yet
        self._cuts: dict[str, tuple[float, frozenset[str]]] = {}  # reader -> (t, bet zones)
        self._held: list[tuple[tuple[int, float, int], TagIn | TagOut | ButtonPress]] = []
        self._devices: list[Device] = []  # `online` reports held behind the merge
        self._order = 0
        self._by = 0.0
        self._lock = threading.Lock()

    def begin(self, readers: Iterable[str], crash_t: float, unsettled: Iterable[int]) -> None:
        """A restart: wait for `readers`; pushes of the `unsettled` seats were cut at `crash_t`."""
        zones = frozenset(f"bet{seat}" for seat in unsettled)
        with self._lock:
            self._waiting = set(readers)
            self._by = self._monotonic() + RESYNC_TIMEOUT
            self._cuts = dict.fromkeys(self._waiting, (crash_t, zones))

    def gone(self, reader: str, t: float, unsettled: Iterable[int]) -> None:
        """The loop journaled `reader` offline at `t`: pushes of the `unsettled` seats were
        cut there (chips its catch-up adds to them are dated to `t`)."""
        with self._lock:
            if reader in self._away:
                self._cuts[reader] = (t, frozenset(f"bet{seat}" for seat in unsettled))

    def date(self, reader: str, event: TagIn | TagOut) -> TagIn | TagOut:
        """A reader's tag event as it enters the queue: a chip its catch-up adds to a cut
        push is dated to the cut; everything else keeps its time (a push begun during the
        gap goes on normally once the reader is back)."""
        cut = self._cuts.get(reader)
        if (
            cut is not None
            and isinstance(event, TagIn)
            and event.antenna in cut[1]
            and (reader in self._waiting or reader in self._away)
        ):
            return dataclasses.replace(event, t=cut[0])
        return event

    def admit(self, reader: str, event: TagIn | TagOut) -> None:
        """A live tag event: to the sink, or held while a reader catches up."""
        self.catch_up(reader, [(event, event.t)])

    def admit_press(self, press: ButtonPress) -> None:
        """A button press: held behind the tag events held back, if any (a press is made
        after the moves the dealer saw, say the fold before the next seat's check), else
        straight to the sink (a press on a held table with nothing held is refused there
        at once, e.g. the shuffler's `table_held`)."""
        with self._lock:
            if not self._held or not self._merging():
                self._sink(press)
                return
            self._order += 1
            self._held.append(((1, press.t, self._order), press))

    def catch_up(self, reader: str, batch: Sequence[Timed]) -> None:
        """Tag events of `reader` with the times its board saw them (None: unknown)."""
        with self._lock:
            for event, when in batch:
                dated = self.date(reader, event)
                if not self._merging():
                    self._sink(dated)
                    continue
                self._order += 1
                key = (0, 0.0, self._order) if when is None else (1, when, self._order)
                self._held.append((key, dated))

    def device(self, reader: str, report: Device) -> None:
        """A reader's availability: offline starts (or extends) a catch-up; online ends
        that reader's, and the merge goes out once no reader is missing any more."""
        with self._lock:
            self._waiting.discard(reader)
            if report.state != "online":
                self._away.add(reader)
                self._sink(report)
                return
            self._away.discard(reader)
            self._cuts.pop(reader, None)
            if self._held or self._devices or self._merging():
                self._devices.append(report)
            else:
                self._sink(report)
            self._release_if_done()

    def reader_back(self, reader: str) -> None:
        """`reader` re-read its antennas and says so (without a report to journal)."""
        with self._lock:
            self._waiting.discard(reader)
            self._away.discard(reader)
            self._cuts.pop(reader, None)
            self._release_if_done()

    def pending(self) -> bool:
        """True while timers wait for the readers' catch-up after a restart."""
        with self._lock:
            if self._waiting and self._monotonic() >= self._by:
                log.warning("readers not resynchronised after %.0f s: going on", RESYNC_TIMEOUT)
                self._waiting = set()
                self._release_if_done()
            return bool(self._waiting)

    def _merging(self) -> bool:
        """Some reader has not caught up yet (held lock)."""
        return bool(self._waiting or self._away)

    def _release_if_done(self) -> None:
        """Every reader caught up: the held moves in board order, then the online reports."""
        if self._merging():
            return
        held, self._held = sorted(self._held, key=lambda item: item[0]), []
        devices, self._devices = self._devices, []
        if held:
            log.info("catch-up: %d re-read move(s) merged by board time", len(held))
        # Each dated no earlier than the one before it: the daemon's reorder window, which
        # orders inputs by their time, keeps the merge's order (the loop would have dated
        # them so anyway: never earlier than the input applied before).
        last: float | None = None
        for event in [*(event for _key, event in held), *devices]:
            if last is not None and event.t < last:
                event = dataclasses.replace(event, t=last)
            last = event.t
            self._sink(event)


def unsettled(hand: object | None) -> tuple[int, ...]:
    """Seats of `hand` (the engine's hand in progress) whose push is not read yet (a gap
    now would cut it)."""
    betting = getattr(hand, "betting", None)
    return tuple(getattr(betting, "unsettled", ()))
