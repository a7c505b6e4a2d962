"""A whole table for resilience tests: reader boards in this process, the daemon as a subprocess.

The reader board simulators run here, on real ptys behind stable symlinks (as udev names
the real boards), so the physical truth (which tag lies on which antenna) outlives the
daemon. The daemon is `tablectl run --config ...` in its own process, killed and restarted
at will; its simulated GPIO bank takes button presses over its control socket
(`[devices.gpio] sim_socket`). A dealing session is a list of `Step`s, each one dealer
motion (one card, one chip push, a gather, a button press, a room command).
"""

from __future__ import annotations

import copy
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.config import Config, load_config
from controller.engine import Engine
from controller.journal import Segment, list_segments, read_journal_dir, read_trace_file
from controller.registry import ChipRegistry, DeckRegistry, load_chips, load_deck
from controller.replay import build_engine, drive
from drivers.gpio.sim import send_control
from drivers.reader.view import TagView
from firmware_sim.reader_board import ReaderBoardSim
from kernel.errors import TraceError
from kernel.inputs import ButtonPress, Command, Event, TagIn, TagOut, Tick
from kernel.messages import Message
from sim.demo import demo_script
from tests.broker import Mosquitto, Received, Subscriber

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PREFIX = "poker/rig/t09"
SEATS = 4
PINS = {
    "shuffler": 4,
    "check": 5,
    "misdeal": 6,
    "floor": 12,
    "exposed": 13,
    "boxed": 16,
    "raise": 19,
}
ALLIN_PINS = {1: 17, 2: 27, 3: 22, 4: 23}
LAMP_PINS = {"floor": 9, "pending": 10, "fault": 11}


def tablectl() -> list[str]:
    """The `tablectl` console script of this interpreter's environment (or `-m tablectl.cli`)."""
    script = Path(sys.executable).with_name("tablectl")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tablectl.cli"]


# --------------------------------------------------------------------------- the session


@dataclass(frozen=True, slots=True)
class Move:
    """One tag entering ("in") or leaving ("out") an antenna's field."""

    op: str
    antenna: str
    uid: str


@dataclass(slots=True)
class Step:
    """One dealer motion: tag moves, or a button press, or a room command."""

    moves: list[Move] = field(default_factory=list)
    press: tuple[str, int | None] | None = None
    command: tuple[str, dict[str, Any]] | None = None
    offline_ok: bool = False  # the same outcome when the board's inventory reports it

    @property
    def physical(self) -> bool:
        """Only tags move: it can happen while the daemon is down."""
        return bool(self.moves)


class Table:
    """The physical truth: which tags lie on which antenna (like the boards know it)."""

    def __init__(self, antennas: Sequence[str]) -> None:
        self.antennas = list(antennas)
        self.view = TagView(self.antennas)

    def apply(self, moves: Iterable[Move]) -> None:
        for move in moves:
            (self.view.add if move.op == "in" else self.view.discard)(move.antenna, move.uid)

    def snapshot(self) -> dict[str, list[str]]:
        return self.view.snapshot()

    def reported(self, moves: Sequence[Move]) -> list[Move]:
        """What a reconnecting driver reports of `moves` done while nobody read the board:
        the net difference, every out first, then every in, in antenna port order
        (drivers/reader/view.py `TagView.reconcile`)."""
        after = Table(self.antennas)
        after.view = copy.deepcopy(self.view)
        after.apply(moves)
        seen = copy.deepcopy(self.view)
        truth = [after.view.snapshot()[name] for name in self.antennas]
        return [Move(op, antenna, uid) for op, antenna, uid in seen.reconcile(truth)]


def step_events(step: Step, t: float) -> list[Event]:
    """The inputs a step becomes in the journal, at trace time `t` (tags spaced 1 ms)."""
    if step.press is not None:
        return [ButtonPress(t, step.press[0], step.press[1])]
    if step.command is not None:
        return [Command(t, step.command[0], dict(step.command[1]))]
    out: list[Event] = []
    for i, move in enumerate(step.moves):
        cls = TagIn if move.op == "in" else TagOut
        out.append(cls(round(t + i * 0.001, 6), move.antenna, uid=move.uid))
    return out


class Expectation:
    """What the pure engine publishes for a session played step by step, each step given
    time to settle: the events after each step, and the final messages."""

    def __init__(self, config: Config, steps: Sequence[Step]) -> None:
        self.engine = build_engine(config)
        self.gap = config.rules.settle_seconds + 0.05
        self.t = 1.0
        self.seq_after: list[int] = []
        self.events: list[dict[str, Any]] = []
        self.state: dict[str, Any] | None = None
        for step in steps:
            self._apply(self.engine, step_events(step, self.t))
            self.seq_after.append(self.engine.seq)
            self.t += self.gap

    def _apply(self, engine: Engine, events: list[Event]) -> list[Message]:
        out: list[Message] = []
        closing = Tick(round(events[-1].t + self.gap * 0.9, 6))
        for _event, messages in drive(engine, [*events, closing]):
            out.extend(messages)
        if engine is self.engine:
            for message in out:
                if message.topic == "events":
                    self.events.append(message.payload)
                elif message.topic == "state":
                    self.state = message.payload
        return out


def mark_offline_ok(config: Config, steps: Sequence[Step]) -> None:
    """Flag the tag steps whose inventory-ordered report gives the engine the same events.

    A step done while the daemon is down reaches it as an inventory difference (all outs,
    then all ins, in antenna order): only those steps are played while it is down. Each
    board reports its own difference, so the order between the two boards is not known:
    only a motion on one board qualifies.
    """
    engine = build_engine(config)
    table = Table([*config.card_reader.antennas, *config.chip_reader.antennas])
    t = 1.0
    gap = config.rules.settle_seconds + 0.05
    for step in steps:
        events = step_events(step, t)
        cards = {m.antenna in config.card_reader.antennas for m in step.moves}
        if step.physical and len(cards) == 1:
            shuffled = Step(moves=table.reported(step.moves))
            a, b = (copy.deepcopy(engine, {id(engine.profile): engine.profile}) for _ in "ab")
            closing = [Tick(round(t + gap * 0.9, 6))]
            got_a = [m for _e, ms in drive(a, [*events, *closing]) for m in ms]
            got_b = [m for _e, ms in drive(b, [*step_events(shuffled, t), *closing]) for m in ms]
            step.offline_ok = bool(shuffled.moves) and _comparable(got_a) == _comparable(got_b)
        table.apply(step.moves)
        for _event, _messages in drive(engine, [*events, Tick(round(t + gap * 0.9, 6))]):
            pass
        t += gap


def _comparable(messages: Iterable[Message]) -> list[dict[str, Any]]:
    return [without_t(m.payload) for m in messages if m.topic == "events"]


def without_t(payload: dict[str, Any]) -> dict[str, Any]:
    """A payload without its time, for comparing runs made at different times (nor the
    wall-clock start of a hand, nor the table's hash chain and signature, which cover the
    time)."""
    return {k: v for k, v in payload.items() if k not in ("t", "started_at", "chain", "signature")}


def session(config: Config, hands: int, seed: int) -> list[Step]:
    """A deterministic multi-hand session (the built-in demo dealer), as dealer motions.

    Tags of one motion (a chip push, a gather, clearing the table) are those the demo
    dealer lays down at most 20 ms apart, on one board. Chips get registered UIDs: each
    chip the dealer brings is a free tag of its value from the chip registry, back in the
    rack once it has left the table.
    """
    assert config.registries.deck is not None and config.registries.chips is not None
    deck = load_deck(config.registries.deck)
    chips = load_chips(config.registries.chips)
    rack: dict[int, list[str]] = {}
    for uid, value in sorted(chips.items()):
        rack.setdefault(value, []).append(uid)
    chip_uid: dict[str, str] = {}
    where: dict[str, str | None] = {}
    steps: list[Step] = []
    cards = set(config.card_reader.antennas)
    last_t: float | None = None
    current: Step | None = None

    def close() -> None:
        nonlocal current
        if current is not None:
            steps.append(current)
            for chip, place in list(where.items()):
                if place is None:  # off the table: back in the rack
                    uid = chip_uid.pop(chip)
                    rack[chips.value_of(uid) or 0].insert(0, uid)
                    del where[chip]
        current = None

    for event in demo_script(config, hands, seed):
        if isinstance(event, Tick):
            continue
        if isinstance(event, TagIn | TagOut):
            if event.card is not None:
                uid = deck.uid_of(event.card)
            elif event.uid is not None:  # the demo's chips are registered tags already
                uid = event.uid
            else:
                assert event.chip is not None and event.value is not None
                if event.chip not in chip_uid:
                    chip_uid[event.chip] = rack[event.value].pop(0)
                uid = chip_uid[event.chip]
                where[event.chip] = event.antenna if isinstance(event, TagIn) else None
            pushing = isinstance(event, TagIn) and event.antenna.startswith("bet")
            together = (
                current is not None
                and current.physical
                and last_t is not None
                and event.t - last_t <= 0.0201
                # a push is chips into one bet zone; nothing else joins it
                and pushing == _is_push(current)
                and (not pushing or current.moves[0].antenna == event.antenna)
                # one board per motion: the two boards' reports reach the daemon in no
                # particular order between them (a dealer's hands are slower than that)
                and (event.antenna in cards) == (current.moves[0].antenna in cards)
            )
            if not together:
                close()
                current = Step()
            assert current is not None
            current.moves.append(
                Move("in" if isinstance(event, TagIn) else "out", event.antenna, uid)
            )
            last_t = event.t
            continue
        close()
        if isinstance(event, ButtonPress):
            steps.append(Step(press=(event.name, event.seat)))
        elif isinstance(event, Command):
            # with a request id, as a room server sends them: applied once however often
            # it arrives (redelivered after a restart, or sent again for want of a reply)
            steps.append(Step(command=(event.name, {"id": f"cmd-{len(steps)}", **event.args})))
        last_t = event.t
    close()
    mark_offline_ok(config, steps)
    return steps


def _is_push(step: Step) -> bool:
    first = step.moves[0]
    return first.op == "in" and first.antenna.startswith("bet")


# --------------------------------------------------------------------------- the rig


def write_config(
    path: Path,
    *,
    broker: Mosquitto,
    cards: Path,
    chips: Path,
    gpio_socket: Path,
    journal: Path,
    settle: float = 0.25,
    profile: str = "tda-2019",
    segments: bool = False,
    seal: str = "",
) -> Path:
    """A table file for `tablectl run`: serial readers on the rig's ports, sim GPIO;
    `seal`: the [seal] section's lines."""
    panel = ", ".join(f"{k} = {v}" for k, v in PINS.items() if k != "shuffler")
    allin = "\n".join(f'"{seat}" = {pin}' for seat, pin in ALLIN_PINS.items())
    lamps = ", ".join(f"{k} = {v}" for k, v in LAMP_PINS.items())
    # Segments small enough to rotate every hand or two (each opens with a checkpoint).
    where = f'directory = "{journal}"\nmax_segment_mb = 0.05' if segments else f'path = "{journal}"'
    path.write_text(
        f"""[table]
id = "t09"
room = "rig"
seats = {SEATS}

[rules]
profile = "{profile}"
settle_seconds = {settle}

[devices.card_reader]
backend = "serial"
port = "{cards}"

[devices.chip_reader]
backend = "serial"
port = "{chips}"

[devices.gpio]
backend = "sim"
bounce_ms = 10
sim_socket = "{gpio_socket}"

[pins]
shuffler = {PINS["shuffler"]}
panel = {{ {panel} }}
lamps = {{ {lamps} }}

[pins.allin_buttons]
{allin}

[broker]
host = "{broker.host}"
port = {broker.port}
prefix = "{PREFIX}"
client_id = "tablectl-t09"
keepalive = 5

[registries]
deck = "{EXAMPLES / "decks" / "sim-deck.toml"}"
chips = "{EXAMPLES / "chips" / "sim-chips.toml"}"

[journal]
{where}
fsync = "interval"

[seal]
{seal}
"""
    )
    return path


class TableRig:
    """Reader boards here, the daemon in a subprocess, a room subscriber on the broker."""

    def __init__(
        self,
        workdir: Path,
        broker: Mosquitto,
        *,
        settle: float = 0.25,
        profile: str = "tda-2019",
        heartbeat: float = 0.5,
        segments: bool = False,
        file_size_limit: int | None = None,
        seal: str = "",
    ) -> None:
        self.workdir = workdir
        self.broker = broker
        self.file_size_limit = file_size_limit  # RLIMIT_FSIZE of the daemon: writes fail
        workdir.mkdir(parents=True, exist_ok=True)
        dev = workdir / "dev"
        dev.mkdir(exist_ok=True)
        self.segments = segments
        self.journal = workdir / ("journal" if segments else "t09.journal")
        self.gpio_socket = workdir / "gpio.sock"
        self.config_path = write_config(
            workdir / "t09.toml",
            broker=broker,
            cards=dev / "tablectl-cards",
            chips=dev / "tablectl-chips",
            gpio_socket=self.gpio_socket,
            journal=self.journal,
            settle=settle,
            profile=profile,
            segments=segments,
            seal=seal,
        )
        self.config = load_config(self.config_path)
        self.deck: DeckRegistry = load_deck(EXAMPLES / "decks" / "sim-deck.toml")
        self.chips: ChipRegistry = load_chips(EXAMPLES / "chips" / "sim-chips.toml")
        self.cards_board = ReaderBoardSim(
            self.config.card_reader.antennas,
            kind="card",
            link=dev / "tablectl-cards",
            heartbeat_period=heartbeat,
        )
        self.chips_board = ReaderBoardSim(
            self.config.chip_reader.antennas,
            kind="chip",
            link=dev / "tablectl-chips",
            heartbeat_period=heartbeat,
        )
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.kills = 0
        self.log = workdir / "daemon.log"

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> TableRig:
        self.cards_board.start()
        self.chips_board.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.cards_board.stop()
        self.chips_board.stop()

    def start(self) -> None:
        """Start `tablectl run --config ...` (the daemon recovers from the journal)."""
        assert self.proc is None or self.proc.poll() is not None
        with self.log.open("ab") as log:
            log.write(f"---- start {self.starts + 1}\n".encode())
            self.proc = subprocess.Popen(
                [*tablectl(), "run", "--config", str(self.config_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                preexec_fn=self._limits if self.file_size_limit is not None else None,
            )
        self.starts += 1

    def _limits(self) -> None:
        """In the daemon's process: no file may grow past `file_size_limit` bytes (Python
        ignores SIGXFSZ, so the write fails with EFBIG, as on a full disk)."""
        assert self.file_size_limit is not None
        resource.setrlimit(resource.RLIMIT_FSIZE, (self.file_size_limit, self.file_size_limit))

    def kill(self) -> None:
        """SIGKILL the daemon and reap it: no clean-up of any kind runs."""
        proc = self.proc
        assert proc is not None
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        self.kills += 1

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM the daemon (a clean stop) and wait for it; its exit code."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout)
        return proc.returncode

    @property
    def alive(self) -> bool:
        """True while the daemon process runs."""
        return self.proc is not None and self.proc.poll() is None

    def board_for(self, antenna: str) -> ReaderBoardSim:
        """The board whose antenna this is."""
        return self.cards_board if antenna in self.cards_board.antennas else self.chips_board

    # -- the journal, as the daemon wrote it -----------------------------------------------

    def journal_segments(self) -> list[Segment]:
        """The journal as the daemon wrote it so far (a line torn by a kill is not read)."""
        if self.segments:
            return read_journal_dir(self.journal) if list_segments(self.journal) else []
        if not self.journal.exists():
            return []
        return [read_trace_file(self.journal)]

    def journal_inputs(self) -> list[Event]:
        """The complete journal lines, as events (a line torn by a kill is not counted)."""
        for _ in range(5):
            try:
                return [e for segment in self.journal_segments() for e in segment.events]
            except (FileNotFoundError, TraceError):
                time.sleep(0.05)  # a segment rotated or retired while it was being read
        return [e for segment in self.journal_segments() for e in segment.events]

    # -- doing things ----------------------------------------------------------------------

    def move(self, move: Move) -> None:
        """A tag enters or leaves an antenna, on the board (whether the daemon runs or not)."""
        board = self.board_for(move.antenna)
        if move.op == "in":
            board.place(move.antenna, move.uid)
        else:
            board.remove(move.antenna, move.uid)

    def pin(self, name: str, seat: int | None) -> int:
        """The GPIO pin of a button."""
        return ALLIN_PINS[seat] if name == "allin" and seat is not None else PINS[name]

    def press(self, name: str, seat: int | None = None) -> bool:
        """Press and release a button through the daemon's GPIO control socket.

        False when nobody took it (the daemon is down, or its GPIO is not set up yet): like
        a press on a table whose controller is rebooting, it did not happen.
        """
        pin = self.pin(name, seat)
        try:
            if send_control(self.gpio_socket, f"press {pin}") != "ok":
                return False
            time.sleep(0.03)  # a finger holds a button longer than the 10 ms debounce
            released = send_control(self.gpio_socket, f"release {pin}") == "ok"
            time.sleep(0.03)  # and does not press again within the debounce time either
            return released
        except OSError:
            return False

    def command(self, sub: Subscriber, name: str, args: dict[str, Any]) -> None:
        """A room command, as the room server sends it."""
        sub.publish(f"{PREFIX}/cmd/{name}", json.dumps(args).encode())


# --------------------------------------------------------------------------- subscribers


def journal_view(rig: TableRig) -> tuple[dict[str, set[str]], int, int]:
    """Antenna contents, presses and room commands, as the journal says. Commands are
    counted by request id: one the broker delivered again, or the room sent again, is
    journaled twice but applied once."""
    view: dict[str, set[str]] = {}
    presses = 0
    commands: set[str] = set()
    for event in rig.journal_inputs():
        if isinstance(event, TagIn | TagOut) and event.uid is not None:
            uids = view.setdefault(event.antenna, set())
            (uids.add if isinstance(event, TagIn) else uids.discard)(event.uid)
        elif isinstance(event, ButtonPress):
            presses += 1
        elif isinstance(event, Command) and isinstance(event.args.get("id"), str):
            commands.add(event.args["id"])
    return {a: u for a, u in view.items() if u}, presses, len(commands)


STEP_TIMEOUT = 45.0
CHIP_GAP = 0.015  # seconds between the chips of one push reaching the board


def truth(rig: TableRig) -> dict[str, set[str]]:
    """Antenna contents as the boards know them (the physical truth)."""
    contents = {**rig.cards_board.contents(), **rig.chips_board.contents()}
    return {a: set(u) for a, u in contents.items() if u}


def statuses(sub: Subscriber) -> list[str]:
    """The `state` of every status message received, in order."""
    return [json.loads(m.payload)["state"] for m in sub.messages(f"{PREFIX}/status")]


class Player:
    """Plays the steps on a rig, killing the daemon where the plan says."""

    def __init__(
        self, rig: TableRig, room: Subscriber, steps: list[Step], expect: Expectation
    ) -> None:
        self.rig = rig
        self.room = room
        self.steps = steps
        self.expect = expect
        self.presses_due = 0
        self.commands_due = 0
        self.redone = 0
        self.while_down = 0
        self.made: set[int] = set()  # steps already made (e.g. while the daemon was down)

    def wait_online(self, seen: int) -> None:
        """Wait for a status `online` published after the first `seen` status messages."""
        ok = poll(lambda: "online" in statuses(self.room)[seen:], 60)
        assert ok, f"daemon not online again; log: {self.rig.log.read_text()[-3000:]}"

    def start(self) -> None:
        seen = len(statuses(self.room))
        self.rig.start()
        self.wait_online(seen)

    def kill_and_restart(self, rng: random.Random, k: int) -> None:
        """Kill now; maybe move a tag while down; restart (maybe killing it again)."""
        self.rig.kill()
        view = journal_view(self.rig)[0]
        lost = self.lost()
        nxt = k + 1
        if (
            not lost
            and view == truth(self.rig)  # else the two boards' catch-up order is unknown
            and nxt < len(self.steps)
            and self.steps[nxt].physical
            and self.steps[nxt].offline_ok
            and rng.random() < 0.5
        ):
            for move in self.steps[nxt].moves:  # the dealer goes on while the Pi reboots
                self.rig.move(move)
            self.made.add(nxt)
            self.while_down += 1
        if rng.random() < 0.25:  # killed again while recovering
            seen = len(statuses(self.room))
            self.rig.start()
            poll(lambda: "online" in statuses(self.room)[seen:], rng.uniform(0.05, 1.0))
            self.rig.kill()
        self.start()
        if lost:  # the dealer sees nothing happen and presses again (the room re-sends)
            self.redone += 1
            self.perform(self.steps[k], again=True)

    def perform(self, step: Step, *, again: bool = False) -> None:
        if step.press is not None:
            if not again:
                self.presses_due += 1
            name, seat = step.press
            assert poll(lambda: self.rig.press(name, seat), 30, 0.05), "press not taken"
        elif step.command is not None:
            if not again:
                self.commands_due += 1
            self.rig.command(self.room, *step.command)
        else:
            for i, move in enumerate(step.moves):
                if i and _is_push(step):
                    time.sleep(CHIP_GAP)  # the antenna reads a pushed stack chip by chip
                self.rig.move(move)

    def done(self, k: int, *, room: bool = True) -> bool:
        """The journal has step `k` (and everything before it) and, with `room`, the room
        has its events."""
        view, presses, commands = journal_view(self.rig)
        return (
            view == truth(self.rig)
            and presses >= self.presses_due
            and commands >= self.commands_due
            and (not room or top_seq(self.room) >= self.expect.seq_after[k])
        )

    def lost(self) -> bool:
        """A press or command made since the daemon's last start is not in its journal."""
        _view, presses, commands = journal_view(self.rig)
        return presses < self.presses_due or commands < self.commands_due

    def wait_done(self, k: int, seed: int, *, room: bool = True) -> None:
        """The journal has the step (and everything before it) and, with `room`, the room
        has its events; otherwise (the broker is down) the engine has had time to settle."""
        want_seq = self.expect.seq_after[k]
        ok = poll(lambda: self.done(k, room=room), STEP_TIMEOUT, 0.02)
        if ok and not room and self.expect.seq_after[k] > self.expect.seq_after[max(k - 1, 0)]:
            time.sleep(self.expect.gap)  # a push settles (journaled tick) before the next step
        assert ok, (
            f"seed {seed}: step {k} {self.steps[k]} not done: journal {journal_view(self.rig)}"
            f" truth {truth(self.rig)} top seq {top_seq(self.room)} want {want_seq}; log: "
            f"{self.rig.log.read_text()[-3000:]}"
        )

    def play(
        self,
        steps: Iterable[int],
        *,
        seed: int = 0,
        kills: dict[int, float] | None = None,
        rng: random.Random | None = None,
        room: bool = True,
    ) -> None:
        """Play the steps with these indexes, in order; kill after those in `kills`, that
        many seconds after the step was made (the daemon gets that far, or not)."""
        for k in steps:
            step = self.steps[k]
            if k not in self.made:
                self.perform(step)
            if kills and k in kills:
                assert rng is not None
                time.sleep(kills[k])
                self.kill_and_restart(rng, k)
            self.wait_done(k, seed, room=room)


def events_of(messages: Iterable[Received]) -> list[dict[str, Any]]:
    """The `events` payloads among received messages, in arrival order."""
    return [json.loads(m.payload) for m in messages if m.topic.endswith("/events")]


def dedup(events: Iterable[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Events by seq, asserting that every copy of a seq is the very same payload."""
    by_seq: dict[int, dict[str, Any]] = {}
    for event in events:
        seq = event["seq"]
        if seq in by_seq:
            assert by_seq[seq] == event, f"seq {seq} reused: {by_seq[seq]} vs {event}"
        by_seq[seq] = event
    return by_seq


def top_seq(sub: Subscriber) -> int:
    """The highest events seq the subscriber has received."""
    return max((e["seq"] for e in events_of(sub.messages())), default=0)


def poll(condition: Callable[[], bool], timeout: float, interval: float = 0.01) -> bool:
    """Poll `condition` until it holds or `timeout` seconds passed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


def seeded(seed: int) -> random.Random:
    """A reproducible random source (the seed is printed by the tests on failure)."""
    return random.Random(seed)


def env_seed(default: int) -> int:
    """The seed from RESILIENCE_SEED, else `default`."""
    return int(os.environ.get("RESILIENCE_SEED", default))
