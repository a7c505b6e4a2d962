"""The daemon: devices feed one queue, one loop journals and applies events, then publishes."""

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
from pathlib import Path
from typing import Any

from controller import __version__, sdnotify
from controller.commands import CommandError, command_label, parse_room_command
from controller.config import BrokerConfig, Config, ReaderConfig
from controller.delivery import AckedMark, Redelivery, acked_path
from controller.engine import Engine
from controller.engine.checkpoint import checkpoint, restore
from controller.errors import DeviceError, JournalError, RetentionError, TableError
from controller.journal import InputJournal, SegmentedJournal, open_journal
from controller.messages import ALERTS, REPLIES, STATE, Message
from controller.publisher import Publisher, PublishError
from controller.replay import Step, build_engine, flag_last, journal_steps
from controller.staff import load_staff
from controller.trace import Command, Device, Event, TagIn, TagOut, Tick

log = logging.getLogger("tablectl.daemon")

FAULTS = frozenset({"reader_disconnected", "reader_silent", "antenna_mismatch"})
RECOVERIES = frozenset({"reader_reconnected", "reader_recovered"})
#: After a restart no timer fires until every reader has re-read its antennas (or this
#: many seconds passed), and chips the catch-up adds to a push the crash cut short are
#: dated to the last journaled input: the push is read whole, not settled in two halves.
RESYNC_TIMEOUT = 15.0


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

    item: Command | RefusedCommand
    ack: Callable[[], None]


@dataclass(frozen=True, slots=True)
class RefusedCommand:
    """A malformed room command: answered on `replies`, never journaled nor applied."""

    name: str
    request_id: str | None
    error: str


Item = Event | DeviceAlert | RefusedCommand | FromRoom
"""What the loop takes from the queue (None there asks it to stop)."""


class Daemon:
    """One table: devices, journal, engine and publisher wired together."""

    def __init__(
        self,
        config: Config,
        *,
        broker: BrokerConfig | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.broker = broker or config.broker
        self.clock = clock
        self.engine: Engine = build_engine(config)
        self.queue: queue.Queue[Item | None] = queue.Queue()
        self.journal: InputJournal | None = None
        self.epoch = clock()
        self.last_t = 0.0
        self.publisher: Publisher | None = None
        self.sim_boards: dict[str, Any] = {}
        self.readers: list[Any] = []
        self.badge_reader: Any = None  # drivers.badge.BadgeReader, when configured
        self.sim_badge: Any = None  # the same, when it is the simulated one
        self.gpio: Any = None
        self.buttons: Any = None
        self.lamps: Any = None
        self.applied = 0
        self.failed: JournalError | None = None  # the journal broke: stopped, exit non-zero
        self.faulty: set[str] = set()
        self._draw_asked: tuple[str, int] | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        # systemd (controller/sdnotify.py): watchdog period (half of WatchdogSec) and status
        self._watchdog_period: float | None = None
        self._watchdog_next = 0.0
        self._status_sent = ""
        self._request_ids = itertools.count(1)
        self._run_id = secrets.token_hex(4)  # no clock: a Pi may boot with a wrong one
        # resilience: device availability as journaled, restart resync, delivery mark
        self.device_states: dict[str, str] = {}  # name -> "offline"/"online" (journaled)
        self.tag_view: dict[str, list[str]] = {}  # antenna -> uids, as journaled
        self._resyncing: set[str] = set()  # readers not re-read since the restart
        self._resync_by = 0.0
        self._cut_pushes: set[str] = set()  # bet zones with a push the crash interrupted
        self._crash_t = 0.0  # the last journaled input's t
        self.acked: AckedMark | None = None

    # ------------------------------------------------------------------ time and input

    def now(self) -> float:
        """Trace time: seconds since the journal began."""
        return max(0.0, round(self.clock() - self.epoch, 6))

    def submit_device(self, name: str, state: str) -> None:
        """A reader's availability changed (thread-safe): queued as a `Device` input.

        The loop journals it only when it differs from the journaled state, so a restart
        that finds the boards in place adds nothing, and one that finds a board gone (or
        back) records exactly that change.
        """
        self.queue.put(Device(t=self.now(), name=name, state=state))
        if name in self._resyncing:  # after the catch-up it queued (same driver thread)
            self._resyncing.discard(name)
            if not self._resyncing:
                log.info("readers resynchronised after the restart")

    def submit_reader_event(self, name: str, event: TagIn | TagOut) -> None:
        """A reader's tag event (thread-safe). During the catch-up after a restart, a chip
        added to a push the crash cut short is dated to the last journaled input, so the
        push reads as one; everything else is dated now (a push begun while the daemon was
        down goes on normally once it is back)."""
        if (
            name in self._resyncing
            and isinstance(event, TagIn)
            and event.antenna in self._cut_pushes
        ):
            event = dataclasses.replace(event, t=self._crash_t)
        self.queue.put(event)

    def _resync_pending(self) -> bool:
        """True while timers wait for the readers' catch-up after a restart."""
        if self._resyncing and time.monotonic() >= self._resync_by:
            log.warning("readers not resynchronised after %.0f s: going on", RESYNC_TIMEOUT)
            self._resyncing = set()
        return bool(self._resyncing)

    def submit(self, event: Event) -> None:
        """Queue an input event (thread-safe; called from driver threads)."""
        self.queue.put(event)

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
        item: Command | RefusedCommand
        try:
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
        recovered: list[Message] = []
        self.journal = open_journal(self.config.journal, self.config.table.id, now=self.clock())
        mark = self._acked_file()
        if mark is not None:
            self.acked = AckedMark(mark)
            self.acked.load()
        if self.journal is not None:
            self.epoch = self.journal.epoch
            recovered = self._recover(self.journal)
            if self.journal.blank:
                # A new journal opens with the state it starts from, staff registry
                # included: it replays the same whatever the table's files say later.
                self.journal.write_checkpoint(self.engine.t, checkpoint(self.engine))
            self._adopt_staff_file()
            if self.journal.events:  # a restart: catch up what moved meanwhile first
                self._resyncing = {"card_reader", "chip_reader"}
                self._resync_by = time.monotonic() + RESYNC_TIMEOUT
                self._crash_t = self.last_t
                betting = self.engine.hand.betting if self.engine.hand is not None else None
                unsettled = getattr(betting, "unsettled", ())
                self._cut_pushes = {f"bet{seat}" for seat in unsettled}
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
        self._open_gpio()
        self._open_reader("card_reader", self.config.card_reader, kind="card")
        self._open_reader("chip_reader", self.config.chip_reader, kind="chip")
        self._open_badge()
        # Recovered and devices open: tell systemd (Type=notify); the loop pings its watchdog.
        interval = sdnotify.watchdog_interval()
        self._watchdog_period = interval / 2 if interval else None
        self._watchdog_next = time.monotonic()
        self._status_sent = self._status_text()
        sdnotify.notify(f"READY=1\nSTATUS={self._status_sent}")
        self._request_draw()  # a four-card flop's draw the stop left unasked (RP-14)
        self._thread = threading.Thread(target=self._loop, name="tablectl-engine", daemon=True)
        self._thread.start()

    def _recover(self, journal: InputJournal) -> list[Message]:
        """Re-apply the journal; return what to publish again (at-least-once).

        A segment that starts with a checkpoint restores the engine from it first (rotation
        happens between hands, so the hand in progress is all in the segment). Everything
        published after the last events `seq` the broker acknowledged (the `acked` mark) is
        published again, in order, then the latest state (docs/operations.md, Delivery
        guarantees): the engine's messages as it regenerates them (checked against the
        journal's `out` records: a difference raises `journal_mismatch`), the shell's own
        as recorded. Also rebuilt: the journaled device states and antenna contents.
        """
        if self.acked is not None and not journal.events and journal.checkpoint is None:
            if self.acked.written:
                log.warning("new journal: old delivery mark %d dropped", self.acked.written)
            self.acked.reset()
        acked = self.acked.written if self.acked is not None else 0
        redo = Redelivery(acked)
        if journal.checkpoint is not None:
            restore(self.engine, journal.checkpoint)
            self.last_t = self.engine.t
            redo.last_seq = self.engine.seq
            redo.add([Message(STATE, self.engine.snapshot(), qos=1, retain=True)])
            self._seed_view_from_checkpoint()
        mismatches: list[str] = []
        for step, last in flag_last(journal_steps(self.engine, journal.events, journal.outputs)):
            redo.add(step.published)
            event = step.event
            if event is None:
                continue
            self.last_t = event.t
            problem = step.mismatch(last=last)
            if problem is not None:
                mismatches.append(f"t={event.t}: {problem}")
            elif last:
                self._complete_torn_tail(journal, step)
            if isinstance(event, Device):
                self.device_states[event.name] = event.state
            elif isinstance(event, TagIn | TagOut) and event.uid is not None:
                uids = self.tag_view.setdefault(event.antenna, [])
                if isinstance(event, TagIn) and event.uid not in uids:
                    uids.append(event.uid)
                elif isinstance(event, TagOut) and event.uid in uids:
                    uids.remove(event.uid)
        if journal.events:
            log.info("recovered %d journaled events, seq=%d", len(journal.events), self.engine.seq)
        messages = redo.result()
        if mismatches:
            text = (
                f"{len(mismatches)} journaled input(s) now give other messages than were "
                f"published (another software version or configuration?); first: "
                f"{mismatches[0]}"
            )
            log.error("%s", text)
            messages.append(self._alert_message("journal_mismatch", text, {}, "critical"))
        if redo.behind:
            text = (
                f"the broker acknowledged events up to seq {acked} but the journal only "
                f"regenerates up to {redo.last_seq} (journal tail lost, e.g. a power cut with "
                "fsync = interval): those seq numbers will be reused"
            )
            log.error("%s", text)
            messages.append(self._alert_message("journal_behind_broker", text, {}, "critical"))
        elif redo.gap:
            text = (
                f"events {acked + 1}..{(redo.first_seq or 1) - 1} were not acknowledged and "
                "are not in the active journal segment: not published again"
            )
            log.error("%s", text)
            messages.append(self._alert_message("delivery_gap", text, {}, "critical"))
        return messages

    def _adopt_staff_file(self) -> None:
        """The staff file may have been edited while the daemon was stopped: what differs
        from the registry the journal left becomes `staff` commands, journaled inputs like
        the room's (so a replay still gives what was published)."""
        path = self.config.badge.staff
        if path is None:
            return
        try:
            wanted = {m.uid: m for m in load_staff(path)}
        except TableError as exc:
            log.error("staff file %s not taken: %s", path, exc)
            return
        have = {m.uid: (m.name, m.role) for m in self.engine.staff_members()}
        for uid, member in sorted(wanted.items()):
            if have.get(uid) != (member.name, member.role):
                args = {"uid": uid, "person": member.name, "role": member.role}
                self.submit(Command(t=self.now(), name="staff", args=args))
        for uid in sorted(have.keys() - wanted.keys()):
            self.submit(Command(t=self.now(), name="staff", args={"uid": uid, "remove": True}))

    def _complete_torn_tail(self, journal: InputJournal, step: Step) -> None:
        """The process died while journaling the last input's messages (none of which was
        published: that comes after the commit): journal the rest now, so that the record
        is whole before anything follows it."""
        if step.recorded is None:
            return
        done = sum(1 for o in step.recorded if o.src == "engine")
        missing = step.produced[done:]
        if missing:
            for message in missing:
                journal.record(self.last_t, "engine", message)
            journal.commit()
            log.warning("journal: %d message(s) of the last input recorded now", len(missing))

    def _seed_view_from_checkpoint(self) -> None:
        """Cards a checkpoint says are on the table, as tag UIDs (chips are not kept)."""
        deck = self.engine.deck
        uid_of = getattr(deck, "uid_of", None)
        if uid_of is None:
            return
        for antenna, cards in self.engine.cards.contents.items():
            for card in cards:
                try:
                    self.tag_view.setdefault(antenna, []).append(str(uid_of(card)).upper())
                except Exception:  # a card without a registered tag: nothing to seed
                    continue

    def _acked_file(self) -> Path | None:
        """The delivery mark next to the journal (None without a journal)."""
        journal = self.config.journal
        directory = getattr(journal, "directory", None)
        if directory is not None:
            return Path(directory) / "acked"
        return acked_path(journal.path) if journal.path is not None else None

    def _open_gpio(self) -> None:
        from drivers.gpio import get_backend
        from drivers.gpio.buttons import Lamps, TableButtons

        options: dict[str, Any] = {}
        if self.config.gpio.backend == "sim" and self.config.gpio.sim_socket is not None:
            options["control_socket"] = self.config.gpio.sim_socket
        self.gpio = get_backend(self.config.gpio.backend, **options)
        # Debounce on a monotonic clock (trace time may stand still while resyncing);
        # each press is stamped with trace time as it is queued.
        self.buttons = TableButtons(
            self.gpio,
            self.config.gpio,
            lambda press: self.submit(dataclasses.replace(press, t=self.now())),
            time.monotonic,
        )
        self.lamps = Lamps(self.gpio, self.config.gpio)
        threading.Thread(target=self._watch_buttons, name="buttons-watch", daemon=True).start()

    def _watch_buttons(self) -> None:
        """Poll the button pins every second: a release whose edge was never reported is
        caught from the pin's level (so the next press counts), a held button is alerted."""
        reported: set[tuple[str, int | None]] = set()
        while not self._stopping.wait(1.0):
            buttons = self.buttons
            if buttons is None:
                continue
            try:
                stuck = set(buttons.stuck())
            except TableError:  # the GPIO bank is closing
                return
            for name, seat in sorted(stuck - reported, key=str):
                label = name if seat is None else f"{name} seat {seat}"
                self.submit_alert(
                    "button_stuck",
                    f"the {label} button has been held down for over 10 s",
                    {"button": name, "seat": seat},
                )
            reported = stuck

    def _open_reader(self, name: str, cfg: ReaderConfig, *, kind: str) -> None:
        from drivers.reader.driver import ReaderDriver

        port = cfg.port
        if cfg.backend == "sim":
            from firmware_sim.reader_board import ReaderBoardSim

            board = ReaderBoardSim(cfg.antennas, kind=kind)
            for antenna, uids in self.tag_view.items():  # the simulated table outlives us
                for uid in uids if antenna in cfg.antennas else ():
                    board.place(antenna, uid)
            board.start()
            self.sim_boards[name] = board
            port = board.path
        if port is None:
            raise DeviceError(f"{name}: no serial port configured")
        driver = ReaderDriver(
            port,
            cfg.antennas,
            on_event=lambda event: self.submit_reader_event(name, event),
            on_alert=self.submit_alert,
            clock=self.now,
            baudrate=cfg.baudrate,
            name=name,
            on_device=lambda state: self.submit_device(name, state),
            initial={a: u for a, u in self.tag_view.items() if a in cfg.antennas},
        )
        driver.start()
        self.readers.append(driver)

    def _open_badge(self) -> None:
        """The staff badge reader ([devices.badge_reader]): badges and its state are inputs."""
        cfg = self.config.badge
        if cfg.backend == "none":
            return
        from controller.trace import Badge
        from drivers.badge import get_backend

        def on_badge(uid: str, removed: bool) -> None:
            self.submit(Badge(t=self.now(), uid=uid, removed=removed))

        def on_device(state: str) -> None:
            self.submit(Device(t=self.now(), name="badge_reader", state=state))

        reader = get_backend(
            cfg.backend,
            on_badge=on_badge,
            on_device=on_device,
            on_alert=self.submit_alert,
            clock=self.now,
            reader=cfg.reader,
        )
        reader.start()
        self.badge_reader = reader
        if cfg.backend == "sim":
            self.sim_badge = reader

    def stop(self) -> None:
        """Stop devices, drain the queue, say offline, close the journal."""
        sdnotify.notify("STOPPING=1")
        for reader in self.readers:
            reader.stop()
        if self.badge_reader is not None:
            self.badge_reader.stop()
        for board in self.sim_boards.values():
            board.stop()
        self._stopping.set()
        self.queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.lamps is not None:
            self.lamps.all_off()
        if self.gpio is not None:
            self.gpio.close()
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

    # ------------------------------------------------------------------ the loop

    def _loop(self) -> None:
        while not self.failed:
            self._watchdog()
            frozen = self._resync_pending()  # no timer fires before the catch-up
            deadline = None if frozen else self.engine.deadline()
            timeout = None
            if deadline is not None:
                timeout = max(0.0, deadline - self.now())
            wait = 0.5 if frozen else timeout
            if self._watchdog_period is not None:
                ping_in = max(0.0, self._watchdog_next - time.monotonic())
                if wait is None or ping_in < wait:
                    wait = ping_in
            try:
                item = self.queue.get(timeout=wait)
            except queue.Empty:
                if timeout is None or wait != timeout:
                    continue  # woken only to ping the watchdog: no input, nothing journaled
                item = Tick(t=self.now())
            batch: list[Item] = []
            while item is not None:
                batch.append(item)
                if len(batch) == MAX_BATCH:
                    break  # the rest waits for the next commit, in order
                try:
                    item = self.queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                try:
                    self.handle(batch)
                except Exception as exc:  # a bug must not stop the table taking inputs
                    log.exception("batch of %d input(s) failed", len(batch))
                    text = f"{type(exc).__name__}: {exc}"
                    self._emit_own(self._alert_message("daemon_fault", text, {}, "critical"))
                self._update_status()
            if item is None and self._stopping.is_set():
                return

    def _watchdog(self) -> None:
        """Ping systemd's watchdog when due (from the loop: a wedged loop stops the pings)."""
        if self._watchdog_period is None:
            return
        now = time.monotonic()
        if now >= self._watchdog_next:
            sdnotify.notify("WATCHDOG=1")
            self._watchdog_next = now + self._watchdog_period

    def _status_text(self) -> str:
        hand = self.engine.hand
        if hand is not None:
            text = f"table {self.config.table.id}: hand {hand.number} in progress"
        else:
            text = f"table {self.config.table.id}: between hands, {self.engine.hand_number} dealt"
        if self.faulty:
            text += f"; device fault: {', '.join(sorted(self.faulty))}"
        return text

    def _update_status(self) -> None:
        """Tell systemd the table's status when it changed (shown by `systemctl status`)."""
        text = self._status_text()
        if text != self._status_sent:
            self._status_sent = text
            sdnotify.notify(f"STATUS={text}")

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
            self._fail(exc)
            return []
        for message in out:
            self._publish(message)
        for effect in [*effects, self._update_lamps, self._rotate_journal_if_due]:
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
            self._emit_own(self._alert_message("daemon_fault", text, {}, "critical"))

    def _take(self, item: Item, effects: list[Callable[[], None]]) -> list[Message]:
        """Journal one item and apply it; journal what it produced; return that."""
        if isinstance(item, FromRoom):
            effects.append(item.ack)  # the broker forgets it once it is in the journal
            item = item.item
        if isinstance(item, DeviceAlert):
            message = self._alert_message(item.kind, item.message, item.details, item.severity)
            effects.append(functools.partial(self._fault_lamp, item))
            return self._record("daemon", [message])
        if isinstance(item, RefusedCommand):
            text = f"command {item.name!r} refused: {item.error}"
            details = {"command": item.name, "id": item.request_id}
            return self._record(
                "daemon",
                [
                    self._reply_message(item.name, item.request_id, item.error),
                    self._alert_message("command_malformed", text, details, "warning"),
                ],
            )
        if isinstance(item, Device) and self.device_states.get(item.name, "online") == item.state:
            return []  # no change to what is journaled (e.g. boards found after a restart)
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
        try:
            messages = self._record("engine", self.engine.apply(item))
        except JournalError:
            raise
        except TableError as exc:  # never die on input
            log.error("input refused: %s", exc)
            return self._record(
                "daemon",
                [
                    self._alert_message("input_error", str(exc), {}, "critical"),
                    *self._failed_reply(item, f"refused: {exc}"),
                ],
            )
        except Exception as exc:
            log.exception("engine failure on %r", item)
            text = f"{type(exc).__name__}: {exc}"
            return self._record(
                "daemon",
                [
                    self._alert_message("engine_fault", text, {}, "critical"),
                    *self._failed_reply(item, f"internal error: {type(exc).__name__}"),
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

    def _fail(self, exc: JournalError) -> None:
        """The journal cannot be written: stop taking inputs, tell the room, exit non-zero
        (`tablectl run` returns 1, systemd restarts the daemon, recovery reads the journal).
        """
        log.critical("journal failed, stopping: %s", exc)
        self.failed = exc
        # Not journaled (it cannot be): the room learns why the table goes away.
        self._publish(self._alert_message("journal_failed", str(exc), {}, "critical"))
        self._stopping.set()

    def _write_staff(self) -> None:
        """A room command changed the staff registry: the file follows (atomic write)."""
        path = self.config.badge.staff
        if path is None:
            return
        from controller.staff import StaffMember, StaffRegistry, write_staff

        members = [StaffMember(m.uid, m.name, m.role) for m in self.engine.staff_members()]
        try:
            write_staff(path, StaffRegistry(members))
        except (OSError, TableError) as exc:
            self._emit_own(  # journaled before it is published, like every message
                self._alert_message(
                    "staff_registry_not_saved", f"{path}: {exc}", {"path": str(path)}, "critical"
                )
            )

    def _request_draw(self) -> None:
        """RP-14: a random choice the engine needs (four-card flop) enters as an input.

        The draw is made here, with the operating system's randomness, and journaled as a
        `draw` command, so the engine stays pure and a replay makes the same choice.
        """
        want = self.engine.wants_draw()
        if want is None or want == self._draw_asked:
            self._draw_asked = want
            return
        self._draw_asked = want
        purpose, of = want
        pick = secrets.randbelow(of)
        self.submit(
            Command(t=self.now(), name="draw", args={"purpose": purpose, "pick": pick, "of": of})
        )

    def _rotate_journal_if_due(self) -> None:
        """Between hands, start a new journal segment (opening with a checkpoint) when due."""
        journal = self.journal
        if journal is None or not journal.rotation_due() or not self._rotation_allowed():
            return
        try:
            journal.rotate(checkpoint(self.engine), self.engine.t)
        except RetentionError as exc:  # rotated; old segments stay until the next rotation
            log.error("%s", exc)
            self._emit_own(self._alert_message("journal_error", str(exc), {}, "warning"))
        except JournalError as exc:  # the current segment stays in use; retried next time
            log.error("journal rotation failed: %s", exc)
            text = f"journal rotation failed: {exc}"
            self._emit_own(self._alert_message("journal_error", text, {}, "warning"))

    def _rotation_allowed(self) -> bool:
        """A segment closes between hands only, and only once the broker acknowledged every
        event it produced (recovery re-sends from the active segment alone)."""
        return self.engine.hand is None and (
            self.acked is None or self.acked.written >= self.engine.seq
        )

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
            self._emit_own(self._alert_message("publish_refused", text, details, "critical"))

    def _reply_message(self, command: str, request_id: str | None, error: str) -> Message:
        """An `ok: false` answer to a room command the engine never saw."""
        payload: dict[str, Any] = {
            "table": self.config.table.id,
            "id": request_id,
            "command": command,
            "ok": False,
            "error": error,
            "t": self.now(),
        }
        return Message(REPLIES, payload)

    def _failed_reply(self, item: object, error: str) -> list[Message]:
        """The answer to a room command whose processing failed, so the room is not left
        waiting (none for another input)."""
        if isinstance(item, Command) and isinstance(item.args.get("id"), str):
            return [self._reply_message(item.name, item.args["id"], error)]
        return []

    def _alert_message(
        self, kind: str, text: str, details: dict[str, Any], severity: str
    ) -> Message:
        hand = self.engine.hand
        payload: dict[str, Any] = {
            "table": self.config.table.id,
            "type": kind,
            "severity": severity,
            "message": text,
            "hand": hand.number if hand else None,
            "t": self.now(),
        }
        payload.update(details)
        return Message(ALERTS, payload)

    def _fault_lamp(self, alert: DeviceAlert) -> None:
        """The panel's fault lamp shows a reader board that is not answering."""
        if self.lamps is None:
            return
        reader = str(alert.details.get("reader", ""))
        if alert.kind in FAULTS:
            self.faulty.add(reader or alert.kind)
        elif alert.kind in RECOVERIES:
            self.faulty.discard(reader or alert.kind)
        else:
            return
        self.lamps.set("fault", bool(self.faulty))

    def _update_lamps(self) -> None:
        if self.lamps is None:
            return
        for name, on in self.engine.lamps().items():
            if name.startswith("allin"):
                self.lamps.set_allin(int(name[5:]), on)
            else:
                self.lamps.set(name, on)
