"""The room's `resend` command: events published before, sent again from the journal, unchanged.

A room server that finds a hole in a table's `seq` (a message lost on the way: a broker
restart without persistence, a subscriber's queue overflowing, an outbox overflow during a
long outage) asks the table with `cmd/resend` `{"from_seq": A, "to_seq": B}`. The table
reads the `out` records of its journal (docs/trace-format.md, *Output records*) and publishes
every `events` message with `A <= seq <= B` again: the very payload it published the first
time (the same bytes: the journal keeps the payload's key order, and `Message.payload_bytes`
writes it the same way), the same `seq`. Subscribers de-duplicate by `seq` as always.

The journal may be one file or a directory of segments; closed segments are gzip files and
are read too. A segment's checkpoint names the last `seq` before it, so only the segments
that can hold the range are read. Events the retention policy has deleted are answered with
a clear error naming the missing range: the room then knows they are gone for good.

This module is the whole of the table's side; the daemon only calls `answer_resend` from its
loop (so reading the journal never runs on the MQTT thread) and publishes what it returns.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.config import Config, JournalConfig
from controller.journal import CHECKPOINT, GZ, HEADER_RE, list_segments
from kernel.errors import JournalError
from kernel.messages import EVENTS, REPLIES, Message

#: The command's name on `cmd/<name>`.
RESEND = "resend"
#: The most events one `resend` may ask for (the room splits a longer range).
MAX_RANGE = 10_000
#: The fields a `resend` payload may carry.
FIELDS = frozenset({"name", "id", "from_seq", "to_seq"})
_OUT_EVENTS = '{"out":"' + EVENTS + '"'


@dataclass(frozen=True, slots=True)
class ResendRequest:
    """A valid `resend`: publish events `from_seq`..`to_seq` again; `request_id` is echoed."""

    from_seq: int
    to_seq: int
    request_id: str | None


@dataclass(frozen=True, slots=True)
class ResendAnswer:
    """What the table publishes for a `resend`: the events found, then the reply."""

    events: list[Message]
    reply: Message


def check_resend(obj: dict[str, Any], request_id: str | None) -> ResendRequest:
    """The request in a decoded `resend` payload; ValueError (the reason) if it is malformed.

    `obj` has passed the checks every command payload passes (JSON object, usable `id`).
    """
    unknown = sorted(set(obj) - FIELDS)
    if unknown:
        raise ValueError(
            f"command 'resend' has no field {', '.join(map(repr, unknown))} "
            "(it takes 'from_seq', 'to_seq', 'id')"
        )
    if obj.get("name", RESEND) != RESEND:
        raise ValueError(f"topic says 'resend' but payload says {obj['name']!r}")
    values: list[int] = []
    for key in ("from_seq", "to_seq"):
        if key not in obj:
            raise ValueError(f"command 'resend' needs field {key!r}")
        value = obj[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**53 - 1:
            raise ValueError(f"command 'resend': field {key!r} must be an integer >= 1")
        values.append(value)
    first, last = values
    if last < first:
        raise ValueError(f"command 'resend': to_seq {last} is before from_seq {first}")
    if last - first + 1 > MAX_RANGE:
        raise ValueError(
            f"command 'resend': {last - first + 1} events asked, at most {MAX_RANGE} at once"
        )
    return ResendRequest(first, last, request_id)


def journal_files(config: JournalConfig) -> list[Path]:
    """The journal's files, oldest first: every retained segment, or the one file."""
    if config.directory is not None:
        if not Path(config.directory).is_dir():
            return []
        return list_segments(Path(config.directory))
    if config.path is not None and Path(config.path).exists():
        return [Path(config.path)]
    return []


def _lines(path: Path) -> Generator[str, None, None]:
    """A journal file's lines (a gzip segment decompressed as it is read)."""
    try:
        opener = gzip.open if path.name.endswith(GZ) else open
        with opener(path, "rt", encoding="utf-8", newline="\n") as fh:
            yield from fh
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise JournalError(f"journal {path}: {getattr(exc, 'strerror', None) or exc}") from exc


def _start_seq(path: Path) -> int | None:
    """The last `seq` before a segment (from its checkpoint), None if it has none."""
    lines = _lines(path)
    header = next(lines, "")
    second = next(lines, "")
    lines.close()
    if not HEADER_RE.match(header.strip()) or f'"{CHECKPOINT}"' not in second:
        return None
    try:
        record = json.loads(second)
        seq = record["state"]["seq"]
    except (ValueError, KeyError, TypeError):
        return None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _wanted_files(paths: list[Path], first: int, last: int) -> list[Path]:
    """The files that can hold events `first`..`last` (a segment holds the events after its
    checkpoint's seq, up to the next segment's)."""
    starts = [_start_seq(p) for p in paths]
    chosen: list[Path] = []
    for i, path in enumerate(paths):
        begin = starts[i]
        end = next((s for s in starts[i + 1 :] if s is not None), None)
        if begin is not None and begin >= last:
            continue  # everything in it comes after the range
        if end is not None and end < first:
            continue  # everything in it comes before the range
        chosen.append(path)
    return chosen


def find_events(paths: list[Path], first: int, last: int) -> dict[int, Message]:
    """The `events` messages with `first <= seq <= last` in the journal files, by seq (the
    first record of a seq wins: a seq is never reused)."""
    found: dict[int, Message] = {}
    for path in _wanted_files(paths, first, last):
        for line in _lines(path):
            if not line.startswith(_OUT_EVENTS):
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line torn by a crash: never published
            payload = record.get("payload")
            seq = payload.get("seq") if isinstance(payload, dict) else None
            if not isinstance(seq, int) or not first <= seq <= last or seq in found:
                continue
            found[seq] = Message(
                EVENTS, payload, int(record.get("qos", 1)), bool(record.get("retain", False))
            )
    return found


def _ranges(seqs: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of sorted numbers, as (first, last) pairs."""
    runs: list[tuple[int, int]] = []
    for seq in seqs:
        if runs and runs[-1][1] == seq - 1:
            runs[-1] = (runs[-1][0], seq)
        else:
            runs.append((seq, seq))
    return runs


def answer_resend(
    request: ResendRequest, config: Config, *, t: float, last_seq: int
) -> ResendAnswer:
    """The events to publish again and the reply, from the journal the table's `config` names.

    `last_seq` is the highest seq the table has published: a range beyond it is cut there
    (and said so). The reply is `ok` when every event asked for (up to `last_seq`) was found;
    otherwise it names the missing runs (`missing`) and why.
    """
    first, last = request.from_seq, min(request.to_seq, last_seq)
    error: str | None = None
    events: list[Message] = []
    missing: list[tuple[int, int]] = []
    if first > last_seq:
        error = f"no event {first} yet: the last seq published is {last_seq}"
    else:
        paths = journal_files(config.journal)
        if not paths:
            error = "this table keeps no journal: nothing can be sent again"
            missing = [(first, last)]
        else:
            try:
                found = find_events(paths, first, last)
            except JournalError as exc:
                found = {}
                error = f"the journal could not be read: {exc}"
            events = [found[seq] for seq in sorted(found)]
            missing = _ranges([s for s in range(first, last + 1) if s not in found])
            if missing and error is None:
                text = ", ".join(f"{a}..{b}" if a != b else str(a) for a, b in missing)
                error = f"events {text} are no longer in the journal (retention): not sent"
    payload: dict[str, Any] = {
        "table": config.table.id,
        "id": request.request_id,
        "command": RESEND,
        "ok": error is None,
        "error": error,
        "t": t if math.isfinite(t) else 0.0,
        "resent": len(events),
        "last_seq": last_seq,
    }
    if missing:
        payload["missing"] = [[a, b] for a, b in missing]
    return ResendAnswer(events, Message(REPLIES, payload))
