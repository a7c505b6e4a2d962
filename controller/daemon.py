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
from controller.commands import CommandError, command_label, parse_resend, parse_room_command
from controller.config import BrokerConfig, Config
from controller.delivery import AckedMark
from controller.devices import Devices
from controller.draws import DrawRequests
from controller.engine import Engine
from controller.engine.checkpoint import checkpoint
from controller.errors import JournalError, RetentionError, TableError
from controller.focus import FocusTracker
from controller.inputs import ButtonPress, Command, Device, Event, TagIn, TagOut, Tick, Timed
from controller.journal import InputJournal, SegmentedJournal, open_journal
from controller.messages import STATE, Message
from controller.notices import Notices
from controller.publisher import Publisher, PublishError
from controller.recovery import delivery_mark, recover
from controller.replay import build_engine
from controller.resend import RESEND, ResendRequest, answer_resend
from controller.resync import READERS, Resync
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
    """A malformed room command: answered on `replies`, never journaled nor applied."""

    name: str
    request_id: str | None
    error: str


class Wake:
    """Queued when the clock jumped (a virtual clock's step): the loop looks at its timers."""


WAKE = Wake()


class Inbox(queue.Queue["Item | Wake | None"]):
    """The loop's queue; it counts what was put on it (the sim's conductor waits on it)."""

    def __init__(self) -> None:
        super().__init__()
        self.puts = 0

    def _put(self, item: Item | Wake | None) -> None:  # called under the queue's lock
        super()._put(item)
        if not isinstance(item, Wake):
            self.puts += 1


Item = Event | DeviceAlert | RefusedCommand | ResendRequest | FromRoom
"""What the loop takes from the queue (None there asks it to stop; WAKE to look at the
clock again)."""


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
        self.queue = Inbox()
        self.timer.on_jump(lambda: self.queue.put(WAKE))
        self.journal: InputJournal | None = None
        self.epoch = self.clock()
        self.last_t = 0.0
        self.publisher: Publisher | None = None
        self.devices = Devices(config, self)
        self.notices = Notices(config.table.id, self.engine, self.now)
        self.supervisor = Supervisor()
        self.resync = Resync(sink=self.queue.put)
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
        self._run_id = secrets.token_hex(4)  # no clock: a Pi may boot with a wrong one

    # ------------------------------------------------------------------ time and input

    def now(self) -> float:
        """Trace time: seconds since the journal began."""
        return max(0.0, round(self.clock() - self.epoch, 6))

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
        self, name: str, payload: bytes, ack: Callable[[], None] | None = None
    ) -> None:
        """A room command from MQTT `cmd/<name>`: queued if valid, else answered as refused.

        A valid command is journaled and applied by the loop, and the engine answers it on
        `replies`; a malformed one changes nothing and gets an `ok: false` reply plus a
        `command_malformed` alert (controller/commands.py says what is malformed). `ack`
        (the broker's PUBACK) is called once the command or its refusal is journaled.
        """
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
        self.queue.put(item if ack is None else FromRoom(item, ack))

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
        self.journal = open_journal(self.config.journal, self.config.table.id, now=self.clock())
        self.acked = delivery_mark(self.config.journal)
        if self.journal is None:
            return []
        self.epoch = self.journal.epoch
        found = recover(self.engine, self.journal, self.acked, self.notices.alert)
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
            if first is False:
                self._done(taken)
                continue  # woken only to ping the watchdog: no input, nothing journaled
            batch, stop, more = self._gather(first)
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
        """When the engine's next timer fires (trace time); None: none, or the readers'
        catch-up after a restart holds the timers. Read it only while `idle()`."""
        return None if self.resync.pending() else self.engine.deadline()

    def _next_item(self) -> tuple[Item | Literal[False] | None, int]:
        """The next queued item (None: stop); a Tick when an engine timer fires first;
        False when the wait ended only for the watchdog's ping or a clock's jump; with how
        many queued items were taken."""
        frozen = self.resync.pending()  # no timer fires before the readers' catch-up
        deadline = None if frozen else self.engine.deadline()
        timeout = None if deadline is None else self.timer.real_wait(deadline - self.now())
        wait = self.supervisor.wait_limit(0.5 if frozen else timeout)
        try:
            item = self.queue.get(timeout=wait)
        except queue.Empty:
            if timeout is None or wait != timeout:
                return False, 0
            return Tick(t=self.now()), 0
        if not isinstance(item, Wake):
            return item, 1
        if deadline is not None and deadline <= self.now():
            return Tick(t=self.now()), 1  # the clock reached a timer
        return False, 1

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
        if isinstance(item, DeviceAlert):
            message = self.notices.alert(item.kind, item.message, item.details, item.severity)
            effects.append(functools.partial(self.devices.note_alert, item.kind, item.details))
            return self._record("daemon", [message])
        if isinstance(item, RefusedCommand):
            text = f"command {item.name!r} refused: {item.error}"
            details = {"command": item.name, "id": item.request_id}
            return self._record(
                "daemon",
                [
                    self.notices.refusal(item.name, item.request_id, item.error),
                    self.notices.alert("command_malformed", text, details, "warning"),
                ],
            )
        if isinstance(item, Device) and self.device_states.get(item.name, "online") == item.state:
            return []  # no change to what is journaled (e.g. boards found after a restart)
        return self._apply(item, effects)

    def _apply(self, item: Event, effects: list[Callable[[], None]]) -> list[Message]:
        """Journal an input (dated no earlier than the last), apply it, journal the result."""
        t = max(item.t, self.last_t)
        if isinstance(item, Command):
            t = max(self.now(), self.last_t)
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
        """Journal messages about to be published ("engine" or "daemon" made them)."""
        if self.journal is not None:
            for message in messages:
                self.journal.record(self.last_t, src, message)
        return messages

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
        presses = [p for p in [*lost, *self._drain()] if isinstance(p, ButtonPress)]
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
        event it produced (recovery re-sends from the active segment alone)."""
        return self.engine.hand is None and (
            self.acked is None or self.acked.written >= self.engine.seq
        )
