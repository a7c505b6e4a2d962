"""The room's checks of what the tables sign: the events chain on ingest and in the database,
and the key releases' times.

Every event a table publishes carries the table's hash chain, and each `hand_completed` its
Ed25519 signature of it (controller/chain.py). As events are stored (room/ingest.py), each
new one is checked against the stored events on either side of it (a copy sent again by
`resend` fills a hole and is checked then); the signatures against the table's registered
public key (`[keys] directory`, `<table>.pub`). A break is a critical room alert naming the
table and the seq: `chain_broken` (an event that does not follow the one before it: altered,
or one missing or moved), `signature_invalid`. A table whose key is not registered gets one
`table_key_missing` warning.

The release notices (`released`: which seat's hole cards became readable, when, to whom)
are checked for their time: never before the read plus the table's delay, never before the
hand's end when the table holds keys to it; an early one is `early_release` (critical).

`audit` walks a table's whole stored chain (`tablectl room verify`): an event altered,
removed or reordered in the database afterwards is found there, by seq.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from controller.chain import ChainError, Verifier, link, load_verifier, split_text
from controller.verify import EXPORT_HEADER, EventsCheck, Report
from room.store import EventRow, Store

log = logging.getLogger("tablectl.room.chain")

Alert = tuple[str, str, str]  # (type, severity, message)
PAGE = 2000


class RoomChain:
    """The chain checks of one room server."""

    def __init__(self, store: Store, keys: Path | None) -> None:
        self.store = store
        self.keys = keys
        self._verifiers: dict[str, Verifier | None] = {}
        self._warned: set[str] = set()
        self.checked = 0
        self.broken = 0

    def verifier(self, table: str) -> Verifier | None:
        """The table's registered key (None: not registered)."""
        if table not in self._verifiers or self._verifiers[table] is None:
            found: Verifier | None = None
            path = self.keys / f"{table}.pub" if self.keys is not None else None
            if path is not None and path.exists():
                try:
                    found = load_verifier(path)
                except ChainError as exc:
                    log.error("table %s: %s", table, exc)
            self._verifiers[table] = found
        return self._verifiers[table]

    # ------------------------------------------------------------------ on ingest

    def new_events(self, table: str, rows: list[EventRow]) -> list[Alert]:
        """Check the links of newly stored events with their stored neighbours."""
        alerts: list[Alert] = []
        chained = [r for r in rows if '"chain":"' in r.payload]
        if not chained:
            return alerts
        verifier = self.verifier(table)
        if verifier is None and table not in self._warned:
            self._warned.add(table)
            alerts.append(
                (
                    "table_key_missing",
                    "warning",
                    f"table {table} signs its events but its public key is not registered "
                    f"([keys] directory, {table}.pub): signatures are not checked",
                )
            )
        seqs = sorted(r.seq for r in chained)
        stored = self._payloads(table, seqs[0] - 1, seqs[-1] + 1)
        new = set(seqs)
        for seq in seqs:
            self.checked += 1
            text = stored.get(seq)
            if text is None:
                continue
            problem = self._link(table, stored.get(seq - 1), text, seq)
            after = stored.get(seq + 1)
            if problem is None and after is not None and seq + 1 not in new:
                problem = self._link(table, text, after, seq + 1)
            if problem is not None:
                self.broken += 1
                alerts.append(("chain_broken", "critical", problem))
                continue
            payload = json.loads(text)
            sig = self._signature(table, verifier, payload, text)
            if sig is not None:
                self.broken += 1
                alerts.append(("signature_invalid", "critical", sig))
        return alerts

    def _payloads(self, table: str, low: int, high: int) -> dict[int, str]:
        rows = self.store.query(
            "SELECT seq, payload FROM events WHERE room = ? AND table_id = ? AND seq BETWEEN ? "
            "AND ?",
            (self.store.room, table, low, high),
        )
        return {int(r["seq"]): str(r["payload"]) for r in rows}

    @staticmethod
    def _link(table: str, before: str | None, text: str, seq: int) -> str | None:
        body, chain = split_text(text)
        if chain is None:
            return f"table {table}: event seq {seq} carries no chain"
        if before is None:
            if seq != 1:
                return None  # its neighbour is not here (yet): checked when it comes
            start = bytes(32)
        else:
            _b, previous = split_text(before)
            if previous is None:
                return None  # written before the chain existed
            start = bytes.fromhex(previous)
        if link(start, body.encode()).hex() != chain:
            return (
                f"table {table}: event seq {seq} does not follow seq {seq - 1} in the signed "
                "chain: it, or the one before it, was altered, or an event between them was "
                "removed or moved"
            )
        return None

    @staticmethod
    def _signature(
        table: str, verifier: Verifier | None, payload: dict[str, Any], text: str
    ) -> str | None:
        if verifier is None or payload.get("type") != "hand_completed":
            return None
        report = Report("event")
        check = EventsCheck(report, verifier)
        _body, chain = split_text(text)
        check.head = bytes.fromhex(chain) if chain else None
        seq = int(payload["seq"])
        check.seq = seq
        check._signature(f"table {table}", payload, seq, payload.get("signature"))
        return report.broken

    # ------------------------------------------------------------------ releases

    def release(self, table: str, notice: dict[str, Any]) -> list[Alert]:
        """Check a release notice's time against the read, the delay and the hand's end."""
        try:
            t, read_t = float(notice["t"]), float(notice["read_t"])
            delay = float(notice.get("delay", 0.0))
            hand, seq = int(notice["hand"]), int(notice["seq"])
        except (KeyError, TypeError, ValueError):
            return [("release_malformed", "warning", f"table {table}: a release notice unread")]
        if t + 1e-6 < read_t + delay:
            return [
                (
                    "early_release",
                    "critical",
                    f"table {table}: the key of hole cards seq {seq} (hand {hand}, seat "
                    f"{notice.get('seat')}) went to {notice.get('to')} at {t:.3f}, before the "
                    f"read plus the table's delay ({read_t:.3f} + {delay:g} s)",
                )
            ]
        if notice.get("at_hand_end"):
            rows = self.store.query(
                "SELECT completed_t FROM hands WHERE room = ? AND table_id = ? AND hand = ?",
                (self.store.room, table, hand),
            )
            ended = rows[0]["completed_t"] if rows else None
            if ended is None or t + 1e-6 < float(ended):
                return [
                    (
                        "early_release",
                        "critical",
                        f"table {table}: the key of hole cards seq {seq} (hand {hand}) went to "
                        f"{notice.get('to')} before the hand was over",
                    )
                ]
        return []

    # ------------------------------------------------------------------ the whole database

    def audit(self, table: str) -> Report:
        """A table's whole stored chain, in seq order, with its signatures."""
        verifier = self.verifier(table)
        report = Report(f"room database, table {table}", key=verifier.key_id if verifier else None)
        check = EventsCheck(report, verifier)
        for seq, text in self.stored(table):
            body, chain = split_text(text)
            payload = json.loads(text)
            if chain is None:
                continue  # written before the chain existed
            check.feed(f"table {table} seq {seq}", payload, body.encode())
            report.records += 1
            if report.broken is not None:
                break
        if report.broken is None and verifier is None:
            report.fail(report.kind, f"no public key registered for table {table}")
        return report

    def stored(self, table: str) -> Iterator[tuple[int, str]]:
        """A table's stored events, (seq, payload text), in seq order."""
        after = 0
        while True:
            rows = self.store.query(
                "SELECT seq, payload FROM events WHERE room = ? AND table_id = ? AND seq > ? "
                "ORDER BY seq LIMIT ?",
                (self.store.room, table, after, PAGE),
            )
            if not rows:
                return
            for row in rows:
                yield int(row["seq"]), str(row["payload"])
            after = int(rows[-1]["seq"])

    def export(self, table: str, out: Path) -> int:
        """Write a table's stored events for `tablectl verify`; the count written."""
        verifier = self.verifier(table)
        import base64

        key = (
            f" public_key={base64.b64encode(verifier.pem().encode()).decode()}" if verifier else ""
        )
        count = 0
        with out.open("w", encoding="utf-8") as fh:
            fh.write(f"{EXPORT_HEADER} room={self.store.room} table={table}{key}\n")
            for _seq, text in self.stored(table):
                fh.write(text + "\n")
                count += 1
        return count


def readable(store: Store, table: str, hand: int) -> list[dict[str, Any]]:
    """The release notices of a hand, by seat then time: when each seat's hole cards
    became readable, and to whom."""
    rows = store.query(
        "SELECT payload FROM messages WHERE room = ? AND table_id = ? AND topic = 'released' "
        "AND (payload LIKE ? OR payload LIKE ?) ORDER BY id",
        (store.room, table, f'%"hand":{int(hand)},%', f'%"hand": {int(hand)},%'),
    )
    notices = [json.loads(r["payload"]) for r in rows]
    return sorted(
        (n for n in notices if n.get("hand") == hand),
        key=lambda n: (int(n.get("seat", 0)), float(n.get("t", 0.0))),
    )
