"""`tablectl verify`: a journal, a room's events export or a PHH file against the signed chain.

Exit 0 when the hash chain holds from the first record to the last and every signature in
it is the table's; otherwise non-zero, naming the first record where it breaks (file and
line, or the table and seq) and why: a record altered (its `h` or `chain` is not the hash
of what it holds), removed (the next one does not link to the one before, or a seq is
missing) or moved (the same), or a signature that is not the table's key's.

- **A journal** (one file, a segment, or a directory of segments, gzip ones included):
  every record's `h` (controller/journal.py), the `sig` records (signed at every hand's
  end, rotation and clean stop), the segments' links (`prev=` in each header), and the
  events chain of its `out` records with each `hand_completed`'s signature.
- **A room export** (`tablectl room export --events DIR`, one file per table): the events
  as the room stored them, in seq order, their chain and signatures.
- **A PHH file** (`tablectl export-phh`, the room's `.phh`): the hand's events it carries
  (`_events`), chained from `_chain_prev` to `_chain_head`, the signature of the head, and
  the hand history itself, which must be what those events give.

The key: `--config` names it (a table file's `[seal] public_key` or `signing_key`, or a room
file's `[keys] directory`); without it, a PHH file or export is checked against the key it
names itself, which proves only that it is whole, not whose it is (said so).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import tomllib
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.chain import (
    CHAIN,
    GENESIS,
    SIGNATURE,
    ChainError,
    Verifier,
    body_bytes,
    link,
    load_verifier,
    signed_message,
    split_text,
    verifier_from_pem,
)
from controller.journal import (
    GZ,
    HEADER_RE,
    SEAL,
    SIG,
    journal_signed_message,
    list_segments,
    split_h,
)
from kernel.errors import TableError

EXPORT_HEADER = "# tablectl-events v1"


class VerifyError(TableError):
    """The file cannot be verified at all (unreadable, unknown kind, no key)."""


@dataclass(slots=True)
class Report:
    """What `verify` found: the first break (None: the chain holds), notes, counts."""

    kind: str
    broken: str | None = None
    notes: list[str] = field(default_factory=list)
    records: int = 0
    events: int = 0
    signatures: int = 0
    key: str | None = None

    @property
    def ok(self) -> bool:
        """The chain holds and was signed."""
        return self.broken is None

    def fail(self, where: str, why: str) -> None:
        """Record the first break only."""
        if self.broken is None:
            self.broken = f"{where}: {why}"


class EventsCheck:
    """The events chain, event after event (in seq order), with the signatures in it.

    `start`: the chain value before the first event fed (GENESIS before seq 1); None: the
    first event is taken as it is (the start of what was kept) and the chain checked from
    there.
    """

    def __init__(
        self, report: Report, verifier: Verifier | None, start: bytes | None = None
    ) -> None:
        self.report = report
        self.verifier = verifier
        self.head = start
        self.seq: int | None = None
        self.signed_seq: int | None = None  # the last signed event

    def feed(self, where: str, payload: dict[str, Any], body: bytes | None = None) -> None:
        """One event (its payload; `body`: its bytes as stored, when known)."""
        report = self.report
        report.events += 1
        seq = payload.get("seq")
        if not isinstance(seq, int):
            report.fail(where, "an event without a seq")
            return
        if self.seq is not None and seq != self.seq + 1:
            why = f"event seq {seq} follows seq {self.seq}: " + (
                f"events {self.seq + 1}..{seq - 1} are missing (removed?)"
                if seq > self.seq
                else "out of order (moved?)"
            )
            report.fail(where, why)
        chain = payload.get(CHAIN)
        if not isinstance(chain, str):
            report.fail(where, f"event seq {seq} carries no chain")
            self.seq = seq
            return
        if body is None:
            body = body_bytes(payload)
        start = self.head if self.head is not None else (GENESIS if seq == 1 else None)
        if start is not None:
            expected = link(start, body).hex()
            if expected != chain:
                report.fail(
                    where,
                    f"event seq {seq}: its chain is not the hash of the chain before it and "
                    "what it holds (the event, or one before it, was altered, removed or moved)",
                )
        try:
            self.head = bytes.fromhex(chain)
        except ValueError:
            report.fail(where, f"event seq {seq}: its chain is not hex")
        self.seq = seq
        signature = payload.get(SIGNATURE)
        if payload.get("type") == "hand_completed" or signature is not None:
            self._signature(where, payload, seq, signature)

    def _signature(self, where: str, payload: dict[str, Any], seq: int, signature: Any) -> None:
        report = self.report
        if not isinstance(signature, dict):
            if self.verifier is not None:
                report.fail(where, f"event seq {seq} (end of a hand) is not signed")
            return
        if self.verifier is None or self.head is None:
            return
        if signature.get("key") != self.verifier.key_id:
            report.fail(
                where,
                f"event seq {seq} is signed by key {signature.get('key')}, not the table's "
                f"({self.verifier.key_id})",
            )
            return
        message = signed_message(str(payload.get("table", "")), seq, self.head)
        if not self.verifier.check(message, str(signature.get("sig", ""))):
            report.fail(where, f"event seq {seq}: the signature is not the table's")
            return
        report.signatures += 1
        self.signed_seq = seq


# ---------------------------------------------------------------------------- journals


def _read_lines(path: Path) -> list[str]:
    try:
        data = path.read_bytes()
        if path.name.endswith(GZ):
            data = gzip.decompress(data)
        text = data.decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise VerifyError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def verify_journal(paths: list[Path], verifier: Verifier | None) -> Report:
    """The journal chain of these files (a journal's segments, oldest first)."""
    report = Report("journal", key=verifier.key_id if verifier else None)
    events = EventsCheck(report, verifier)
    last_h: str | None = None
    last_number: int | None = None
    unsigned = 0
    table = ""
    for path in paths:
        lines = _read_lines(path)
        if not lines:
            report.fail(str(path), "empty file")
            break
        header = HEADER_RE.match(lines[0].strip())
        if header is None:
            report.fail(f"{path}:1", "not a journal header")
            break
        table = header["table"]
        number = int(header["segment"]) if header["segment"] else None
        if last_number is not None and number is not None and number != last_number + 1:
            report.fail(f"{path}:1", f"segments {last_number + 1}..{number - 1} are missing")
        elif last_h is not None and header["prev"] is not None and header["prev"] != last_h:
            report.fail(
                f"{path}:1",
                "it does not continue the segment before it (prev= is not that segment's "
                "last record: a record at its end was altered or removed)",
            )
        last_number = number
        prev = hashlib.sha256(lines[0].encode()).digest()
        consumed = len(lines[0].encode())
        prev_had_h = False
        for i, raw in enumerate(lines[1:], start=2):
            where = f"{path}:{i}"
            if not raw.endswith("\n"):
                report.notes.append(f"{where}: a torn last line (never applied) is left out")
                break
            text = raw.rstrip("\n")
            if not text.startswith("{"):
                consumed += len(raw.encode())
                continue
            body, h = split_h(text)
            if h is None:
                report.notes.append(f"{where}: written before records were chained")
                consumed += len(raw.encode())
                prev_had_h = False
                continue
            if not prev_had_h:
                prev = hashlib.sha256(_prefix_bytes(lines, consumed)).digest()
            report.records += 1
            if hashlib.sha256(prev + body.encode()).hexdigest() != h:
                report.fail(
                    where,
                    "the record's h is not the hash of the record before it and of what it "
                    "holds (this record was altered, or one before it removed or moved)",
                )
                return _finish(report, unsigned)
            unsigned += 1
            _journal_record(report, events, verifier, where, body, prev, table)
            if body.startswith('{"' + SIG + '"') and report.broken is None:
                unsigned = 0
            if report.broken is not None:
                return _finish(report, unsigned)
            prev = bytes.fromhex(h)
            prev_had_h = True
            consumed += len(raw.encode())
        last_h = prev.hex() if prev_had_h else None
    return _finish(report, unsigned)


def _prefix_bytes(lines: list[str], consumed: int) -> bytes:
    """The first `consumed` bytes of a file's lines."""
    return "".join(lines).encode()[:consumed]


def _journal_record(
    report: Report,
    events: EventsCheck,
    verifier: Verifier | None,
    where: str,
    body: str,
    prev: bytes,
    table: str,
) -> None:
    if body.startswith('{"' + SIG + '"'):
        record = json.loads(body)
        if record.get("head") != prev.hex():
            report.fail(where, "the signature names another chain head than the record before it")
            return
        if verifier is None:
            return
        if record.get("key") != verifier.key_id:
            report.fail(where, f"signed by key {record.get('key')}, not the table's")
            return
        if not verifier.check(journal_signed_message(table, prev), str(record.get(SIG))):
            report.fail(where, "the signature is not the table's")
            return
        report.signatures += 1
    elif body.startswith('{"' + SEAL + '"'):
        state = json.loads(body).get(SEAL) or {}
        chain = state.get("chain")
        if isinstance(chain, str) and len(chain) == 64:
            events.head = bytes.fromhex(chain)  # the events chain the segment continues
    elif body.startswith('{"out":"events"'):
        record = json.loads(body)
        payload = record.get("payload")
        if isinstance(payload, dict) and CHAIN in payload:
            events.feed(where, payload)


def _finish(report: Report, unsigned: int) -> Report:
    if report.broken is None and report.records == 0:
        report.fail(report.kind, "no chained record (written before the chain existed?)")
    if report.broken is None and report.key is None:
        report.fail(report.kind, "no public key to check the signatures with (give --config)")
    if report.broken is None and report.signatures == 0:
        report.fail(report.kind, "the chain was never signed (no [seal] signing_key?)")
    if report.broken is None and unsigned:
        report.notes.append(
            f"the last {unsigned} record(s) are chained but not signed yet (a hand in progress)"
        )
    return report


# ---------------------------------------------------------------------------- room export


def verify_export(path: Path, verifier: Verifier | None) -> Report:
    """A room's events export: a header line, then one stored payload per line."""
    lines = _read_lines(path)
    report = Report("room export")
    if not lines or not lines[0].startswith(EXPORT_HEADER):
        raise VerifyError(f"{path}: not a room events export ({EXPORT_HEADER} ...)")
    fields = dict(part.split("=", 1) for part in lines[0].split()[3:] if "=" in part)
    verifier = verifier or _embedded(fields.get("public_key"), report)
    report.key = verifier.key_id if verifier else None
    events = EventsCheck(report, verifier)
    for i, raw in enumerate(lines[1:], start=2):
        text = raw.rstrip("\n")
        if not text or text.startswith("#"):
            continue
        try:
            payload = json.loads(text)
        except ValueError:
            report.fail(f"{path}:{i}", "not JSON")
            break
        body, chain = split_text(text)
        if chain is None or payload.get(CHAIN) != chain:
            report.fail(f"{path}:{i}", f"event seq {payload.get('seq')} carries no chain")
            break
        events.feed(f"{path}:{i} (seq {payload.get('seq')})", payload, body.encode())
        report.records += 1
        if report.broken is not None:
            break
    return _events_finish(report, events, verifier)


def _embedded(pem_b64: str | None, report: Report) -> Verifier | None:
    if not pem_b64:
        return None
    import base64

    try:
        verifier = verifier_from_pem(base64.b64decode(pem_b64))
    except (ChainError, ValueError):
        return None
    report.notes.append(
        f"signatures checked against key {verifier.key_id} named by the file itself: give "
        "--config to check them against the table's registered key"
    )
    return verifier


def _events_finish(report: Report, events: EventsCheck, verifier: Verifier | None) -> Report:
    if report.broken is None and verifier is None:
        report.fail(report.kind, "no public key to check the signatures with (give --config)")
    if report.broken is None and events.seq is not None and events.signed_seq != events.seq:
        after = events.signed_seq or 0
        report.notes.append(f"events after seq {after} are chained but not signed yet")
    if report.broken is None and report.signatures == 0 and report.events:
        report.fail(report.kind, "no signed event (no hand completed?)")
    return report


# ---------------------------------------------------------------------------- PHH


#: PHH fields that do not come from the events (the state's names, the epoch's date, the
#: release times, the chain fields themselves).
_NOT_FROM_EVENTS = frozenset({"players", "day", "month", "year", "time", "time_zone"})


def verify_phh(path: Path, verifier: Verifier | None) -> Report:
    """A PHH file: its events chained to its signed head, and the file their history."""
    from controller.phh import HandMessages, build_phh

    report = Report("phh")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise VerifyError(f"{path}: not a PHH file: {exc}") from exc
    texts = data.get("_events")
    prev = data.get("_chain_prev")
    if not isinstance(texts, list) or not isinstance(prev, str):
        report.fail(str(path), "it carries no chain (_events, _chain_prev): written without one")
        return report
    verifier = verifier or _embedded(data.get("_chain_public_key"), report)
    report.key = verifier.key_id if verifier else None
    try:
        start = bytes.fromhex(prev)
    except ValueError:
        report.fail(str(path), "_chain_prev is not hex")
        return report
    events = EventsCheck(report, verifier, start)
    payloads: list[dict[str, Any]] = []
    for i, text in enumerate(texts, start=1):
        where = f"{path}: _events[{i}]"
        if not isinstance(text, str):
            report.fail(where, "not a string")
            return report
        payload = json.loads(text)
        body, chain = split_text(text)
        if chain is None:
            report.fail(where, "an event without its chain")
            return report
        events.feed(f"{where} (seq {payload.get('seq')})", payload, body.encode())
        payloads.append(payload)
        report.records += 1
        if report.broken is not None:
            return report
    if events.head is None or events.head.hex() != data.get("_chain_head"):
        report.fail(str(path), "_chain_head is not the chain of its last event")
        return report
    _events_finish(report, events, verifier)
    if report.broken is not None:
        return report
    hole = _hole_cards(data)
    players = data.get("players")
    names = (
        dict(zip(data.get("seats", []), players, strict=False)) if isinstance(players, list) else {}
    )
    rebuilt = build_phh(
        HandMessages(str(data.get("table", "")), int(data.get("hand", 0)), payloads, hole, names)
    )
    if rebuilt.text is None:
        report.fail(str(path), f"its events do not make a hand history: {rebuilt.problem}")
        return report
    again = tomllib.loads(rebuilt.text)
    for key, value in again.items():
        if key in _NOT_FROM_EVENTS:
            continue
        if data.get(key) != value:
            report.fail(str(path), f"field {key} is not what the signed events give")
            return report
    return report


def _hole_cards(data: dict[str, Any]) -> dict[int, list[str]]:
    """The hole cards a PHH file's `d dh` actions deal (the chain does not carry them)."""
    seats = data.get("seats", [])
    out: dict[int, list[str]] = {}
    for action in data.get("actions", []):
        parts = str(action).split()
        if len(parts) == 4 and parts[:2] == ["d", "dh"] and "?" not in parts[3]:
            index = int(parts[2].removeprefix("p")) - 1
            if 0 <= index < len(seats):
                cards = parts[3]
                out[int(seats[index])] = [cards[k : k + 2] for k in range(0, len(cards), 2)]
    return out


# ---------------------------------------------------------------------------- entry point


def kind_of(path: Path) -> str:
    """`journal`, `export` or `phh`, from what the file holds."""
    if path.is_dir():
        return "journal"
    if path.suffix == ".phh":
        return "phh"
    first = next(iter(_read_lines(path)), "")
    if first.startswith(EXPORT_HEADER):
        return "export"
    if HEADER_RE.match(first.strip()):
        return "journal"
    raise VerifyError(f"{path}: not a journal, a room events export nor a PHH file")


def verify_path(path: Path, verifier: Verifier | None) -> Report:
    """Verify whatever `path` is."""
    kind = kind_of(path)
    if kind == "journal":
        paths = list_segments(path) if path.is_dir() else [path]
        if not paths:
            raise VerifyError(f"{path}: no journal segment in it")
        return verify_journal(paths, verifier)
    if kind == "export":
        return verify_export(path, verifier)
    return verify_phh(path, verifier)


def table_verifier(config_path: Path) -> Verifier | None:
    """The key a table file names ([seal] public_key, else signing_key); None: none."""
    from controller.config import load_config

    config = load_config(config_path)
    source = config.seal.public_key or config.seal.signing_key
    return load_verifier(source) if source is not None else None


def table_of(path: Path) -> str | None:
    """The table a file is about (its header, or the PHH's `table`)."""
    kind = kind_of(path)
    if kind == "phh":
        try:
            value = tomllib.loads(path.read_text(encoding="utf-8")).get("table")
        except (OSError, tomllib.TOMLDecodeError):
            return None
        return str(value) if value is not None else None
    first = _first_file(path)
    line = next(iter(_read_lines(first)), "")
    if kind == "export":
        fields = dict(p.split("=", 1) for p in line.split()[3:] if "=" in p)
        return fields.get("table")
    header = HEADER_RE.match(line.strip())
    return header["table"] if header else None


def _first_file(path: Path) -> Path:
    if path.is_dir():
        segments = list_segments(path)
        if not segments:
            raise VerifyError(f"{path}: no journal segment in it")
        return segments[0]
    return path


def lines_of(report: Report) -> Iterator[str]:
    """What `tablectl verify` prints."""
    yield from (f"verify: note: {note}" for note in report.notes)
    counts = (
        f"{report.records} record(s), {report.events} event(s), {report.signatures} signature(s)"
    )
    if report.ok:
        yield f"verify: {report.kind}: the signed chain holds ({counts}; key {report.key})"
    else:
        yield f"verify: {report.kind}: BROKEN at {report.broken}"


class PublishedCheck:
    """What `tablectl replay` checks of a journal's record of what was published, beside the
    engine's messages (controller/replay.py): the events chain link by link and each
    hand's signature, each released key against the key journaled with its sealed card,
    and each release's time against the read and the delay."""

    def __init__(self, verifier: Verifier | None) -> None:
        self.report = Report("replay", key=verifier.key_id if verifier else None)
        self.events = EventsCheck(self.report, verifier)
        self._sealed: dict[int, tuple[dict[str, Any], str | None]] = {}

    def outputs(self, where: str, outputs: Iterable[Any]) -> str | None:
        """Check a step's `out` records; the first problem found (None: none)."""
        for output in outputs:
            message = output.message
            payload = message.payload
            if message.topic == "events" and CHAIN in payload:
                self.events.feed(where, payload)
            elif message.topic == "holecards" and isinstance(payload.get("seq"), int):
                self._sealed[int(payload["seq"])] = (payload, output.key)
            elif message.topic == "holekeys" and isinstance(payload.get("seq"), int):
                self._release(where, payload)
            if self.report.broken is not None:
                broken, self.report.broken = self.report.broken, None
                return broken
        return None

    def _release(self, where: str, payload: dict[str, Any]) -> None:
        seq = int(payload["seq"])
        sealed, key = self._sealed.get(seq, (None, None))
        if sealed is None:
            return  # sealed before what is replayed
        if key is not None and payload.get("key") != key:
            self.report.fail(where, f"the key released for hole cards seq {seq} is not theirs")
        elif float(payload.get("t", 0.0)) + 1e-6 < float(sealed["t"]) + float(sealed["delay"]):
            self.report.fail(where, f"the key of hole cards seq {seq} was released early")
