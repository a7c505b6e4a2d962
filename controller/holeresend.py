"""TV's requests for hole cards it missed: sent again from the journal, to the TV only.

Hole cards carry a per-table `seq` (controller/seal.py). A TV service that finds a hole in
it (a broker that died after acknowledging them, a reconnection) asks the table on
`<prefix>/tvreq/holecards` `{"from_seq": A, "to_seq": B}`: the table publishes the sealed
`holecards` messages with `A <= seq <= B` again from its journal, unchanged (same bytes),
and the `holekeys` releases already made for them. A TV that holds sealed cards whose key
it never got while later keys came asks on `<prefix>/tvreq/holekeys`: the releases already
made are sent again; a key not yet released is **refused** (nothing is sent for it) and a
critical `holekey_refused` alert tells the room.

Only the TV identity may publish on `tvreq/` and read `holecards`/`holekeys` (the broker
ACL, examples/mosquitto/acl); the room's `resend` command only ever sends `events`.
Requests are answered by the daemon's loop (controller/daemon.py), never on the MQTT thread.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from controller.config import Config
from controller.resend import _lines, journal_files
from controller.seal import TableSeal
from kernel.errors import JournalError
from kernel.messages import HOLECARDS, HOLEKEYS, Message

#: The request topics under the prefix (`tvreq/<kind>`).
KINDS = ("holecards", "holekeys")
#: The most hole-card messages one request may ask for.
MAX_RANGE = 2_000
_OUT = ('{"out":"' + HOLECARDS + '"', '{"out":"' + HOLEKEYS + '"')


@dataclass(frozen=True, slots=True)
class HoleRequest:
    """A TV request: `kind` (holecards or holekeys) for hole-card seqs `first`..`last`."""

    kind: str
    first: int
    last: int


@dataclass(slots=True)
class HoleAnswer:
    """What the table publishes for a request (from the journal, unchanged), and the
    alerts it raises (a key asked for too early)."""

    messages: list[Message] = field(default_factory=list)
    alerts: list[Message] = field(default_factory=list)


def parse_request(kind: str, payload: bytes) -> HoleRequest:
    """A request from `tvreq/<kind>`; ValueError (the reason) when it is not one."""
    if kind not in KINDS:
        raise ValueError(f"no TV request {kind!r} (one of {', '.join(KINDS)})")
    if len(payload) > 1024:
        raise ValueError("a TV request is at most 1 KiB")
    obj = json.loads(payload)
    if not isinstance(obj, dict):
        raise ValueError("a TV request is a JSON object")
    values: list[int] = []
    for key in ("from_seq", "to_seq"):
        value = obj.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**53 - 1:
            raise ValueError(f"{key!r} must be an integer >= 1")
        values.append(value)
    first, last = values
    if last < first or last - first + 1 > MAX_RANGE:
        raise ValueError(f"from_seq..to_seq must be a range of 1..{MAX_RANGE} seqs")
    return HoleRequest(kind, first, last)


def find_hole_records(
    paths: list[Path], first: int, last: int
) -> tuple[dict[int, Message], dict[int, Message]]:
    """The journaled sealed `holecards` and `holekeys` messages with `first <= seq <= last`,
    by seq (the first record of a seq wins), as published."""
    cards: dict[int, Message] = {}
    keys: dict[int, Message] = {}
    wanted = last - first + 1
    for path in reversed(paths):  # newest first: a TV asks for what it just missed
        if len(cards) == wanted and len(keys) == wanted:
            break
        for line in _lines(path):
            if not line.startswith(_OUT):
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue  # a line torn by a crash: never published
            payload = record.get("payload")
            seq = payload.get("seq") if isinstance(payload, dict) else None
            if not isinstance(seq, int) or not first <= seq <= last:
                continue
            found = cards if record.get("out") == HOLECARDS else keys
            if seq not in found and (found is keys or "sealed" in payload):
                found[seq] = Message(str(record["out"]), payload, 1, False)
    return cards, keys


def answer(request: HoleRequest, config: Config, seal: TableSeal, *, t: float) -> HoleAnswer:
    """The messages to send again for `request`, and the refusal alert for any key asked
    for before its release."""
    result = HoleAnswer()
    last = min(request.last, seal.hseq)
    if request.first > last:
        return result
    try:
        cards, keys = find_hole_records(journal_files(config.journal), request.first, last)
    except JournalError:
        return result
    if request.kind == "holecards":
        for seq in sorted(cards):
            result.messages.append(cards[seq])
            if seq in keys:
                result.messages.append(keys[seq])
        return result
    early = [seq for seq in range(request.first, last + 1) if seal.is_pending(seq) is not None]
    result.messages = [keys[seq] for seq in sorted(keys)]
    if early:
        result.alerts.append(seal.refusal(early, t))
    return result
