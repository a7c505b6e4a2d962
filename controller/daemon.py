"""The table loop: inputs are journaled, applied and committed, and only then published."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import queue
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from controller import __version__, heap
from controller.clock import Clock, FunctionClock, SystemClock
from controller.commands import (
    CommandError,
    CommandRateLimit,
    RetainedCommands,
    command_label,
    parse_resend,
    parse_room_command,
)
from controller.config import BrokerConfig, Config
from controller.delivery import AckedMark
from controller.devices import Devices
from controller.draws import DrawRequests
from controller.engine import Engine
from controller.engine.checkpoint import checkpoint
from controller.errors import JournalError, RetentionError, TableError
from controller.focus import FocusTracker
from controller.holeresend import HoleRequest, parse_request
from controller.holeresend import answer as answer_hole_request
from controller.inputs import ButtonPress, Command, Device, Event, TagIn, TagOut, Tick, Timed
from controller.journal import InputJournal, SegmentedJournal, open_journal
from controller.messages import STATE, Message
from controller.notices import Notices
from controller.ordering import ReorderWindow
from controller.publisher import Publisher, PublishError
from controller.recovery import delivery_mark, recover
from controller.replay import build_engine
from controller.resend import RESEND, ResendRequest, answer_resend
from controller.resync import READERS, Resync
from controller.seal import Record, table_seal
from controller.staff_sync import file_changes, roster, save
from controller.supervision import Supervisor, status_text

log = logging.getLogger("tablectl.daemon")


@dataclass(frozen=True, slots=True)
class DeviceAlert:
    """A fault reported by a driver (not an engine input, so not journaled)."""

    kind: str
    message: str
    details: dict[str, Any]
    severity: str = "warning"


#: The most queued items journaled and applied under one commit (one fdatasync).
MAX_BATCH = 64


@dataclass(frozen=True, slots=True)
class FromRoom:
    """A room command as it came from the broker, with its PUBACK for after the commit."""

    item: Command | RefusedCommand | ResendRequest
    ack: Callable[[], None]


@dataclass(frozen=True, slots=True)
class RefusedCommand:
    """A malformed (or rate-limited) room command: answered on `replies`, never journaled
    nor applied; `alert` the alert raised with it (None: none, its reply only)."""

    name: str
    request_id: str | None
    error: str
    alert: str | None = "command_malformed"
    details: tuple[tuple[str, Any], ...] = ()


class Wake:
    """Queued when the clock jumped (a virtual clock's step): the loop looks at its timers."""


WAKE = Wake()


class ReleaseDue:
    """The loop's own item when a hole-card key falls due (controller/seal.py): the keys
    due are released, journaled first; nothing goes to the engine."""


RELEASE = ReleaseDue()


class Inbox(queue.Queue["Item | Wake | None"]):
    """The loop's queue; it counts what was put on it (the sim's conductor waits on it)."""

    def __init__(self) -> None:
        super().__init__()
        self.puts = 0

    def _put(self, item: Item | Wake | None) -> None:  # called under the queue's lock
        super()._put(item)
        if not isinstance(item, Wake):
            self.puts += 1


Item = Event | DeviceAlert | RefusedCommand | ResendRequest | FromRoom | HoleRequest | ReleaseDue
"""What the loop takes from the queue (None there asks it to stop; WAKE to look at the
clock again)."""


def _made(item: Item) -> float:
    """When a queued input was made (the time it carries)."""
    inner = item.item if isinstance(item, FromRoom) else item
    t = getattr(inner, "t", None)
    return float(t) if isinstance(t, int | float) else 0.0


class Daemon:
    """One table: devices, journal, engine and publisher wired together.

    The loop (one thread, the only one that touches the engine) takes the queued inputs a
    batch at a time: journal each input, apply it, journal what it produced, commit, and
    only then publish and let it have effect (lamps, staff file, PUBACKs). The rest is
    delegated: recovery (controller/recovery.py), the readers' catch-up
    (controller/resync.py), the devices (controller/devices.py), systemd
    (controller/supervision.py), the staff file (controller/staff_sync.py), the RP-14
    draw (controller/draws.py) and the daemon's own alerts and replies
    (controller/notices.py).
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
        # One injected clock (controller/clock.py): trace time, the engine's timers and
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
        self.devices = Devices(config, self)
        self.notices = Notices(config.table.id, self.engine, self.now)
        self.supervisor = Supervisor()
        self.resync = Resync(sink=self.queue.put)
        # Inputs applied in the order they were made ([inputs] reorder_ms; 0: as they come).
        self.window: ReorderWindow[Item] | None = (
            ReorderWindow(
                config.inputs.window,
                time.monotonic if isinstance(self.timer, SystemClock) else self.timer.now,
            )
            if config.inputs.window > 0
            else None
        )
        self._tick_waiting: float | None = None  # the time of a Tick held in the window
        self._window_ticks: set[int] = set()  # ids of the loop's own Ticks, not applied yet
        self._sources = {
            **dict.fromkeys(config.card_reader.antennas, "card_reader"),
            **dict.fromkeys(config.chip_reader.antennas, "chip_reader"),
        }
        self.draws = DrawRequests()
        self.focus = FocusTracker()  # where the hand is: the boards read there first
        self.applied = 0
        self.failed: JournalError | None = None  # the journal broke: stopped, exit non-zero
        self.device_states: dict[str, str] = {}  # name -> "offline"/"online" (journaled)
        self.tag_view: dict[str, list[str]] = {}  # antenna -> tag uids (journaled)
        self.acked: AckedMark | None = None
        self.heap_trims = 0  # hands after which the heap's free pages went back (heap.py)
        self._trimmed_after = -1  # the hand number of the last of them
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._request_ids = itertools.count(1)
        self.command_limit = CommandRateLimit()  # room commands and resend (their rate)
        self.retained_commands = RetainedCommands()  # commands the broker kept: refused
        self._run_id = secrets.token_hex(4)  # no clock: a Pi may boot with a wrong one

    # ------------------------------------------------------------------ time and input

    def now(self) -> float:
        """Trace time: seconds since the journal began."""
        return max(0.0, round(self.clock() - self.epoch, 6))

    def made_at(self, monotonic: float) -> float:
        """Trace time of a moment of the machine's monotonic clock (a GPIO edge stamped at
        the interrupt). On a simulated or test clock, trace time now: time stands still
        while an input is in flight there (docs/architecture.md, "Time")."""
        if not isinstance(self.timer, SystemClock):
            return self.now()
        return max(0.0, round(self.now() - max(0.0, time.monotonic() - monotonic), 6))

    def real_time(self) -> bool:
        """Whether trace time is the machine's clock (the boards' reports are then dated by
        the boards' clocks; on a simulated clock when they are decoded)."""
        return isinstance(self.timer, SystemClock)

    def submit(self, event: Event) -> None:
        """Queue an input event (thread-safe; called from driver threads). A button press
        waits behind reader moves held back by a catch-up (controller/resync.py)."""
        if isinstance(event, ButtonPress):
            self.resync.admit_press(event)
        else:
            self.queue.put(event)

    def submit_device(self, name: str, state: str) -> None:
        """A reader's availability changed (thread-safe): queued as a `Device` input.

        The loop journals it only when it differs from the journaled state, so a restart
        that finds the boards in place adds nothing, and one that finds a board gone (or
        back) records exactly that change.
        """
        self.resync.device(name, Device(t=self.now(), name=name, state=state))

    def submit_reader_event(self, name: str, event: TagIn | TagOut) -> None:
        """A reader's tag event (thread-safe), dated and merged as the resync says."""
        self.resync.admit(name, event)

    def submit_catch_up(self, name: str, batch: list[Timed]) -> None:
        """What a reader re-read (thread-safe), each move with its board's time: merged with
        the other board's by that time once both caught up (controller/resync.py)."""
        self.resync.catch_up(name, batch)

    def submit_alert(self, kind: str, message: str, details: dict[str, Any]) -> None:
        """Queue a device alert (thread-safe)."""
        severity = "critical" if kind.endswith(("disconnected", "silent")) else "warning"
        self.queue.put(DeviceAlert(kind, message, dict(details), severity))

    def next_request_id(self) -> str:
        """A request id for a room command that came without one: unique across restarts
        too (the engine applies a request id once), as it names this run at random."""
        return f"auto-{self._run_id}-{next(self._request_ids)}"

    def submit_command(
        self,
        name: str,
        payload: bytes,
        ack: Callable[[], None] | None = None,
        *,
        retained: bool = False,
    ) -> None:
        """A room command from MQTT `cmd/<name>`: queued if valid, else answered as refused.

        A valid command is journaled and applied by the loop, and the engine answers it on
        `replies`; a malformed one changes nothing and gets an `ok: false` reply plus a
        `command_malformed` alert (controller/commands.py says what is malformed), and so
        does one that came `retained` (kept by the broker: never applied; its alert is
        `command_retained`). `ack` (the broker's PUBACK) is called once the command or its
        refusal is journaled.
        """
        if retained:
            self._refuse_retained(name, payload, ack)
            return
        item: Command | RefusedCommand | ResendRequest
        try:
            if name == RESEND:  # answered from the journal by the loop (controller/resend.py)
                item = parse_resend(payload)
            else:
                item = parse_room_command(name, payload, t=self.now(), next_id=self.next_request_id)
        except CommandError as exc:
            item = RefusedCommand(command_label(name), exc.request_id, str(exc))
        except Exception as exc:  # never let a payload take the MQTT thread down
            log.exception("room command %r could not be checked", name)
            error = f"internal error: {type(exc).__name__}"
            item = RefusedCommand(command_label(name), None, error)
        item = self._rate_limited(name, item)
        self.queue.put(item if ack is None else FromRoom(item, ack))

    def _rate_limited(
        self, name: str, item: Command | RefusedCommand | ResendRequest
    ) -> Command | RefusedCommand | ResendRequest:
        """`item`, or its refusal when room commands (or `resend`) come too fast
        (controller/commands.py, CommandRateLimit): one alert a minute, a reply each."""
        cost = item.to_seq - item.from_seq + 1 if isinstance(item, ResendRequest) else 1
        refusal = self.command_limit.admit(name, cost)
        if refusal is None:
            return item
        rid = item.request_id if isinstance(item, RefusedCommand | ResendRequest) else None
        if isinstance(item, Command) and isinstance(item.args.get("id"), str):
            rid = item.args["id"]
        return RefusedCommand(
            command_label(name),
            rid,
            refusal.error,
            alert="commands_rate_limited" if refusal.alert else None,
            details=(("refused", refusal.refused), ("resend", name == RESEND)),
        )

    def _refuse_retained(self, name: str, payload: bytes, ack: Callable[[], None] | None) -> None:
        """A command that came with the retain flag: the broker keeps it (published with
        retain, now or before) and would send it to every new subscription, so it is never
        applied: refused, a reply each, one `command_retained` alert a minute
        (controller/commands.py, RetainedCommands). An empty one clears a retained command:
        not a command, acknowledged and nothing more."""
        refusal = self.retained_commands.refuse(payload)
        if refusal is None:
            log.info("a retained command on cmd/%s was cleared", command_label(name))
            if ack is not None:
                ack()
            return
        item = self._rate_limited(
            name,
            RefusedCommand(
                command_label(name),
                refusal.request_id,
                refusal.error,
                alert="command_retained" if refusal.alert else None,
                details=(("refused", refusal.refused), ("retained", True)),
            ),
        )
        self.queue.put(item if ack is None else FromRoom(item, ack))

    def submit_tv_request(self, kind: str, payload: bytes) -> None:
        """TV asks for hole cards it missed (`tvreq/<kind>`, controller/holeresend.py):
        queued for the loop, which answers from the journal; a malformed one is dropped."""
        try:
            self.queue.put(parse_request(kind, payload))
        except ValueError as exc:
            log.warning("TV request on tvreq/%s ignored: %s", kind, exc)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Recover from the journal, connect the broker, open the devices, start the loop."""
        heap.settle()  # a day of play must not grow the C heap in steps (controller/heap.py)
        if heap.available():
            allocator = heap.python_allocator()
            log.info("Python objects from %s", allocator)
            if allocator != "malloc":
                log.info("PYTHONMALLOC=malloc (the service sets it) lets the trim return them")
        recovered = self._recover()
        self.publisher = Publisher(
            self.broker,
            self.broker.prefix,
            self.broker.client_id,
            status={
                "table": self.config.table.id,
                "room": self.config.table.room,
                "version": __version__,
            },
            on_command=self.submit_command,
            acked_seq=self.acked.written if self.acked is not None else 0,
            on_tv_request=self.submit_tv_request,
            status_fields=self.seal.status_fields,
        )
        self.publisher.start()
        for message in recovered:
            self._publish(message)
        if self.acked is not None:
            self.acked.start(lambda: self.publisher.acked_seq if self.publisher else 0)
        self.devices.open(self.tag_view)
        self.devices.focus(self.focus.update(self.engine.snapshot()).antennas)
        # Recovered and devices open: tell systemd (Type=notify); the loop pings its watchdog.
        self.supervisor.ready(self._status_text())
        self._request_draw()  # a four-card flop's draw the stop left unasked (RP-14)
        self._thread = threading.Thread(target=self._loop, name="tablectl-engine", daemon=True)
        self._thread.start()

    def _recover(self) -> list[Message]:
        """Open the journal and rebuild the table from it (controller/recovery.py); return
        what to publish again. A new journal opens with the state it starts from."""
        self.journal = open_journal(
            self.config.journal, self.config.table.id, now=self.clock(), signer=self.seal.signer
        )
        self.acked = delivery_mark(self.config.journal)
        if self.journal is None:
            return []
        if isinstance(self.journal, SegmentedJournal):
            self.journal.seal_state = self.seal.snapshot  # a new segment starts from it
        self.epoch = self.journal.epoch
        self.engine.epoch = round(self.epoch, 6)  # as the journal's header has it
        found = recover(self.engine, self.journal, self.acked, self.notices.alert, self.seal)
        self.last_t = found.last_t
        self.device_states = found.device_states
        self.tag_view = found.tag_view
        if self.journal.blank:
            # A new journal opens with the state it starts from, staff registry
            # included: it replays the same whatever the table's files say later.
            self.journal.write_checkpoint(self.engine.t, checkpoint(self.engine))
        self._adopt_staff_file()
        if self.journal.events:  # a restart: catch up what moved meanwhile first
            self.resync.begin(READERS, self.last_t, self._unsettled())
        return found.messages

    def _unsettled(self) -> tuple[int, ...]:
        """Seats whose push is not read yet (a gap now would cut it)."""
        betting = self.engine.hand.betting if self.engine.hand is not None else None
        return tuple(getattr(betting, "unsettled", ()))

    def _adopt_staff_file(self) -> None:
        """The staff file may have been edited while the daemon was stopped: what differs
        from the registry the journal left becomes `staff` commands (journaled inputs)."""
        path = self.config.badge.staff
        if path is None:
            return
        try:
            commands = file_changes(path, roster(self.engine), self.now())
        except TableError as exc:
            log.error("staff file %s not taken: %s", path, exc)
            return
        for command in commands:
            self.submit(command)

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
            self._rotate_at_stop(self.journal)
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
            if first is False and self.window is None:
                self._done(taken)
                continue  # woken only to ping the watchdog: no input, nothing journaled
            batch, stop, more = ([], False, 0) if first is False else self._gather(first)
            if self.window is not None:
                batch = self._reorder(batch, stop)
            if batch:
                try:
                    self.handle(batch)
                except Exception as exc:  # a bug must not stop the table taking inputs
                    log.exception("batch of %d input(s) failed", len(batch))
                    text = f"{type(exc).__name__}: {exc}"
                    self._emit_own(self.notices.alert("daemon_fault", text))
                self.supervisor.status(self._status_text())
            self._done(taken + more)
            if stop and self._stopping.is_set():
                return

    def _done(self, taken: int) -> None:
        """`taken` queued items are handled (`idle` counts on it)."""
        for _ in range(taken):
            self.queue.task_done()

    def idle(self) -> bool:
        """Nothing queued and nothing being handled (the sim's conductor steps a virtual
        clock only then: every input of a moment is handled at that moment)."""
        return self.queue.unfinished_tasks == 0

    def wait_idle(self, timeout: float) -> bool:
        """Wait (`timeout` real seconds at most) until `idle()`; False if it is not."""
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
        catch-up after a restart holds the engine's timers). Read it only while `idle()`."""
        engine = None if self.resync.pending() else self._deadline()
        return _earliest(engine, self.seal.next_due(), self._release_at())

    def last_release_due(self) -> float | None:
        """When the last hole-card key owed with a time is due (the sim waits for it)."""
        return self.seal.last_due()

    def _timer_item(self, engine_due: float | None) -> Tick | ReleaseDue:
        """What a timer that fired brings: an engine tick, or the keys due."""
        if engine_due is not None and engine_due <= self.now():
            return self._tick()
        return RELEASE

    def _release_at(self) -> float | None:
        """When (trace time) the reorder window lets its next input go; None: none held."""
        window = self.window
        release = window.next_release() if window is not None else None
        if window is None or release is None:
            return None
        return self.now() + (release - window.clock())

    def _deadline(self) -> float | None:
        """The engine's next timer, unless its Tick already waits in the reorder window."""
        deadline = self.engine.deadline()
        if deadline is not None and self._tick_waiting is not None:
            return None
        return deadline

    def _next_item(self) -> tuple[Item | Literal[False] | None, int]:
        """The next queued item (None: stop); a Tick when an engine timer fires first, or
        the keys due when a hole-card key's time comes; False when the wait ended only for
        the watchdog's ping, a clock's jump or the reorder window; with how many queued
        items were taken."""
        frozen = self.resync.pending()  # no engine timer fires before the readers' catch-up
        engine_due = None if frozen else self._deadline()
        deadline = _earliest(engine_due, self.seal.next_due())
        timeout = None if deadline is None else self.timer.real_wait(deadline - self.now())
        window = self.window
        release = window.next_release() if window is not None else None
        if window is not None and release is not None:  # or an input the window lets go
            if isinstance(self.timer, SystemClock):
                step: float | None = max(0.0, release - window.clock())
            else:
                step = self.timer.real_wait(release - window.clock())
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
            if deadline is not None and deadline <= self.now():
                return self._timer_item(engine_due), 0
            return False, 0
        if not isinstance(item, Wake):
            return item, 1
        if deadline is not None and deadline <= self.now():
            return self._timer_item(engine_due), 1  # the clock reached a timer
        return False, 1

    def _tick(self) -> Tick:
        """An engine timer fired: its Tick (the loop's own, known by its id while it waits
        in the reorder window)."""
        tick = Tick(t=self.now())
        if self.window is not None:
            self._window_ticks.add(id(tick))
        return tick

    def _gather(self, first: Item | None) -> tuple[list[Item], bool, int]:
        """`first` and what else is queued behind it, up to MAX_BATCH items (the rest waits
        for the next commit, in order); True when the queue said stop (None); and how
        many more queued items were taken."""
        batch: list[Item] = []
        item: Item | Wake | None = first
        taken = 0
        while item is not None:
            if not isinstance(item, Wake):  # a jump while inputs wait: the next round looks
                batch.append(item)
            if len(batch) == MAX_BATCH:
                return batch, False, taken
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                return batch, False, taken
            taken += 1
        return batch, True, taken

    def _reorder(self, batch: list[Item], stop: bool) -> list[Item]:
        """Through the reorder window: inputs (and the engine's Ticks) wait there until
        the window after they were made has passed, then go in the order they were made;
        what is not an input (device alerts, refused commands, resend requests, hole-card
        keys due, TV's requests) goes at once. At a stop everything held goes (it was
        made: it is applied)."""
        window = self.window
        assert window is not None
        now = self.now()
        out: list[Item] = []
        for item in batch:
            source = self._source(item)
            if source is None:
                out.append(item)
                continue
            if isinstance(item, Tick) and id(item) in self._window_ticks:
                self._tick_waiting = item.t
            made = _made(item)
            window.hold(item, source, made, now - made)
        released = window.drain() if stop else window.due()
        for item in released:
            if isinstance(item, Tick) and id(item) in self._window_ticks:
                self._tick_waiting = None
        return out + released

    def _source(self, item: Item) -> str | None:
        """Which source an input came from (its order is kept); None: not an input."""
        if isinstance(item, FromRoom):
            return "room" if isinstance(item.item, Command) else None
        if isinstance(item, TagIn | TagOut):
            return self._sources.get(item.antenna, "reader")
        if isinstance(item, ButtonPress):
            return "gpio"
        if isinstance(item, Device):
            return item.name
        if isinstance(item, Command):
            return "room"
        if isinstance(item, Tick):
            return "timer"
        if isinstance(item, DeviceAlert | RefusedCommand | ResendRequest | ReleaseDue):
            return None
        if isinstance(item, HoleRequest):
            return None
        return "badge"

    def _status_text(self) -> str:
        hand = self.engine.hand
        number = hand.number if hand is not None else None
        return status_text(
            self.config.table.id, number, self.engine.hand_number, self.devices.faulty
        )

    def process(self, item: Item) -> list[Message]:
        """Journal and apply one item, commit, publish what it produced (a batch of one)."""
        return self.handle([item])

    def handle(self, batch: Sequence[Item]) -> list[Message]:
        """Journal and apply a batch of items; commit the journal once; only then publish
        what they produced and let it have effect (lamps, staff file, PUBACKs).

        Every input and every message is in the journal, durable by the fsync policy,
        before the room, the TV or a lamp sees anything of it (group commit: one
        fdatasync for the batch). A journal that cannot be written stops the daemon
        (`failed`): going on would publish what recovery could not reproduce.
        """
        if self.failed:
            return []
        out: list[Message] = []
        effects: list[Callable[[], None]] = []
        try:
            for item in batch:
                out += self._take(item, effects)
            if self.journal is not None:
                self.journal.commit()
        except JournalError as exc:
            self._fail(exc, batch)
            return []
        for message in out:
            self._publish(message)
        effects.append(functools.partial(self._focus_boards, out))
        for effect in [
            *effects,
            self._update_lamps,
            self._rotate_journal_if_due,
            self._trim_heap_after_hand,
        ]:
            self._guarded(effect)
        return out

    def _guarded(self, effect: Callable[[], None]) -> None:
        """Run one effect of a committed batch (a lamp, a PUBACK, the staff file, a
        rotation): whatever it raises is told to the room, and the next one still runs."""
        try:
            effect()
        except JournalError as exc:
            self._fail(exc)
        except Exception as exc:
            log.exception("after the commit: %r failed", effect)
            text = f"{type(exc).__name__}: {exc}"
            self._emit_own(self.notices.alert("daemon_fault", text))

    def _take(self, item: Item, effects: list[Callable[[], None]]) -> list[Message]:
        """Journal one item and apply it; journal what it produced; return that."""
        if isinstance(item, FromRoom):
            effects.append(item.ack)  # the broker forgets it once it is in the journal
            item = item.item
        if isinstance(item, ResendRequest):  # events again as journaled; the reply journaled
            answer = answer_resend(item, self.config, t=self.now(), last_seq=self.engine.seq)
            return [*answer.events, *self._record("daemon", [answer.reply])]
        if isinstance(item, ReleaseDue):  # hole-card keys due: journaled, then published
            return self._journal_records(self.seal.due(self.now()))
        if isinstance(item, HoleRequest):  # TV: hole cards again as journaled, to TV only
            hole = answer_hole_request(item, self.config, self.seal, t=self.now())
            return [*hole.messages, *self._record("daemon", hole.alerts)]
        if isinstance(item, DeviceAlert):
            message = self.notices.alert(item.kind, item.message, item.details, item.severity)
            effects.append(functools.partial(self.devices.note_alert, item.kind, item.details))
            return self._record("daemon", [message])
        if isinstance(item, RefusedCommand):
            text = f"command {item.name!r} refused: {item.error}"
            details = {"command": item.name, "id": item.request_id, **dict(item.details)}
            out = [self.notices.refusal(item.name, item.request_id, item.error)]
            if item.alert is not None:
                if item.alert in ("commands_rate_limited", "command_retained"):
                    text = f"{dict(item.details)['refused']} room command(s) refused: {item.error}"
                out.append(self.notices.alert(item.alert, text, details, "warning"))
            return self._record("daemon", out)
        if isinstance(item, Device) and self.device_states.get(item.name, "online") == item.state:
            return []  # no change to what is journaled (e.g. boards found after a restart)
        if isinstance(item, Tick) and id(item) in self._window_ticks:
            self._window_ticks.discard(id(item))
            deadline = self.engine.deadline()
            if deadline is None or deadline > item.t:
                return []  # an input made before it moved the timer: nothing fires now
        return self._apply(item, effects)

    def _apply(self, item: Event, effects: list[Callable[[], None]]) -> list[Message]:
        """Journal an input (dated no earlier than the last), apply it, journal the result."""
        t = max(item.t, self.last_t)
        if isinstance(item, Command) and self.window is None:
            t = max(self.now(), self.last_t)  # (in the window: when it was received)
        if t != item.t:
            item = dataclasses.replace(item, t=t)
        if self.journal is not None:
            self.journal.append(item)
        self.last_t = t
        if isinstance(item, Device):
            self.device_states[item.name] = item.state
            if item.state == "offline" and item.name in READERS:
                self.resync.gone(item.name, t, self._unsettled())
        try:
            messages = self._record("engine", self.engine.apply(item))
        except JournalError:
            raise
        except TableError as exc:  # never die on input
            log.error("input refused: %s", exc)
            return self._record(
                "daemon",
                [
                    self.notices.alert("input_error", str(exc)),
                    *self.notices.failed_reply(item, f"refused: {exc}"),
                ],
            )
        except Exception as exc:
            log.exception("engine failure on %r", item)
            text = f"{type(exc).__name__}: {exc}"
            return self._record(
                "daemon",
                [
                    self.notices.alert("engine_fault", text),
                    *self.notices.failed_reply(item, f"internal error: {type(exc).__name__}"),
                ],
            )
        self.applied += 1
        effects.append(self._request_draw)
        if isinstance(item, Command) and item.name == "staff" and self.engine.command_accepted:
            effects.append(self._write_staff)
        return messages

    def _record(self, src: str, messages: list[Message]) -> list[Message]:
        """Journal messages about to be published ("engine" or "daemon" made them), as the
        shell sends them (controller/seal.py): hole cards sealed, events chained (and
        signed at a hand's end), then the keys that fall due with them."""
        return self._journal_records(self.seal.outgoing(src, messages, self.now()))

    def _journal_records(self, records: list[Record]) -> list[Message]:
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
        held = self.window.drain() if self.window is not None else []  # made, never applied
        presses = [p for p in [*lost, *held, *self._drain()] if isinstance(p, ButtonPress)]
        labels = [p.name if p.seat is None else f"{p.name} seat {p.seat}" for p in presses]
        text = f"the table is stopped: {exc}"
        if labels:
            text += f"; press(es) not taken, press again once it is back: {', '.join(labels)}"
        details = {"stopped": True, "presses_not_taken": labels}
        # Not journaled (it cannot be): the room learns why the table goes away.
        self._publish(self.notices.alert("journal_failed", text, details))
        self._stopping.set()

    def _drain(self) -> list[Item]:
        """What is still queued (never to be journaled: the table has stopped)."""
        items: list[Item] = []
        while True:
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                return items
            if item is None:
                self.queue.put(None)  # a stop request stays for the loop
                return items
            if isinstance(item, Wake):  # a step of the virtual clock: nothing to tell
                continue
            items.append(item.item if isinstance(item, FromRoom) else item)

    def _emit_own(self, message: Message) -> None:
        """Publish a message the daemon makes outside a batch (a problem noticed after the
        commit), journaled and committed first like every other."""
        try:
            self._record("daemon", [message])
            if self.journal is not None:
                self.journal.commit()
        except JournalError as exc:
            self._fail(exc)
            return
        self._publish(message)

    def _publish(self, message: Message) -> None:
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
            self._emit_own(self.notices.alert("publish_refused", text, details, "critical"))

    # ------------------------------------------------------------------ effects (after a commit)

    def _focus_boards(self, out: Sequence[Message]) -> None:
        """The reader boards read first where the hand is (controller/focus.py), from the
        last state the engine published (not an input: nothing is journaled)."""
        for message in reversed(out):
            if message.topic == STATE:
                self.devices.focus(self.focus.update(message.payload).antennas)
                return

    def _update_lamps(self) -> None:
        if self.devices.lamps is not None:  # engine.lamps() is not free: only for real lamps
            self.devices.show(self.engine.lamps())

    def _request_draw(self) -> None:
        """RP-14: a draw the engine wants enters as a journaled `draw` command."""
        command = self.draws.command(self.engine.wants_draw(), self.now)
        if command is not None:
            self.submit(command)

    def _write_staff(self) -> None:
        """A room command changed the staff registry: the file follows (atomic write)."""
        path = self.config.badge.staff
        if path is None:
            return
        try:
            save(path, roster(self.engine))
        except (OSError, TableError) as exc:
            text, details = f"{path}: {exc}", {"path": str(path)}
            # journaled before it is published, like every message
            self._emit_own(self.notices.alert("staff_registry_not_saved", text, details))

    def _rotate_journal_if_due(self) -> None:
        """Between hands, start a new journal segment (opening with a checkpoint) when due."""
        journal = self.journal
        if journal is None or not journal.rotation_due() or not self._rotation_allowed():
            return
        try:
            journal.rotate(checkpoint(self.engine), self.engine.t)
        except RetentionError as exc:  # rotated; old segments stay until the next rotation
            log.error("%s", exc)
            self._emit_own(self.notices.alert("journal_error", str(exc), {}, "warning"))
        except JournalError as exc:  # the current segment stays in use; retried next time
            log.error("journal rotation failed: %s", exc)
            text = f"journal rotation failed: {exc}"
            self._emit_own(self.notices.alert("journal_error", text, {}, "warning"))
        heap.trim()  # between hands: what the gzip and the checkpoint freed goes back

    def _trim_heap_after_hand(self) -> None:
        """Once a hand is over, hand the heap's free pages back to the system (heap.py): what
        a hand allocated and freed must not stay resident over a day of play."""
        number = self.engine.hand_number
        if self.engine.hand is not None or number == self._trimmed_after:
            return
        self._trimmed_after = number
        if heap.available():
            heap.trim()
            self.heap_trims += 1

    def _rotate_at_stop(self, journal: InputJournal) -> None:
        """A clean stop between hands, every event acknowledged, starts a new segment from a
        checkpoint: the next start (maybe of another version) replays nothing of this run."""
        if (
            self.failed is not None
            or not isinstance(journal, SegmentedJournal)
            or not journal.has_inputs
            or not self._rotation_allowed()
        ):
            return
        try:
            journal.rotate(checkpoint(self.engine), self.engine.t)
        except JournalError as exc:  # the journal is whole as it is: recovery replays it
            log.error("journal rotation at stop failed: %s", exc)

    def _rotation_allowed(self) -> bool:
        """A segment closes between hands only, and only once the broker acknowledged every
        event it produced (recovery re-sends from the active segment alone). The durable
        mark of what it acknowledged is written every 0.1 s; a rotation that waits only
        for it writes it at once (between hands can be short: a few inputs)."""
        if self.engine.hand is not None:
            return False
        acked = self.acked
        if acked is None or acked.written >= self.engine.seq:
            return True
        if self.publisher is not None and self.publisher.acked_seq >= self.engine.seq:
            try:
                acked.write(self.engine.seq)
            except (OSError, TableError) as exc:  # the mark's own thread will say it again
                log.warning("delivery mark not written: %s", exc)
        return acked.written >= self.engine.seq


def _earliest(*times: float | None) -> float | None:
    """The earliest of some times (None: none is set)."""
    known = [t for t in times if t is not None]
    return min(known) if known else None
