"""The table loop: inputs are journaled, applied and committed, and only then published."""

from __future__ import annotations

import dataclasses
import functools
import logging
import queue
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Literal

from controller import __version__
from controller.board_focus import BoardFocus
from controller.config import BrokerConfig, Config
from controller.delivery import AckedMark
from controller.devices import Devices
from controller.draws import install_draws
from controller.engine import Engine
from controller.engine.checkpoint import checkpoint
from controller.heap_trim import HeapTrim
from controller.hole_release import HoleRelease
from controller.hooks import Effect
from controller.input_window import InputWindow
from controller.intake import Intake, install_device_alerts
from controller.items import RELEASE, WAKE, FromRoom, Inbox, Item, Own, Wake
from controller.journal import InputJournal, SegmentedJournal, open_journal
from controller.lamps import install_lamps
from controller.notices import Notices
from controller.publisher import Publisher, PublishError
from controller.recovery import delivery_mark, recover
from controller.replay import build_engine
from controller.resync import READERS, Resync, unsettled
from controller.room_commands import RoomCommands
from controller.rotation import Rotation
from controller.seal import Record, table_seal
from controller.staff_sync import StaffFile
from controller.supervision import Supervisor, status_text
from kernel.clock import Clock, FunctionClock, SystemClock
from kernel.errors import JournalError, TableError
from kernel.inputs import ButtonPress, Command, Device, Event, Tick
from kernel.messages import Message

log = logging.getLogger("tablectl.daemon")

#: The most queued items journaled and applied under one commit (one fdatasync).
MAX_BATCH = 64


class Daemon:
    """One table: devices, journal, engine and publisher wired together.

    The loop (one thread, the only one that touches the engine) takes the queued inputs a
    batch at a time: journal each input, apply it, journal what it produced, commit, and
    only then publish and let it have effect. The daemon owns the loop, the queue and the
    order of effects; every other concern registers itself on a named event
    (controller/hooks.py lists them), as Klipper's Printer does: the drivers' inputs
    (controller/intake.py), room commands (room_commands.py), hole-card release
    (hole_release.py), draws (draws.py), the staff file (staff_sync.py), the boards'
    focus (board_focus.py), lamps (lamps.py), journal rotation (rotation.py) and heap
    trimming (heap_trim.py). Recovery (recovery.py), the readers' catch-up (resync.py),
    the devices (devices.py), systemd (supervision.py) and the daemon's own alerts and
    replies (notices.py) are its parts.
    """

    def __init__(
        self,
        config: Config,
        *,
        broker: BrokerConfig | None = None,
        clock: Clock | Callable[[], float] | None = None,
    ) -> None:
        self.config = config
        self.broker = broker or config.broker
        # One injected clock (kernel/clock.py): trace time, the engine's timers and
        # the loop's waits; a plain function gives wall time on real waits (tests).
        self.timer: Clock = (
            SystemClock() if clock is None else FunctionClock(clock) if callable(clock) else clock
        )
        self.clock: Callable[[], float] = self.timer.wall
        self.engine: Engine = build_engine(config)
        # Hole cards sealed, events chained, keys released when due (controller/seal.py).
        self.seal = table_seal(config)
        self.queue = Inbox()
        self.timer.on_jump(lambda: self.queue.put(WAKE))
        self.journal: InputJournal | None = None
        self.epoch = self.clock()
        self.engine.epoch = round(self.epoch, 6)
        self.last_t = 0.0
        self.publisher: Publisher | None = None
        self.resync = Resync(sink=self.queue.put)
        self.intake = Intake(self.queue, self.resync, self.timer, self.now)
        self.devices = Devices(config, self.intake)
        self.notices = Notices(config.table.id, self.engine, self.now)
        self.supervisor = Supervisor()
        self.window = InputWindow(config, self.timer, self.engine)
        self.applied = 0
        self.failed: JournalError | None = None  # the journal broke: stopped, exit non-zero
        self.device_states: dict[str, str] = {}  # name -> "offline"/"online" (journaled)
        self.tag_view: dict[str, list[str]] = {}  # antenna -> tag uids (journaled)
        self.acked: AckedMark | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._handlers: defaultdict[str, list[Callable[..., Any]]] = defaultdict(list)
        # The concerns, in the order their effects run after a commit.
        self.commands = RoomCommands(self)
        self.holecards = HoleRelease(self)
        install_device_alerts(self)
        self.draws = install_draws(self)
        self.staff = StaffFile(self)
        self.focus = BoardFocus(self)
        install_lamps(self)
        self.rotation = Rotation(self)
        self.heap_trim = HeapTrim(self)

    # ------------------------------------------------------------------ events

    def register_event_handler(self, event: str, callback: Callable[..., Any]) -> None:
        """Call `callback` each time `event` is sent, after those registered before it
        (controller/hooks.py names the events and what their handlers return)."""
        self._handlers[event].append(callback)

    def send_event(self, event: str, *params: Any) -> list[Any]:
        """Call the handlers of `event` in order; what each returned."""
        return [callback(*params) for callback in self._handlers.get(event, ())]

    # ------------------------------------------------------------------ time and input

    def now(self) -> float:
        """Trace time: seconds since the journal began."""
        return max(0.0, round(self.clock() - self.epoch, 6))

    def submit(self, event: Event) -> None:
        """Queue an input event (thread-safe; controller/intake.py)."""
        self.intake.submit(event)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Recover from the journal, connect the broker, open the devices, start the loop."""
        self.send_event("table:starting")
        # Open the journal and rebuild the table from it (controller/recovery.py); a new
        # journal opens with the state it starts from.
        self.journal = open_journal(
            self.config.journal, self.config.table.id, now=self.clock(), signer=self.seal.signer
        )
        self.acked = delivery_mark(self.config.journal)
        recovered: list[Message] = []
        if self.journal is not None:
            if isinstance(self.journal, SegmentedJournal):
                self.journal.seal_state = self.seal.snapshot  # a new segment starts from it
            self.epoch = self.journal.epoch
            self.engine.epoch = round(self.epoch, 6)  # as the journal's header has it
            found = recover(self.engine, self.journal, self.acked, self.notices.alert, self.seal)
            self.last_t, recovered = found.last_t, found.messages
            self.device_states, self.tag_view = found.device_states, found.tag_view
            if self.journal.blank:
                # A new journal opens with the state it starts from, staff registry
                # included: it replays the same whatever the table's files say later.
                self.journal.write_checkpoint(self.engine.t, checkpoint(self.engine))
            self.send_event("table:recovered")
            if self.journal.events:  # a restart: catch up what moved meanwhile first
                self.resync.begin(READERS, self.last_t, unsettled(self.engine.hand))
        self.publisher = Publisher(
            self.broker,
            self.broker.prefix,
            self.broker.client_id,
            status={
                "table": self.config.table.id,
                "room": self.config.table.room,
                "version": __version__,
            },
            on_command=self.commands.submit,
            acked_seq=self.acked.written if self.acked is not None else 0,
            on_tv_request=self.holecards.submit,
            status_fields=self.seal.status_fields,
        )
        self.publisher.start()
        for message in recovered:
            self.publish(message)
        if self.acked is not None:
            self.acked.start(lambda: self.publisher.acked_seq if self.publisher else 0)
        self.devices.open(self.tag_view)
        self.send_event("table:ready")
        # Recovered and devices open: tell systemd (Type=notify); the loop pings its watchdog.
        self.supervisor.ready(_status(self))
        self._thread = threading.Thread(target=self._loop, name="tablectl-engine", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop devices, drain the queue, say offline, close the journal."""
        self.supervisor.stopping()
        self.devices.stop_inputs()
        self._stopping.set()
        self.queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.devices.close()
        if self.publisher is not None:
            self.publisher.stop()
        if self.acked is not None:
            self.acked.stop()
        if self.journal is not None:
            self.send_event("table:stopping", self.journal)
            try:
                self.journal.close()
            except (JournalError, OSError) as exc:
                log.error("journal close failed: %s", exc)

    # ------------------------------------------------------------------ the loop

    def _loop(self) -> None:
        """Take the queued inputs a batch at a time (a Tick when an engine timer fires)."""
        while not self.failed:
            self.supervisor.ping()
            first, taken = self._next_item()
            if first is False and self.window.window is None:
                _done(self.queue, taken)
                continue  # woken only to ping the watchdog: no input, nothing journaled
            batch, stop, more = ([], False, 0) if first is False else _gather(self.queue, first)
            batch = self.window.reorder(batch, stop, self.now())
            if batch:
                try:
                    self.handle(batch)
                except Exception as exc:  # a bug must not stop the table taking inputs
                    log.exception("batch of %d input(s) failed", len(batch))
                    text = f"{type(exc).__name__}: {exc}"
                    self.emit(self.notices.alert("daemon_fault", text))
                self.supervisor.status(_status(self))
            _done(self.queue, taken + more)
            if stop and self._stopping.is_set():
                return

    def wait_idle(self, timeout: float) -> bool:
        """Wait (`timeout` real seconds at most) until nothing is queued and nothing is
        being handled; False if it is not (the sim's conductor steps a virtual clock only
        then: every input of a moment is handled at that moment)."""
        inbox, end = self.queue, time.monotonic() + timeout
        with inbox.all_tasks_done:
            while inbox.unfinished_tasks:
                left = end - time.monotonic()
                if left <= 0 or self.failed is not None:
                    return False
                inbox.all_tasks_done.wait(min(left, 0.5))
        return True

    def next_timer(self) -> float | None:
        """When the engine's next timer fires, the next hole-card key is due, or the
        reorder window lets an input go (trace time); None: none of them (the readers'
        catch-up after a restart holds the engine's timers). Read it only while idle."""
        engine = None if self.resync.pending() else self.window.deadline()
        return _earliest(engine, self.seal.next_due(), self.window.release_at(self.now()))

    def _next_item(self) -> tuple[Item | Literal[False] | None, int]:
        """The next queued item (None: stop); a Tick when an engine timer fires first, or
        the keys due when a hole-card key's time comes; False when the wait ended only for
        the watchdog's ping, a clock's jump or the reorder window; with how many queued
        items were taken."""
        frozen = self.resync.pending()  # no engine timer fires before the readers' catch-up
        engine_due = None if frozen else self.window.deadline()
        deadline = _earliest(engine_due, self.seal.next_due())
        timeout = None if deadline is None else self.timer.real_wait(deadline - self.now())
        step = self.window.wait()  # or an input the window lets go
        if step is not None:
            timeout = step if timeout is None else min(timeout, step)
        if frozen:  # look at the catch-up again at least twice a second
            timeout = 0.5 if timeout is None else min(timeout, 0.5)
        wait = self.supervisor.wait_limit(timeout)
        try:
            item = self.queue.get(timeout=wait)
        except queue.Empty:
            if timeout is None or wait != timeout:
                return False, 0
            item, taken = WAKE, 0
        else:
            taken = 1
        if not isinstance(item, Wake):
            return item, 1
        if deadline is not None and deadline <= self.now():  # the clock reached a timer
            due = engine_due is not None and engine_due <= self.now()
            return (self.window.tick(self.now()) if due else RELEASE), taken
        return False, taken

    def handle(self, batch: Sequence[Item]) -> list[Message]:
        """Journal and apply a batch of items; commit the journal once; only then publish
        what they produced and let it have effect: the batch's own effects (PUBACKs, the
        staff file, draws) in order, then the `table:committed` handlers (the boards'
        focus, lamps, journal rotation, heap trimming).

        Every input and every message is in the journal, durable by the fsync policy,
        before the room, the TV or a lamp sees anything of it (group commit: one
        fdatasync for the batch). A journal that cannot be written stops the daemon
        (`failed`): going on would publish what recovery could not reproduce. What an
        effect raises is told to the room, and the next one still runs.
        """
        if self.failed:
            return []
        out: list[Message] = []
        effects: list[Effect] = []
        try:
            for item in batch:
                out += self._take(item, effects)
            if self.journal is not None:
                self.journal.commit()
        except JournalError as exc:
            self._fail(exc, batch)
            return []
        for message in out:
            self.publish(message)
        committed: list[Effect] = [
            functools.partial(h, out) for h in self._handlers["table:committed"]
        ]
        for effect in [*effects, *committed]:
            try:
                effect()
            except JournalError as exc:
                self._fail(exc)
            except Exception as exc:
                log.exception("after the commit: %r failed", effect)
                text = f"{type(exc).__name__}: {exc}"
                self.emit(self.notices.alert("daemon_fault", text))
        return out

    def _take(self, item: Item, effects: list[Effect]) -> list[Message]:
        """Journal one item and apply it; journal what it produced; return that. What is
        not an engine input goes to the handlers of `take:<its class>`."""
        if isinstance(item, FromRoom):
            effects.append(item.ack)  # the broker forgets it once it is in the journal
            item = item.item
        answers = self.send_event(f"take:{type(item).__name__}", item, effects)
        if answers:
            return [message for answer in answers for message in answer]
        if isinstance(item, Device) and self.device_states.get(item.name, "online") == item.state:
            return []  # no change to what is journaled (e.g. boards found after a restart)
        if isinstance(item, Tick) and self.window.stale(item):
            return []  # an input made before it moved the timer: nothing fires now
        if isinstance(item, Own):  # the loop's own item, no concern took it: a bug
            log.error("no handler for %r", item)
            return []
        return self._apply(item, effects)

    def _apply(self, item: Event, effects: list[Effect]) -> list[Message]:
        """Journal an input (dated no earlier than the last), apply it, journal the result;
        the `table:applied` handlers' effects wait for the commit."""
        t = max(item.t, self.last_t)
        if isinstance(item, Command) and self.window.window is None:
            t = max(self.now(), self.last_t)  # (in the window: when it was received)
        if t != item.t:
            item = dataclasses.replace(item, t=t)
        if self.journal is not None:
            self.journal.append(item)
        self.last_t = t
        if isinstance(item, Device):
            self.device_states[item.name] = item.state
            if item.state == "offline" and item.name in READERS:
                self.resync.gone(item.name, t, unsettled(self.engine.hand))
        try:
            messages = self.record("engine", self.engine.apply(item))
        except JournalError:
            raise
        except Exception as exc:  # never die on input
            refused = isinstance(exc, TableError)
            if refused:
                log.error("input refused: %s", exc)
            else:
                log.exception("engine failure on %r", item)
            kind = "input_error" if refused else "engine_fault"
            text = str(exc) if refused else f"{type(exc).__name__}: {exc}"
            error = f"refused: {exc}" if refused else f"internal error: {type(exc).__name__}"
            alert = self.notices.alert(kind, text)
            return self.record("daemon", [alert, *self.notices.failed_reply(item, error)])
        self.applied += 1
        effects += [e for e in self.send_event("table:applied", item) if e is not None]
        return messages

    def record(self, src: str, messages: list[Message]) -> list[Message]:
        """Journal messages about to be published ("engine" or "daemon" made them), as the
        shell sends them (controller/seal.py): hole cards sealed, events chained (and
        signed at a hand's end), then the keys that fall due with them."""
        return self.keep(self.seal.outgoing(src, messages, self.now()))

    def keep(self, records: list[Record]) -> list[Message]:
        """Journal records (a sealed card's key kept with it; the journal's chain signed
        after a hand's end) and return their messages, to publish after the commit."""
        if self.journal is not None:
            for r in records:
                self.journal.record(self.last_t, r.src, r.message, r.key)
                if r.sign:
                    self.journal.sign("hand")
        return [r.message for r in records]

    def _fail(self, exc: JournalError, lost: Sequence[Item] = ()) -> None:
        """The journal cannot be written: stop taking inputs, tell the room, exit non-zero
        (`tablectl run` returns 1, systemd restarts the daemon, recovery reads the journal).

        The table says it is stopped: presses are refused from now on (the GPIO backend
        stops acknowledging them), the fault lamp lights, and the alert names the presses
        that were not taken (those of the batch that could not be journaled and those
        queued behind it), so the dealer knows to press again once the table is back.
        """
        log.critical("journal failed, stopping: %s", exc)
        self.failed = exc
        self.devices.stop_table(f"the table is stopped: journal failed: {exc}")
        held = self.window.drain()  # made, never applied
        presses = [p for p in [*lost, *held, *_drain(self.queue)] if isinstance(p, ButtonPress)]
        labels = [p.name if p.seat is None else f"{p.name} seat {p.seat}" for p in presses]
        text = f"the table is stopped: {exc}"
        if labels:
            text += f"; press(es) not taken, press again once it is back: {', '.join(labels)}"
        details = {"stopped": True, "presses_not_taken": labels}
        # Not journaled (it cannot be): the room learns why the table goes away.
        self.publish(self.notices.alert("journal_failed", text, details))
        self._stopping.set()

    def emit(self, message: Message) -> None:
        """Publish a message the daemon makes outside a batch (a problem noticed after the
        commit), journaled and committed first like every other."""
        try:
            self.record("daemon", [message])
            if self.journal is not None:
                self.journal.commit()
        except JournalError as exc:
            self._fail(exc)
            return
        self.publish(message)

    def publish(self, message: Message) -> None:
        """Hand a journaled message to the publisher. One the contract forbids (a retained
        hole card: a bug) is refused there; the room is told and everything else goes on."""
        if self.publisher is None:
            return
        try:
            self.publisher.publish(message)
        except PublishError as exc:
            log.critical("message on %s not published: %s", message.topic, exc)
            text = f"a message on {message.topic} was not published: {exc}"
            details = {"topic": message.topic}
            self.emit(self.notices.alert("publish_refused", text, details, "critical"))


def _status(daemon: Daemon) -> str:
    """The table's line for systemd: its hand, how many dealt, the devices at fault."""
    hand = daemon.engine.hand
    number = hand.number if hand is not None else None
    engine = daemon.engine
    return status_text(daemon.config.table.id, number, engine.hand_number, daemon.devices.faulty)


def _gather(inbox: Inbox, first: Item | None) -> tuple[list[Item], bool, int]:
    """`first` and what else is queued behind it, up to MAX_BATCH items (the rest waits
    for the next commit, in order); True when the queue said stop (None); and how many
    more queued items were taken."""
    batch: list[Item] = []
    item: Item | Wake | None = first
    taken = 0
    while item is not None:
        if not isinstance(item, Wake):  # a jump while inputs wait: the next round looks
            batch.append(item)
        if len(batch) == MAX_BATCH:
            return batch, False, taken
        try:
            item = inbox.get_nowait()
        except queue.Empty:
            return batch, False, taken
        taken += 1
    return batch, True, taken


def _drain(inbox: Inbox) -> list[Item]:
    """What is still queued (never to be journaled: the table has stopped)."""
    items: list[Item] = []
    while True:
        try:
            item = inbox.get_nowait()
        except queue.Empty:
            return items
        if item is None:
            inbox.put(None)  # a stop request stays for the loop
            return items
        if isinstance(item, Wake):  # a step of the virtual clock: nothing to tell
            continue
        items.append(item.item if isinstance(item, FromRoom) else item)


def _done(inbox: Inbox, taken: int) -> None:
    """`taken` queued items are handled (`wait_idle` counts on it)."""
    for _ in range(taken):
        inbox.task_done()


def _earliest(*times: float | None) -> float | None:
    """The earliest of some times (None: none is set)."""
    known = [t for t in times if t is not None]
    return min(known) if known else None
