"""A simulated table run under strace, and what its trace says about durability.

`traced_sim` runs `tablectl sim` (firmware simulators, the daemon and a dealing script in
one process) under `strace -f` against a real mosquitto, with a journal configured as
asked. The script deals hands with dealing errors (a misdeal: the first card to the wrong
seat; a four-card flop, the floor called by badge) and enough inputs for the journal to
rotate between hands. `journal_records` finds, for each MQTT PUBLISH the daemon wrote to
the broker's socket, the `out` record of the journal that records it and the sync that made
that record durable; `recover` runs the daemon's own recovery on a journal directory.
"""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import random
import re
import subprocess
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.journal import open_journal, read_journal_dir, read_trace_file
from controller.replay import build_engine, replay_path
from controller.trace import event_to_json
from kernel.errors import TableError
from kernel.inputs import Badge, Event, TagIn, TagOut
from kernel.messages import EVENTS, STATUS
from sim.dealer import DealerClock, TableDealer, seat_players
from sim.plans import random_hand
from tests.broker import Mosquitto
from tests.crash_states import Model
from tests.strace_log import FileOp, FileOps, Publish, Syscall, file_ops, parse_log, publishes
from tests.strace_log import strace_command as strace_args
from tests.table_rig import tablectl

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "sim-table.toml"
PREFIX = "poker/power/t01"
FLOOR = "04F1E2D3C4B5A6"  # Giulia Ferrari, floor, in examples/staff/sim-staff.toml
SEATS = (1, 2, 3, 4)


# ----------------------------------------------------------------------------- the run


def dealing_script(config: Config, hands: int, seed: int = 5) -> list[Event]:
    """Seat four players, then `hands` legal random hands (firmware_sim's dealer), with
    dealing errors: in the first hand the first card goes to the wrong seat and back (a
    misdeal, TDA 35A-2, then the exact re-deal); in the third a four-card flop (rule 39:
    the would-be burn turned up with the flop, the floor's badge laid on the reader, the
    turn then dealt without a burn)."""
    rng = random.Random(seed)
    events = seat_players([(s, f"P{s}", 20_000) for s in SEATS], (100, 200, 0), button=4)
    shadow = build_engine(config)
    for event in events:
        shadow.apply(event)
    dealer = TableDealer(DealerClock(0.5), settle=config.rules.settle_seconds)
    for number in range(hands):
        hand = random_hand(shadow, dealer, rng)
        if number == 0:
            at = next(
                k for k, e in enumerate(hand) if isinstance(e, TagIn) and e.antenna[:4] == "seat"
            )
            first = hand[at]
            assert isinstance(first, TagIn)
            wrong = "seat2" if first.antenna != "seat2" else "seat3"
            hand[at:at] = [
                TagIn(first.t, wrong, card=first.card),
                TagOut(first.t, wrong, card=first.card),
            ]
        if number == 2:
            boards = [
                k for k, e in enumerate(hand) if isinstance(e, TagIn) and e.antenna == "board"
            ]
            burns = [k for k, e in enumerate(hand) if isinstance(e, TagIn) and e.antenna == "burn"]
            assert len(burns) >= 2, "the four-card flop hand must reach the turn"
            extra = hand.pop(burns[1])
            third = hand[boards[2]]
            assert isinstance(extra, TagIn)
            hand[boards[2] + 1 : boards[2] + 1] = [
                TagIn(third.t, "board", card=extra.card),
                Badge(third.t, FLOOR),
            ]
        for event in hand:
            shadow.apply(event)
        events.extend(hand)
        dealer.clock.step(1.0)
    return events


def write_config(
    workdir: Path,
    broker: Mosquitto,
    *,
    fsync: str,
    segments: bool = True,
    journal: Path | None = None,
) -> Path:
    """The shipped example table, on the test's broker, with the journal as asked
    (segments of 10 KiB: one rotation per hand or so; nothing deleted by retention)."""
    for sub in ("decks", "chips", "staff"):
        link = workdir / sub
        if not link.exists():
            link.symlink_to(EXAMPLE.parent / sub)
    where = journal or workdir / ("journal" if segments else "t01.journal")
    if segments:
        section = f'directory = "{where}"\nmax_segment_mb = 0.01\nkeep_days = 0'
    else:
        section = f'path = "{where}"'
    text = EXAMPLE.read_text().replace('path = "../var/t01.journal"', section)
    text = re.sub(r"(?m)^\[journal\]$", "[journal]\n" + f'fsync = "{fsync}"', text)
    text = text.replace(
        "[registries]",
        f'[broker]\nhost = "{broker.host}"\nport = {broker.port}\nprefix = "{PREFIX}"\n'
        'client_id = "power-t01"\n\n[registries]',
    )
    path = workdir / "table.toml"
    path.write_text(text)
    return path


@dataclass
class TracedRun:
    """A traced `tablectl sim` and what its trace holds."""

    workdir: Path
    config: Config
    journal: Path  # the journal directory (or file)
    port: int
    calls: list[Syscall]
    publishes: list[Publish]
    fs: FileOps
    output: str

    @property
    def published(self) -> list[Publish]:
        """Every journaled message the broker was sent (`status` is the publisher's own,
        never journaled; a DUP re-send repeats one already counted)."""
        return [p for p in self.publishes if not p.dup and _topic(p) != STATUS]

    def model(self) -> Model:
        return Model(self.fs)


def _topic(publish: Publish) -> str:
    return publish.topic[len(PREFIX) + 1 :]


def traced_sim(
    workdir: Path,
    broker: Mosquitto,
    *,
    fsync: str,
    hands: int = 3,
    segments: bool = True,
    speed: float = 4.0,
) -> TracedRun:
    """Run `tablectl sim` with the dealing script under strace; parse what it did."""
    workdir.mkdir(parents=True, exist_ok=True)
    config_path = write_config(workdir, broker, fsync=fsync, segments=segments)
    config = load_config(config_path)
    script = workdir / "script.jsonl"
    script.write_text("".join(event_to_json(e) + "\n" for e in dealing_script(config, hands)))
    log = workdir / "strace.log"
    command = [
        *strace_args(log),
        *tablectl(),
        "sim",
        "--config",
        str(config_path),
        "--script",
        str(script),
        "--keep-journal",
        "--quiet",
        "--json",
        "--exit-when-done",
        "--speed",
        str(speed),
    ]
    done = subprocess.run(
        command, cwd=workdir, capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"traced sim failed ({done.returncode}): {done.stderr[-3000:]}"
    calls = parse_log(log)
    journal = config.journal.directory or config.journal.path
    assert journal is not None
    return TracedRun(
        workdir=workdir,
        config=config,
        journal=journal,
        port=broker.port,
        calls=calls,
        publishes=publishes(calls, broker.port),
        fs=file_ops(calls, workdir),
        output=done.stdout + done.stderr,
    )


# ----------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class Recorded:
    """Where a published message's `out` record is in the journal, and its first sync."""

    publish: Publish
    write: FileOp  # the write that put the record's last byte in the file
    sync: FileOp | None  # the first sync of that file to begin after that write returned


def journal_records(run: TracedRun) -> list[Recorded | Publish]:
    """For each published message, its journal record (a Publish alone: none found).

    A message published n times with the same bytes (e.g. the hole cards of a re-deal)
    matches the n-th record of those bytes.
    """
    model = run.model()
    files: list[tuple[int, bytes]] = [
        (inode, data.contents[-1]) for inode, data in model.inodes.items() if data.contents
    ]
    syncs = [op for op in run.fs.ops if op.kind == "sync"]
    seen: Counter[tuple[str, bytes]] = Counter()
    out: list[Recorded | Publish] = []
    for publish in run.published:
        topic = _topic(publish)
        key = (topic, publish.payload)
        wanted = seen[key]
        seen[key] += 1
        found = _nth_record(files, topic, publish.payload, wanted)
        if found is None:
            out.append(publish)
            continue
        inode, end = found
        data = model.inodes[inode]
        write = next(
            op
            for op in data.ops
            if op.kind == "write" and op.offset < end <= op.offset + len(op.data)
        )
        sync = next((s for s in syncs if s.inode == inode and s.call.entry > write.call.exit), None)
        out.append(Recorded(publish, write, sync))
    return out


def _nth_record(
    files: Sequence[tuple[int, bytes]], topic: str, payload: bytes, n: int
) -> tuple[int, int] | None:
    """(inode, end offset) of the n-th `out` record of `topic` with exactly `payload` (the
    record's line goes on with a sealed card's `key` and the journal chain's `h`)."""
    tail = b'"payload":' + payload
    head = b'{"out":' + json.dumps(topic).encode() + b","
    count = 0
    for inode, data in files:
        at = data.find(tail)
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            after = data[at + len(tail) : at + len(tail) + 1]
            if data.startswith(head, start) and after in (b",", b"}"):
                if count == n:
                    end = data.find(b"\n", at)
                    return inode, (end + 1) if end >= 0 else len(data)
                count += 1
            at = data.find(tail, at + 1)
    return None


# ----------------------------------------------------------------------------- recovery


@dataclass
class Recovery:
    """What the daemon's recovery made of a journal left by a power cut."""

    error: str | None  # a clear refusal (a TableError's message), or None
    records: Counter[tuple[str, bytes]]  # the `out` records of the recovered journal
    seq: int  # the highest events seq the recovered journal regenerates
    mismatches: list[str]


def recover(config: Config, journal: Path, *, broker: Mosquitto | None = None) -> Recovery:
    """The daemon's recovery on `journal` (a directory or a file): with a broker, a whole
    daemon start and clean stop; without, the journal's own opening (torn tail cut,
    compression finished, segments checked) and a verifying replay of what it holds."""
    cfg = _with_journal(config, journal)
    try:
        if broker is not None:
            settings = broker.broker_config(
                prefix=PREFIX + "/recovered", client_id="power-recovered", session_expiry=0
            )
            daemon = Daemon(cfg, broker=settings)
            daemon.start()
            daemon.stop()
            if daemon.failed is not None:
                return Recovery(str(daemon.failed), Counter(), 0, [])
            active = journal
        else:
            opened = open_journal(cfg.journal, cfg.table.id, now=time.time())
            assert opened is not None
            active = opened.path  # what the daemon replays: the active segment
            opened.close()
        out = io.StringIO()
        result = replay_path(cfg, active, out)
        segments = read_journal_dir(journal) if journal.is_dir() else [read_trace_file(journal)]
    except TableError as exc:
        return Recovery(f"{type(exc).__name__}: {exc}", Counter(), 0, [])
    records: Counter[tuple[str, bytes]] = Counter(
        (o.message.topic, o.message.payload_bytes())
        for segment in segments
        for outs in segment.outputs.values()
        for o in outs
    )
    seqs = [
        json.loads(line)["payload"].get("seq", 0)
        for line in out.getvalue().splitlines()
        if json.loads(line)["topic"].endswith("/" + EVENTS)
    ]
    return Recovery(None, records, max(seqs, default=0), result.mismatches)


def _with_journal(config: Config, journal: Path) -> Config:
    if config.journal.directory is not None:
        return dataclasses.replace(
            config, journal=dataclasses.replace(config.journal, directory=journal)
        )
    return dataclasses.replace(config, journal=dataclasses.replace(config.journal, path=journal))


def missing(received: Iterable[Publish], records: Counter[tuple[str, bytes]]) -> list[str]:
    """Messages received by the broker that the records lack (counting repeats)."""
    wanted: Counter[tuple[str, bytes]] = Counter((_topic(p), p.payload) for p in received)
    return [
        f"{topic}: {payload[:120]!r}"
        for (topic, payload), n in wanted.items()
        if records[(topic, payload)] < n
    ]


def state_records(files: dict[str, bytes]) -> Counter[tuple[str, bytes]]:
    """The `out` records (topic, payload bytes) in a crash state's journal files, read the
    way recovery reads them: whole lines only, a compressed segment only if it decompresses.
    (Fast: no engine; for measuring what a policy loses at every crash point.)"""
    records: Counter[tuple[str, bytes]] = Counter()
    for name, data in files.items():
        base = Path(name).name
        if not base.startswith("journal") and not name.endswith(".journal"):
            continue
        if base.endswith(".gz"):
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error):
                continue
        for line in data.split(b"\n")[:-1]:  # the last piece has no newline: torn
            if line.startswith(b'{"out":'):
                topic = json.loads(line[7 : line.index(b",")])
                # the payload as published (the record goes on with `key` and `h` after it)
                record = json.loads(line)
                payload = json.dumps(
                    record["payload"], separators=(",", ":"), ensure_ascii=False
                ).encode()
                records[(topic, payload)] += 1
    return records
