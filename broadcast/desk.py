"""The production desk: each table's live preview, its secure delay and its on-air view.

Per table, every message received is

1. applied at once to the **preview** view (public: it refuses hole cards);
2. applied at once to a **lookahead** view (secret, never drawn nor sent anywhere) whose
   only use is to queue the equity of the new situation, so it is ready when the cards
   come on air;
3. held in the **delay line** and applied to the **on-air** view (secret) once the
   secure delay has passed; the on-air frames feed `/overlay/<table>` and `/feed/<table>`.

Hole cards arrive sealed (controller/seal.py): a sealed message is kept by the table's
`HoleCards` (broadcast/holecards.py) and goes through the delay line as it came; its cards
reach the lookahead and the on-air view only once the table released its key (`holekeys`),
so nothing about a card is computed or shown before then, whatever D is. The delay line
holds everything at least as long as the table's own release delay (plus `KEY_MARGIN`), so
the cards and the rest of the picture go on air together.

Everything here runs on the web server's event loop (one thread); the equity worker's
thread only reports back through `loop.call_soon_threadsafe`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from broadcast.clock import Clock
from broadcast.delay import MAX_DELAY, DelayLine, Held, check_delay
from broadcast.equity import Situation
from broadcast.holecards import HoleCards, Requester
from broadcast.view import LeakError, TableView
from broadcast.worker import EquityWorker
from controller.seal import is_sealed

log = logging.getLogger(__name__)

KINDS = ("state", "events", "holecards", "holekeys", "status")
#: Seconds added to the table's release delay: a key's way to the service (and the equity
#: it lets the service compute) before its cards go on air.
KEY_MARGIN = 1.0


class Channel:
    """The latest frame of one page kind, and whoever follows it (latest value wins)."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.version = 0
        self._waiters: set[asyncio.Event] = set()

    def publish(self, text: str) -> bool:
        """Make `text` the latest frame; False if it is the same as the last one."""
        if text == self.text:
            return False
        self.text = text
        self.version += 1
        for waiter in self._waiters:
            waiter.set()
        return True

    async def follow(self) -> AsyncIterator[str]:
        """The current frame at once, then every newer one (a slow reader skips frames)."""
        event = asyncio.Event()
        self._waiters.add(event)
        seen = -1
        try:
            while True:
                if self.version != seen and self.text is not None:
                    seen = self.version
                    yield self.text
                    continue
                event.clear()
                if self.version == seen:
                    await event.wait()
        finally:
            self._waiters.discard(event)

    @property
    def followers(self) -> int:
        """How many pages or feed clients follow this channel."""
        return len(self._waiters)


def _text(frame: dict[str, Any]) -> str:
    return json.dumps(frame, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One table the desk follows."""

    id: str
    prefix: str
    label: str | None = None


class TableDesk:
    """One table: preview, lookahead, delay line and on-air view."""

    def __init__(
        self,
        spec: TableSpec,
        *,
        delay: float,
        worker: EquityWorker,
        true_outs: bool = True,
    ) -> None:
        self.spec = spec
        self.worker = worker
        self.true_outs = true_outs
        self.line = DelayLine(delay)
        self.preview_view = TableView(spec.id, secret=False)
        self.lookahead = TableView(spec.id, secret=True)
        self.onair_view = TableView(spec.id, secret=True)
        self.preview = Channel()
        self.overlay = Channel()
        self.received = 0
        self.leaks_stopped = 0
        self.refused_clear = 0  # hole cards that came in the clear: never used
        self.holes = HoleCards()
        self._onair_due: set[int] = set()  # sealed seqs the delay let through, key awaited
        self._applied: dict[tuple[str, int, int], int] = {}  # (view, hand, seat) -> seq
        self._prefetched: Situation | None = None
        self._publish_preview()
        self._publish_overlay()

    # -- input ------------------------------------------------------------------------

    def ingest(self, kind: str, payload: dict[str, Any], arrived: float) -> None:
        """A message just received (`arrived` on the desk's clock)."""
        if kind not in KINDS:
            return
        self.received += 1
        if kind == "holecards":
            self._sealed(payload, arrived)
            return
        if kind == "holekeys":
            self._key(payload, arrived)
            return
        if kind == "status":
            self.holes.status_in(
                payload.get("holecards_seq"), payload.get("holecards_first"), arrived
            )
        if self.preview_view.apply(kind, payload):
            self._publish_preview()
        self._lookahead(kind, payload)
        self.line.push(Held(arrived, _hand_of(kind, payload), kind, payload))

    def _lookahead(self, kind: str, payload: dict[str, Any]) -> None:
        if self.lookahead.apply(kind, payload):
            situation = self.lookahead.situation(true_outs=self.true_outs)
            if situation is not None and situation != self._prefetched:
                self._prefetched = situation
                self.worker.prefetch(situation)

    def _sealed(self, payload: dict[str, Any], arrived: float) -> None:
        """A sealed hole-card message: kept until its key; through the delay line as it is."""
        if not is_sealed(payload) or not isinstance(payload.get("seq"), int):
            self.refused_clear += 1
            log.critical("table %s: hole cards not sealed: refused", self.spec.id)
            return
        delay = payload.get("delay")
        if isinstance(delay, int | float) and not isinstance(delay, bool):
            self.line.set_floor(min(float(delay) + KEY_MARGIN, MAX_DELAY))
        clear = self.holes.sealed_in(payload, arrived)
        if clear is not None:  # healed after its key came
            self._opened(clear)
        self.line.push(Held(arrived, _hand_of("holecards", payload), "holecards", payload))

    def _key(self, payload: dict[str, Any], arrived: float) -> None:
        """A released key: its cards are known from now on (lookahead, and on air if the
        delay let its message through already)."""
        try:
            clear = self.holes.key_in(payload, arrived)
        except (KeyError, TypeError, ValueError):
            return
        if clear is not None:
            self._opened(clear)

    def _opened(self, clear: dict[str, Any]) -> None:
        if self._newer("lookahead", clear):
            self._lookahead("holecards", clear)
        seq = int(clear["seq"])
        if seq in self._onair_due:
            self._onair_due.discard(seq)
            if self._newer("onair", clear) and self.onair_view.apply("holecards", clear):
                self._publish_overlay()

    def _newer(self, view: str, clear: dict[str, Any]) -> bool:
        """Whether `clear` is the newest read of its seat this view was given (a late key
        must not take a seat's cards back to an older read)."""
        where = (view, int(clear["hand"]), int(clear["seat"]))
        seq = int(clear["seq"])
        if self._applied.get(where, 0) > seq:
            return False
        self._applied[where] = seq
        if len(self._applied) > 512:
            for old in sorted(self._applied, key=lambda k: k[1])[:128]:
                del self._applied[old]
        return True

    def heal(self, now: float, request: Requester | None) -> int:
        """Ask the table for hole cards or keys that went missing on the way."""
        if request is None:
            return 0
        return self.holes.heal(now, request)

    def pump(self, now: float) -> bool:
        """Release what the secure delay lets through at `now`; True if any was."""
        released = self.line.release(now)
        changed = False
        for held in released:
            if held.kind == "holecards":
                changed |= self._onair_holecards(held.payload)
            else:
                changed |= self.onair_view.apply(held.kind, held.payload)
        if changed:
            self._publish_overlay()
        return bool(released)

    def _onair_holecards(self, sealed: dict[str, Any]) -> bool:
        """A sealed message the delay let through: on air with its cards if its key came,
        else when it comes."""
        seq = int(sealed["seq"])
        clear = self.holes.opened.get(seq)
        if clear is None:
            self._onair_due.add(seq)
            return False
        return self._newer("onair", clear) and self.onair_view.apply("holecards", clear)

    def equity_ready(self, situation: Situation) -> None:
        """The worker finished `situation`: redraw on air if that is what it shows."""
        if self.onair_view.situation(true_outs=self.true_outs) == situation:
            self._publish_overlay()

    def set_delay(self, seconds: float) -> None:
        """A new secure delay (larger: at once; smaller: from the next hand)."""
        self.line.set_delay(seconds)
        self._publish_overlay()
        self._publish_preview()

    # -- output -----------------------------------------------------------------------

    def overlay_frame(self) -> dict[str, Any]:
        """The on-air frame now (with the equity if it is known yet)."""
        situation = self.onair_view.situation(true_outs=self.true_outs)
        equity = self.worker.get(situation) if situation is not None else None
        frame = self.onair_view.frame(equity, delay=self.line.in_force)
        frame["label"] = self.spec.label
        return frame

    def preview_frame(self) -> dict[str, Any]:
        """The live preview frame (no hole card, no equity)."""
        frame = self.preview_view.frame(None, delay=self.line.in_force)
        frame["label"] = self.spec.label
        frame["held"] = len(self.line)
        return frame

    def _publish_overlay(self) -> None:
        self.overlay.publish(_text(self.overlay_frame()))

    def _publish_preview(self) -> None:
        try:
            self.preview.publish(_text(self.preview_frame()))
        except LeakError:
            self.leaks_stopped += 1
            log.critical("table %s: a preview frame with a card was stopped", self.spec.id)


def _hand_of(kind: str, payload: dict[str, Any]) -> int | None:
    hand = payload.get("hand") if kind != "status" else None
    return hand if isinstance(hand, int) and not isinstance(hand, bool) else None


class Desk:
    """Every table of the service, the clock, and the equity worker."""

    def __init__(
        self,
        tables: list[TableSpec],
        *,
        delay: float,
        clock: Clock,
        true_outs: bool = True,
        worker: EquityWorker | None = None,
    ) -> None:
        self.clock = clock
        self._loop: asyncio.AbstractEventLoop | None = None
        self.worker = worker or EquityWorker(self._ready_from_thread)
        self.tables = {
            spec.id: TableDesk(
                spec, delay=check_delay(delay), worker=self.worker, true_outs=true_outs
            )
            for spec in tables
        }
        self._by_prefix = {spec.prefix: spec.id for spec in tables}
        self._wake: asyncio.Event | None = None
        self.bad_messages = 0
        #: asks a table for hole cards it missed: request(prefix, kind, first, last)
        self.requester: Callable[[str, str, int, int], None] | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The event loop the desk runs on (the web server's)."""
        self._loop = loop
        self._wake = asyncio.Event()

    # -- input ------------------------------------------------------------------------

    def route(self, topic: str, payload: bytes, arrived: float) -> None:
        """A raw MQTT message (on the event loop): to its table's desk."""
        prefix, _, kind = topic.rpartition("/")
        table_id = self._by_prefix.get(prefix)
        if table_id is None or kind not in KINDS:
            return
        try:
            data = json.loads(payload)
        except (ValueError, UnicodeDecodeError):
            self.bad_messages += 1
            log.warning("%s: not JSON, ignored", topic)
            return
        if not isinstance(data, dict):
            self.bad_messages += 1
            log.warning("%s: not a JSON object, ignored", topic)
            return
        self.tables[table_id].ingest(kind, data, arrived)
        if self._wake is not None:
            self._wake.set()

    def receive_threadsafe(self, topic: str, payload: bytes) -> None:
        """From the MQTT thread: stamp the arrival now, route it on the event loop."""
        arrived = self.clock.now()
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.route, topic, payload, arrived)

    # -- time -------------------------------------------------------------------------

    def pump(self) -> bool:
        """Release whatever is due now, on every table; ask for hole cards gone missing."""
        now = self.clock.now()
        released = False
        for desk in self.tables.values():
            released |= desk.pump(now)
            if self.requester is not None:
                desk.heal(now, functools.partial(self.requester, desk.spec.prefix))
        return released

    def next_release(self) -> float | None:
        """When the next held message is due, over every table."""
        due = [d.line.next_release() for d in self.tables.values()]
        known = [t for t in due if t is not None]
        return min(known) if known else None

    async def run(self, poll: float = 0.02) -> None:
        """Release messages as they fall due, for ever (a task on the event loop)."""
        if self._wake is None:
            self.bind(asyncio.get_running_loop())
        assert self._wake is not None
        while True:
            self.pump()
            due = self.next_release()
            wait = poll if due is None else min(max(due - self.clock.now(), 0.0), poll)
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait)

    def set_delay(self, seconds: float) -> None:
        """The secure delay of every table."""
        check_delay(seconds)
        for desk in self.tables.values():
            desk.set_delay(seconds)

    def _ready_from_thread(self, situation: Situation) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._ready, situation)

    def _ready(self, situation: Situation) -> None:
        for desk in self.tables.values():
            desk.equity_ready(situation)
