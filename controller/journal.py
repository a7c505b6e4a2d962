"""The journal: every input (trace format) and every output, durable before it has effect.

Each input line is followed by the messages it produced (`out` records), and the daemon
commits (flush, and fdatasync under fsync = "always") before it publishes them. Two
layouts: one file (`[journal] path`), or a directory of segments (`[journal] directory`)
that rotate between hands, each new segment starting with a checkpoint of the engine so
recovery never needs an older one, and old segments deleted by a retention policy.

Every record carries the journal's hash chain in a last member `h` (64 hex digits):
`h = SHA-256(prev || record text without h)`, where `prev` is the previous record's `h`
(or, before a file's first chained record, the SHA-256 of every byte of the file before
it: the header). A rotated segment's header names the previous segment's last `h`
(`prev=`). With the table's key, a `sig` record signs the chain head at every hand's end,
at every rotation and at a clean stop (`tablectl verify` checks it all, controller/verify.py).
A sealed hole card's key is kept with its `out` record (`key`), and a segment opens with
the shell's own state (`seal`: the hole-card seq, the events chain, the keys still owed).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import math
import os
import re
import shutil
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from controller.chain import Signer
from controller.config import JournalConfig
from controller.trace import event_to_json, iter_trace
from kernel.errors import JournalError, RetentionError, TraceError
from kernel.inputs import Event
from kernel.messages import Message
from kernel.private import fsync_dir, make_private_dir, open_private, tighten

log = logging.getLogger("tablectl.journal")

HEADER_RE = re.compile(
    r"^# tablectl-journal v1 epoch=(?P<epoch>[0-9.]+) table=(?P<table>\S+)"
    r"(?: segment=(?P<segment>[1-9][0-9]*))?(?: prev=(?P<prev>[0-9a-f]{64}))?$"
)
SEGMENT_RE = re.compile(r"^journal-(?P<epoch>[0-9]+)-(?P<number>[0-9]{6,})\.jsonl(?P<gz>\.gz)?$")
GZ = ".gz"  # a closed segment, compressed once the next one is active
CHECKPOINT = "checkpoint"
#: Bytes read at a time when a closed segment is gzipped: small buffers, reused by the heap.
COPY_CHUNK = 64 * 1024
OUT = "out"
OUT_SOURCES = ("engine", "daemon")
SIG = "sig"  # a signature of the journal chain's head (journal-only)
SEAL = "seal"  # the shell's state a segment starts from (journal-only)
DAY = 86400.0
#: `,"h":"` + 64 hex digits + `"}`: the chain member every record ends with.
_H_MARK = ',"h":"'
_H_TAIL = len(_H_MARK) + 64 + 2


def header_line(
    epoch: float, table: str, segment: int | None = None, prev: str | None = None
) -> str:
    """The first line of a journal file (no newline); `prev`: the chain head the segment
    continues (the previous segment's last `h`)."""
    line = f"# tablectl-journal v1 epoch={epoch:.6f} table={table}"
    if segment is not None:
        line = f"{line} segment={segment}"
    return line if prev is None else f"{line} prev={prev}"


def split_h(line: str) -> tuple[str, str | None]:
    """(the record's text without its `h` member, the `h`) of one journal line (newline
    or not); (text, None) for a record without one (written before the chain existed)."""
    text = line.rstrip("\n")
    if len(text) > _H_TAIL and text.endswith('"}') and text[-_H_TAIL : -_H_TAIL + 6] == _H_MARK:
        return text[:-_H_TAIL] + "}", text[-_H_TAIL + 6 : -2]
    return text, None


def chain_record(prev: bytes, text: str) -> tuple[str, bytes]:
    """(the line to write, its `h`): `text` (a JSON object) with its chain member added."""
    h = hashlib.sha256(prev + text.encode()).digest()
    return f'{text[:-1]},"h":"{h.hex()}"}}', h


def journal_signed_message(table: str, head: bytes) -> bytes:
    """What a journal `sig` record signs: the table and the chain's head before it."""
    return b"tablectl-journal v1 %s " % table.encode() + head


def sig_line(signer: Signer, table: str, head: bytes, why: str) -> str:
    """A `sig` record (no `h` yet): the signature of the chain head `head`."""
    return json.dumps(
        {
            SIG: signer.sign(journal_signed_message(table, head)),
            "key": signer.key_id,
            "head": head.hex(),
            "why": why,
        },
        separators=(",", ":"),
    )


def seal_line(state: dict[str, Any]) -> str:
    """The `seal` record opening a segment (no `h` yet)."""
    return json.dumps({SEAL: state}, separators=(",", ":"))


def checkpoint_line(t: float, state: dict[str, Any]) -> str:
    """The checkpoint record that opens a segment (no newline); journal-only, not an input."""
    return json.dumps({"t": t, "event": CHECKPOINT, "state": state}, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Output:
    """A published message as the journal recorded it (journal-only: not an input).

    `src` is "engine" for what the engine produced (a replay regenerates it) and "daemon"
    for what the shell published on its own (device alerts, refused commands' replies, key
    releases). `key` is the key of a sealed hole-card message (controller/seal.py).
    """

    t: float
    src: str
    message: Message
    key: str | None = None


def output_line(t: float, src: str, message: Message, key: str | None = None) -> str:
    """The `out` record of a published message (no newline, no `h`): topic first, so a
    reader tells it from an input by its first bytes; the payload as published (key order
    kept); the key of a sealed hole card after it."""
    record: dict[str, Any] = {
        OUT: message.topic,
        "t": t,
        "src": src,
        "qos": message.qos,
        "retain": message.retain,
        "payload": message.payload,
    }
    if key is not None:
        record["key"] = key
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


_OUT_KEYS = {OUT, "t", "src", "qos", "retain", "payload"}


def _parse_output(line: str) -> Output:
    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise TraceError(f"bad out record: {exc}") from exc
    if not isinstance(obj, dict) or not _OUT_KEYS <= set(obj) <= {*_OUT_KEYS, "key"}:
        raise TraceError("an out record has exactly: out, t, src, qos, retain, payload (key)")
    key = obj.get("key")
    if key is not None and not isinstance(key, str):
        raise TraceError("out record 'key' must be a string")
    t, topic, src, qos = obj["t"], obj[OUT], obj["src"], obj["qos"]
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        raise TraceError(f"out record 't' must be a finite number >= 0, got {t!r}")
    if not isinstance(topic, str) or not topic or src not in OUT_SOURCES:
        raise TraceError(f"out record: bad topic {topic!r} or src {src!r}")
    if qos not in (0, 1, 2) or not isinstance(obj["retain"], bool):
        raise TraceError("out record: qos must be 0..2 and retain true or false")
    if not isinstance(obj["payload"], dict):
        raise TraceError("out record 'payload' must be an object")
    return Output(float(t), src, Message(topic, obj["payload"], qos, obj["retain"]), key)


def segment_name(epoch: float, number: int) -> str:
    """`journal-<epoch>-<number>.jsonl`: the epoch (whole seconds) and the segment number."""
    return f"journal-{int(epoch)}-{number:06d}.jsonl"


@dataclass(frozen=True, slots=True)
class Segment:
    """What one trace or journal file holds.

    `epoch`/`table` come from the journal header (None for a plain trace), `number` from a
    segment header; `checkpoint` is the engine state the file starts from (None: a fresh
    engine), `checkpoint_t` its trace time.
    """

    path: Path
    epoch: float | None
    table: str | None
    number: int | None
    checkpoint: dict[str, Any] | None
    checkpoint_t: float | None
    events: list[Event]
    #: position -> the `out` records written after `events[position - 1]` (0: before any)
    outputs: dict[int, list[Output]] = field(default_factory=dict)
    #: the shell's state the segment starts from (its `seal` record), None without one
    seal: dict[str, Any] | None = None

    @property
    def is_journal(self) -> bool:
        """Written by the daemon (a header line): it holds every tick the daemon applied."""
        return self.epoch is not None


def _parse_checkpoint(line: str) -> tuple[float, dict[str, Any]] | None:
    """(t, state) if `line` is a checkpoint record, else None (an ordinary event line)."""
    if f'"{CHECKPOINT}"' not in line:
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None  # iter_trace reports it with its line number
    if not isinstance(obj, dict) or obj.get("event") != CHECKPOINT:
        return None
    t, state = obj.get("t"), obj.get("state")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t) or t < 0:
        raise TraceError(f"checkpoint 't' must be a finite number >= 0, got {t!r}")
    if not isinstance(state, dict):
        raise TraceError("checkpoint 'state' must be an object")
    return float(t), state


def parse_lines(lines: list[str], source: str, *, require_header: bool = False) -> Segment:
    """A trace's lines (newlines included or not): header, optional checkpoint, events and
    the journal's `out` records.

    The checkpoint is accepted only as the first record; line numbers in errors stay those
    of the file.
    """
    match = HEADER_RE.match(lines[0].strip()) if lines else None
    if require_header and match is None:
        raise TraceError(f"{source}: first line is not a journal header")
    lines = [split_h(raw)[0] if raw.startswith("{") else raw for raw in lines]
    seal: dict[str, Any] | None = None
    for i, raw in enumerate(lines):
        if raw.startswith(('{"' + SIG + '"', '{"' + SEAL + '"')):
            if raw.startswith('{"' + SEAL + '"') and seal is None:
                try:
                    found = json.loads(raw).get(SEAL)
                except ValueError as exc:
                    raise TraceError(f"{source}:{i + 1}: bad seal record: {exc}") from exc
                seal = found if isinstance(found, dict) else None
            lines[i] = ""  # journal-only: not an input, not an output
    checkpoint: tuple[float, dict[str, Any]] | None = None
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            checkpoint = _parse_checkpoint(line)
        except TraceError as exc:
            raise TraceError(f"{source}:{i + 1}: {exc}") from exc
        if checkpoint is not None:
            lines[i] = ""  # not an input event: keep the numbering, drop the record
        break
    outputs: dict[int, list[Output]] = {}
    position = 0  # inputs before the line
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not line.startswith('{"out"'):
            position += 1
            continue
        try:
            outputs.setdefault(position, []).append(_parse_output(line))
        except TraceError as exc:
            raise TraceError(f"{source}:{i + 1}: {exc}") from exc
        lines[i] = ""  # not an input event
    events = list(iter_trace(lines, source=source))
    if checkpoint is not None and events and events[0].t < checkpoint[0]:
        raise TraceError(
            f"{source}: the first event (t={events[0].t}) is before the checkpoint "
            f"(t={checkpoint[0]})"
        )
    return Segment(
        path=Path(source),
        epoch=float(match["epoch"]) if match else None,
        table=match["table"] if match else None,
        number=int(match["segment"]) if match and match["segment"] else None,
        checkpoint=checkpoint[1] if checkpoint else None,
        checkpoint_t=checkpoint[0] if checkpoint else None,
        events=events,
        outputs=outputs,
        seal=seal,
    )


def journal_lines(text: str) -> list[str]:
    """A journal's lines, each with its "\n" (a torn last one without). Split on "\n"
    only: str.splitlines would also split inside JSON text holding U+2028, U+0085 ...,
    which the journal writes as they are."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
        return (gzip.decompress(data) if path.name.endswith(GZ) else data).decode("utf-8")
    except (OSError, EOFError, zlib.error) as exc:  # EOFError, zlib.error: a damaged gzip
        raise TraceError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: not UTF-8 text ({exc.reason})") from exc


def read_trace_file(path: Path) -> Segment:
    """A trace for `replay`: a plain trace, a one-file journal, or one journal segment.

    In a journal (a file with the header line) a last line without its newline was torn by a
    power cut and never applied: it is ignored, as the daemon does.
    """
    lines = journal_lines(_read_text(path))
    if lines and HEADER_RE.match(lines[0].strip()) and not lines[-1].endswith("\n"):
        lines = lines[:-1]
    return parse_lines(lines, str(path))


def list_segments(directory: Path) -> list[Path]:
    """The segment files of a journal directory, oldest first: `.jsonl`, or `.jsonl.gz` once
    closed and compressed (if both are there, compression was cut short: the plain one).

    Refuses a directory holding segments of two journals (two epochs in the file names).
    """
    try:
        names = [p.name for p in directory.iterdir()]
    except OSError as exc:
        raise JournalError(f"journal directory {directory}: {exc.strerror or exc}") from exc
    found: dict[int, tuple[int, Path]] = {}
    for name in sorted(names, key=lambda n: n.endswith(GZ)):  # plain ones first
        match = SEGMENT_RE.match(name)
        if match:
            found.setdefault(int(match["number"]), (int(match["epoch"]), directory / name))
    epochs = sorted({epoch for epoch, _ in found.values()})
    if len(epochs) > 1:
        raise JournalError(
            f"journal directory {directory} holds segments of {len(epochs)} journals "
            f"(epochs {', '.join(map(str, epochs))}): move all but one aside"
        )
    return [found[number][1] for number in sorted(found)]


def compress_segment(path: Path) -> Path | None:
    """Replace a closed segment by its gzip (`<name>.gz`), durably: written and synced under
    a temporary name, renamed, the plain file removed. None if the segment is gone (e.g.
    deleted by retention meanwhile)."""
    target = path.with_name(path.name + GZ)
    tmp = path.with_name(f".{target.name}.tmp")
    try:
        with path.open("rb") as src, open_private(tmp) as raw:
            with gzip.GzipFile(filename=path.name, mode="wb", fileobj=raw, mtime=0) as dst:
                shutil.copyfileobj(src, dst, COPY_CHUNK)
            raw.flush()
            os.fsync(raw.fileno())
        os.rename(tmp, target)
        fsync_dir(path.parent)
        path.unlink()
        fsync_dir(path.parent)
    except FileNotFoundError:
        tmp.unlink(missing_ok=True)
        return None
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise JournalError(f"journal {path}: compression failed: {exc.strerror or exc}") from exc
    return target


def read_journal_dir(directory: Path) -> list[Segment]:
    """Every retained segment of a journal directory, oldest first, checked to belong together."""
    segments: list[Segment] = []
    for path in list_segments(directory):
        lines = journal_lines(_read_text(path))
        if lines and not lines[-1].endswith("\n"):
            lines = lines[:-1]
        segment = parse_lines(lines, str(path), require_header=True)
        if segment.number is None:
            raise TraceError(f"{path}: journal header has no segment number")
        if segments and (segment.table, segment.epoch) != (segments[0].table, segments[0].epoch):
            raise TraceError(
                f"{path}: table {segment.table} epoch {segment.epoch} differs from "
                f"{segments[0].path} (table {segments[0].table} epoch {segments[0].epoch})"
            )
        segments.append(segment)
    if not segments:
        raise TraceError(f"{directory}: no journal segment (journal-<epoch>-<n>.jsonl) in it")
    return segments


def _last_head(lines: list[str], data: bytes) -> bytes:
    """The chain head of a journal file as found: its last record's `h`, or (a file whose
    last record has none: the header alone, or one written before the chain) the SHA-256 of
    every byte of it."""
    for line in reversed(lines):
        if line.startswith("{"):
            h = split_h(line)[1]
            if h is not None:
                return bytes.fromhex(h)
            break
    return hashlib.sha256(data).digest()


class Journal:
    """An append-only JSON Lines file of inputs and outputs, with the wall-clock epoch of t=0.

    The first line is a header comment `# tablectl-journal v1 epoch=<unix time> table=<id>`
    (plus ` segment=<n>` in a segment), so `t` in the file stays "seconds since the trace
    began" across daemon restarts and the journal is itself a trace that `tablectl replay`
    accepts. Its second line may be a checkpoint (the engine state it starts from). Then
    input lines, each followed by the `out` records of what was published for it.

    `append` and `record` reach the operating system at once (a daemon crash loses
    nothing written); `commit` makes them durable by the fsync policy: "always" syncs
    there (group commit: one fdatasync for every record since the last commit),
    "interval" leaves it to a background fdatasync every `fsync_interval` s, "never"
    to the kernel.
    """

    def __init__(
        self,
        path: Path,
        table: str,
        *,
        now: float,
        fsync: str = "always",
        fsync_interval: float = 0.1,
        signer: Signer | None = None,
    ) -> None:
        self.path = path
        self.table = table
        self.fsync = fsync
        self.signer = signer
        self.events: list[Event] = []
        self.appended = 0  # inputs appended since it was opened
        self.outputs: dict[int, list[Output]] = {}
        self.checkpoint: dict[str, Any] | None = None
        self.checkpoint_t: float | None = None
        self.segment: int | None = None
        self.seal: dict[str, Any] | None = None  # the shell's state at the segment's start
        self._head = b""  # the journal chain's head (set below)
        self._unsigned = 0  # records written since the last signature
        self._dirty = threading.Event()
        self._closed = threading.Event()
        self._sync_error: OSError | None = None
        self._lock = threading.Lock()
        try:
            # It records every hole card: files 0600, a directory it creates 0700.
            make_private_dir(path.parent)
            if self._has_header(path):
                self.epoch = self._read_existing(table)
            else:
                self.epoch = now
                header = (header_line(now, table) + "\n").encode()
                self._header_size = len(header)
                self._head = hashlib.sha256(header).digest()
                with open_private(path) as fh:
                    fh.write(header)
                    fh.flush()
                    os.fsync(fh.fileno())
                fsync_dir(path.parent)  # the file's name, not only its data
            self._fh: BinaryIO = open_private(path, append=True)
            self.size = path.stat().st_size
        except OSError as exc:
            raise JournalError(f"journal {path}: {exc.strerror or exc}") from exc
        self._syncer: threading.Thread | None = None
        if fsync == "interval":
            self._syncer = threading.Thread(
                target=self._sync_loop, args=(fsync_interval,), name="journal-sync", daemon=True
            )
            self._syncer.start()

    def _sync_loop(self, interval: float) -> None:
        """Group commit: fdatasync at most every `interval` seconds while there are writes."""
        while not self._closed.is_set():
            if not self._dirty.wait(0.5):
                continue
            self._closed.wait(interval)
            self._dirty.clear()
            try:
                with self._lock:
                    if not self._fh.closed:
                        os.fdatasync(self._fh.fileno())
            except OSError as exc:  # the next commit reports it
                self._sync_error = exc
                return

    @staticmethod
    def _has_header(path: Path) -> bool:
        """The file exists with at least one whole line. A file with no newline at all was
        cut by a power cut while its header was being written (before anything else could
        be): it is started afresh, as if it were not there."""
        if not path.exists():
            return False
        with path.open("rb") as fh:
            head = fh.read(4096)
        if b"\n" in head or len(head) == 4096:
            return True
        if head:
            log.warning(
                "journal %s: a header torn by a power cut (%d bytes): started afresh",
                path,
                len(head),
            )
        return False

    def _read_existing(self, table: str) -> float:
        data = self.path.read_bytes()
        if not data.endswith(b"\n"):
            # A line torn by a power cut was never applied: cut it off, so the next append
            # starts on a line of its own.
            keep = data.rfind(b"\n") + 1
            log.warning(
                "journal %s: dropping a torn last line (%d bytes)", self.path, len(data) - keep
            )
            os.truncate(self.path, keep)
            data = data[:keep]
        damaged = data.find(b"\0")  # JSON text never holds a NUL byte: never ours
        if damaged >= 0:
            start = data.rfind(b"\n", 0, damaged) + 1
            line = data.count(b"\n", 0, start) + 1
            raise JournalError(
                f"journal {self.path}: line {line} (byte {start}) "
                "holds zero bytes, as a file system that reorders writes leaves the end of "
                "a file after a power cut; what follows was never synced (with fsync = "
                f'"always" never published either): cut it off with `truncate -s {start} '
                f"{self.path}` and start again"
            )
        try:
            lines = journal_lines(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise JournalError(f"journal {self.path}: not UTF-8 text ({exc.reason})") from exc
        self._head = _last_head(lines, data)
        match = HEADER_RE.match(lines[0].strip()) if lines else None
        if not match:
            raise JournalError(f"journal {self.path}: first line is not a journal header")
        self._header_size = len(lines[0].encode())
        if match["table"] != table:
            raise JournalError(
                f"journal {self.path} belongs to table {match['table']}, not {table}"
            )
        try:
            segment = parse_lines(lines, str(self.path))
        except TraceError as exc:
            raise JournalError(f"journal unreadable: {exc}") from exc
        self.events = segment.events
        self.outputs = segment.outputs
        self.checkpoint = segment.checkpoint
        self.checkpoint_t = segment.checkpoint_t
        self.segment = segment.number
        self.seal = segment.seal
        return float(match["epoch"])

    def append(self, event: Event) -> None:
        """Write one input before the caller applies it (durable at the next `commit`)."""
        self._write(event_to_json(event))
        self.appended += 1

    @property
    def has_inputs(self) -> bool:
        """It holds an input (found at start, or appended since)."""
        return bool(self.events) or self.appended > 0

    def record(self, t: float, src: str, message: Message, key: str | None = None) -> None:
        """Write one output before the caller publishes it (durable at the next `commit`);
        `key`: a sealed hole card's key, kept with it."""
        self._write(output_line(t, src, message, key))

    @property
    def head(self) -> str:
        """The journal chain's head: the last record's `h` (hex)."""
        return self._head.hex()

    def sign(self, why: str) -> bool:
        """Sign the chain's head (a `sig` record), if the table has a key and anything was
        written since the last signature; True if it did."""
        if self.signer is None or self._unsigned == 0:
            return False
        self._write(sig_line(self.signer, self.table, self._head, why))
        self._unsigned = 0
        return True

    @property
    def blank(self) -> bool:
        """Nothing but the header has been written."""
        return self.size <= self._header_size

    def write_checkpoint(self, t: float, state: dict[str, Any]) -> None:
        """Open a blank journal with the engine state it starts from, durably."""
        if not self.blank:
            raise JournalError(f"journal {self.path}: a checkpoint opens a blank journal only")
        self._write(checkpoint_line(t, state))
        self.sync()
        self.checkpoint, self.checkpoint_t = state, t

    def _write(self, line: str) -> None:
        try:
            with self._lock:
                chained, head = chain_record(self._head, line)
                data = (chained + "\n").encode()
                self._fh.write(data)
                self._fh.flush()
                self.size += len(data)
                self._head = head
                self._unsigned += 1
        except (OSError, ValueError) as exc:
            raise JournalError(
                f"journal {self.path}: {getattr(exc, 'strerror', None) or exc}"
            ) from exc

    def commit(self) -> None:
        """Everything written so far is durable by the fsync policy: call before its effect."""
        if self._sync_error is not None:
            raise JournalError(
                f"journal {self.path}: background sync failed: "
                f"{self._sync_error.strerror or self._sync_error}"
            )
        if self.fsync == "always":
            self.sync()
        else:
            self._dirty.set()

    def sync(self) -> None:
        """Make everything written so far durable now."""
        try:
            with self._lock:
                if not self._fh.closed:
                    self._fh.flush()
                    os.fdatasync(self._fh.fileno())
        except OSError as exc:
            raise JournalError(f"journal {self.path}: {exc.strerror or exc}") from exc

    def rotation_due(self) -> bool:
        """A one-file journal never rotates."""
        return False

    def rotate(self, state: dict[str, Any], t: float) -> Path:
        """A one-file journal cannot rotate (configure `[journal] directory` for segments)."""
        raise JournalError(f"journal {self.path} is a single file: it does not rotate")

    def close(self) -> None:
        """Sign the chain's head (a clean stop), make everything durable, close the file."""
        if not self._fh.closed and self._sync_error is None:
            try:
                self.sign("stop")
            except JournalError as exc:
                log.error("journal %s: the chain was not signed at the stop: %s", self.path, exc)
        self._closed.set()
        self._dirty.set()  # wake the syncer so it sees the close at once
        if self._syncer is not None:
            self._syncer.join(timeout=5)
        with self._lock:
            if not self._fh.closed:
                self._fh.flush()
                os.fdatasync(self._fh.fileno())
                self._fh.close()

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)


@dataclass(frozen=True, slots=True)
class _SegmentInfo:
    path: Path
    number: int | None
    checkpoint_t: float | None


def _peek(path: Path) -> _SegmentInfo:
    """A segment's header number and checkpoint time, from its first two lines only."""
    try:
        with gzip.open(path, "rb") if path.name.endswith(GZ) else path.open("rb") as fh:
            header = fh.readline().decode("utf-8", errors="replace").strip()
            second = fh.readline().decode("utf-8", errors="replace")
    except (OSError, EOFError, zlib.error) as exc:  # EOFError, zlib.error: a damaged gzip
        raise JournalError(f"journal {path}: {getattr(exc, 'strerror', None) or exc}") from exc
    match = HEADER_RE.match(header)
    number = int(match["segment"]) if match and match["segment"] else None
    checkpoint_t: float | None = None
    if second.endswith("\n"):
        try:
            found = _parse_checkpoint(second.strip())
        except TraceError:
            found = None
        checkpoint_t = found[0] if found else None
    return _SegmentInfo(path, number, checkpoint_t)


class SegmentedJournal:
    """A journal directory of segments `journal-<epoch>-<n>.jsonl`, rotated between hands.

    Only the last (active) segment is written. `rotate` opens segment n+1 with a checkpoint
    line holding the engine state, so recovery reads the active segment alone; older
    segments are kept for audit and replay until the retention policy (`keep_segments`,
    `keep_days`, 0 = no limit) deletes them, oldest first. A segment is never deleted if it
    is the active one or recovery still needs it. A new segment appears atomically (written
    and synced under a temporary name, then renamed), so a crash leaves either the old
    segment active or the new one complete with its checkpoint.
    """

    def __init__(
        self,
        directory: Path,
        table: str,
        *,
        now: float,
        fsync: str = "always",
        fsync_interval: float = 0.1,
        max_segment_bytes: int = 16 * 1024 * 1024,
        keep_segments: int = 0,
        keep_days: float = 0.0,
        signer: Signer | None = None,
    ) -> None:
        self.directory = directory
        self.table = table
        self.signer = signer
        #: the shell's state a new segment starts from (its `seal` record); set by the daemon
        self.seal_state: Callable[[], dict[str, Any]] | None = None
        self.fsync = fsync
        self.fsync_interval = fsync_interval
        self.max_segment_bytes = max_segment_bytes
        self.keep_segments = keep_segments
        self.keep_days = keep_days
        try:
            make_private_dir(directory)  # 0700 when it creates it: it holds every hole card
            for leftover in directory.glob(".journal-*.tmp"):
                leftover.unlink()  # a rotation that never completed: never part of the journal
        except OSError as exc:
            raise JournalError(f"journal directory {directory}: {exc.strerror or exc}") from exc
        paths = list_segments(directory)
        try:
            for segment in paths:  # made by hand or by an older version: private now
                tighten(segment)
        except OSError as exc:
            raise JournalError(f"journal directory {directory}: {exc.strerror or exc}") from exc
        for closed in paths[:-1]:  # a compression a crash cut short, or never began
            if not closed.name.endswith(GZ):
                self._compress(closed)
        paths = list_segments(directory)
        if paths:
            path = paths[-1]
            if path.name.endswith(GZ):
                raise JournalError(f"journal {path}: the active segment cannot be compressed")
            number = int(SEGMENT_RE.match(path.name)["number"])  # type: ignore[index]
        else:
            number = 1
            path = self._create(1, now, None)
        self.active = self._open(path)
        if self.active.segment != number:
            raise JournalError(
                f"journal {path}: header says segment {self.active.segment}, name says {number}"
            )
        self.epoch = self.active.epoch
        self.enforce_retention(now)

    def _compress(self, path: Path) -> None:
        """gzip a closed segment (about 18 times smaller); on failure it stays as it is."""
        if path.with_name(path.name + GZ).exists():
            path.unlink(missing_ok=True)  # compressed; a crash came before the plain one went
            return
        try:
            compress_segment(path)
        except JournalError as exc:
            log.warning("%s (kept uncompressed)", exc)

    def _open(self, path: Path) -> Journal:
        return Journal(
            path,
            self.table,
            now=0.0,
            fsync=self.fsync,
            fsync_interval=self.fsync_interval,
            signer=self.signer,
        )

    def _create(
        self,
        number: int,
        epoch: float,
        checkpoint: tuple[float, dict[str, Any]] | None,
        *,
        prev: str | None = None,
        seal: dict[str, Any] | None = None,
    ) -> Path:
        """Write a new segment (header naming the chain head it continues, checkpoint, the
        shell's state) durably under its final name."""
        path = self.directory / segment_name(epoch, number)
        tmp = self.directory / f".{path.name}.tmp"
        text = header_line(epoch, self.table, number, prev) + "\n"
        head = hashlib.sha256(text.encode()).digest()
        records = [checkpoint_line(*checkpoint)] if checkpoint is not None else []
        if seal is not None:
            records.append(seal_line(seal))
        for record in records:
            line, head = chain_record(head, record)
            text += line + "\n"
        try:
            if path.exists():
                raise JournalError(f"journal segment {path} already exists")
            with open_private(tmp) as fh:
                fh.write(text.encode())
                fh.flush()
                os.fsync(fh.fileno())
            os.rename(tmp, path)
            fsync_dir(self.directory)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise JournalError(f"journal segment {path}: {exc.strerror or exc}") from exc
        return path

    # -- the journal interface the daemon uses (same as Journal) -----------------------------

    @property
    def path(self) -> Path:
        """The active segment."""
        return self.active.path

    @property
    def seal(self) -> dict[str, Any] | None:
        """The shell's state the active segment starts from (None: the journal's first)."""
        return self.active.seal

    @property
    def head(self) -> str:
        """The journal chain's head (hex)."""
        return self.active.head

    def sign(self, why: str) -> bool:
        """Sign the chain's head in the active segment (see `Journal.sign`)."""
        return self.active.sign(why)

    @property
    def events(self) -> list[Event]:
        """The events of the active segment found at start (after its checkpoint)."""
        return self.active.events

    @property
    def checkpoint(self) -> dict[str, Any] | None:
        """The engine state the active segment starts from (None: the journal's first)."""
        return self.active.checkpoint

    def __iter__(self) -> Iterator[Event]:
        return iter(self.active.events)

    @property
    def outputs(self) -> dict[int, list[Output]]:
        """The `out` records of the active segment found at start, by position."""
        return self.active.outputs

    def append(self, event: Event) -> None:
        """Write one input to the active segment before the caller applies it."""
        self.active.append(event)

    def record(self, t: float, src: str, message: Message, key: str | None = None) -> None:
        """Write one output to the active segment before the caller publishes it."""
        self.active.record(t, src, message, key)

    def commit(self) -> None:
        """Everything written so far is durable by the fsync policy."""
        self.active.commit()

    @property
    def blank(self) -> bool:
        """Nothing but the active segment's header has been written."""
        return self.active.blank

    @property
    def has_inputs(self) -> bool:
        """The active segment holds an input."""
        return self.active.has_inputs

    def write_checkpoint(self, t: float, state: dict[str, Any]) -> None:
        """Open the journal's (blank) first segment with the engine state it starts from."""
        self.active.write_checkpoint(t, state)

    def rotation_due(self) -> bool:
        """The active segment has reached the maximum size (rotate at the next chance)."""
        return self.active.size >= self.max_segment_bytes

    def rotate(self, state: dict[str, Any], t: float) -> Path:
        """Start the next segment with a checkpoint (`state` at trace time `t`), then apply
        the retention policy. Call it between hands only; returns the new segment's path."""
        old = self.active
        old.sign("rotation")  # the old segment ends signed
        old.sync()  # the old segment is complete on storage before the new one exists
        number = (old.segment or 1) + 1
        seal = self.seal_state() if self.seal_state is not None else None
        path = self._create(number, self.epoch, (t, state), prev=old.head, seal=seal)
        try:
            self.active = self._open(path)
        except JournalError:
            path.unlink(missing_ok=True)  # the old segment stays the active one, whole
            fsync_dir(self.directory)
            raise
        old.close()
        log.info("journal rotated to %s", path.name)
        self._compress(old.path)
        try:
            self.enforce_retention(self.epoch + t)
        except JournalError as exc:
            raise RetentionError(f"rotated to {path.name}, but retention failed: {exc}") from exc
        return path

    def enforce_retention(self, now: float) -> list[Path]:
        """Delete the oldest segments beyond `keep_segments` or closed more than `keep_days`
        before `now` (wall clock); never the active segment nor one recovery needs."""
        if not self.keep_segments and not self.keep_days:
            return []
        infos = [_peek(path) for path in list_segments(self.directory)]
        # Recovery starts at the newest segment that opens with a checkpoint (or is the
        # journal's first): that one and every later one are needed.
        needed = max(
            (
                i
                for i, info in enumerate(infos)
                if info.checkpoint_t is not None or info.number == 1
            ),
            default=0,
        )
        needed = min(needed, len(infos) - 1)
        removed: list[Path] = []
        for i in range(needed):
            remaining = len(infos) - len(removed)
            too_many = self.keep_segments > 0 and remaining > self.keep_segments
            closed_t = infos[i + 1].checkpoint_t  # a segment closes where the next one opens
            too_old = (
                self.keep_days > 0
                and closed_t is not None
                and self.epoch + closed_t < now - self.keep_days * DAY
            )
            if not (too_many or too_old):
                break  # oldest first: never leave a hole
            try:
                infos[i].path.unlink()
            except OSError as exc:
                raise JournalError(f"journal {infos[i].path}: {exc.strerror or exc}") from exc
            removed.append(infos[i].path)
            log.info("journal retention: deleted %s", infos[i].path.name)
        if removed:
            try:
                fsync_dir(self.directory)
            except OSError as exc:
                raise JournalError(f"journal directory {self.directory}: {exc}") from exc
        return removed

    def close(self) -> None:
        """Make everything durable and close the active segment."""
        self.active.close()


InputJournal = Journal | SegmentedJournal


def open_journal(
    config: JournalConfig, table: str, *, now: float, signer: Signer | None = None
) -> InputJournal | None:
    """The journal a configuration names: a directory of segments, one file, or none;
    `signer` signs its chain (the table's key)."""
    if config.directory is not None:
        return SegmentedJournal(
            config.directory,
            table,
            now=now,
            fsync=config.fsync,
            fsync_interval=config.fsync_interval,
            max_segment_bytes=int(config.max_segment_mb * 1024 * 1024),
            keep_segments=config.keep_segments,
            keep_days=config.keep_days,
            signer=signer,
        )
    if config.path is not None:
        return Journal(
            config.path,
            table,
            now=now,
            fsync=config.fsync,
            fsync_interval=config.fsync_interval,
            signer=signer,
        )
    return None
