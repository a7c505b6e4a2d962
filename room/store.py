"""The room database: SQLite (one file, WAL) or PostgreSQL (psycopg 3), the same SQL on both.

Every write is one transaction for a whole batch of messages (the ingest commits, then
acknowledges the batch to the broker). Events are keyed by (room, table, seq): a copy that
arrives again stores nothing; a copy whose bytes differ from the stored event is counted as
a conflict (the table reused a seq: the first one is kept). Other topics are kept once per
distinct payload. Each thread gets its own connection.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernel.errors import TableError
from room.config import DatabaseConfig
from room.gaps import GAP_MOVES
from room.schema import LATEST, MIGRATIONS

log = logging.getLogger("tablectl.room.store")

#: PostgreSQL advisory lock key held while migrating (several servers may start at once).
MIGRATION_LOCK = 0x7AB1EC71


class StoreError(TableError):
    """The room database could not be opened, migrated, read or written."""


@dataclass(frozen=True, slots=True)
class EventRow:
    """An event to store."""

    table: str
    seq: int
    hand: int | None
    type: str
    t: float
    received_at: float
    digest: str
    payload: str


@dataclass(frozen=True, slots=True)
class MessageRow:
    """A state, status, alert, reply or command to store (once per distinct payload)."""

    table: str
    topic: str
    digest: str
    received_at: float
    payload: str
    seq: int | None = None  # state: the seq it follows
    t: float | None = None


@dataclass(frozen=True, slots=True)
class RejectedRow:
    """Input that is not a storable message, kept whole (base64) with the reason."""

    topic: str
    received_at: float
    reason: str
    payload_b64: str


@dataclass(slots=True)
class Batch:
    """What one transaction writes."""

    events: list[EventRow] = field(default_factory=list)
    messages: list[MessageRow] = field(default_factory=list)
    rejected: list[RejectedRow] = field(default_factory=list)


@dataclass(slots=True)
class WriteResult:
    """What a batch changed: new event keys by table, copies, and reused seqs."""

    new_events: dict[str, list[EventRow]] = field(default_factory=dict)
    duplicates: int = 0
    conflicts: list[EventRow] = field(default_factory=list)
    new_messages: int = 0


def _event_values(r: EventRow) -> tuple[Any, ...]:
    """An event's column values after the room (table_id ... payload)."""
    return (r.table, r.seq, r.hand, r.type, r.t, r.received_at, r.digest, r.payload)


def _rows(cursor: Any) -> list[dict[str, Any]]:
    names = [d[0] for d in cursor.description or ()]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


class Store:
    """The room's rows, in SQLite or PostgreSQL, for one room (`room`)."""

    def __init__(self, config: DatabaseConfig, room: str) -> None:
        self.config = config
        self.room = room
        self.postgres = config.is_postgres
        self._local = threading.local()
        self._all: list[Any] = []
        self._lock = threading.Lock()
        if not self.postgres:
            path = config.sqlite_path
            try:
                if str(path) != ":memory:":
                    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                    private_files(path)
            except OSError as exc:
                raise StoreError(f"{path}: {exc.strerror or exc}") from exc

    # -- connections ------------------------------------------------------------------

    def _connect(self) -> Any:
        if self.postgres:
            try:
                import psycopg
            except ImportError as exc:  # pragma: no cover - installed with the room extra
                raise StoreError("PostgreSQL needs psycopg: pip install '.[room]'") from exc
            try:
                return psycopg.connect(self.config.url, autocommit=True)
            except psycopg.Error as exc:
                raise StoreError(f"PostgreSQL: {exc}") from exc
        try:
            conn = sqlite3.connect(
                self.config.sqlite_path, timeout=60, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA busy_timeout=60000")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.config.sqlite_path}: {exc}") from exc
        return conn

    def _conn(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _sql(self, text: str) -> str:
        return text.replace("?", "%s") if self.postgres else text

    @contextlib.contextmanager
    def _tx(self) -> Iterator[Any]:
        """A transaction on this thread's connection; yields a cursor."""
        conn = self._conn()
        errors = self._errors()
        try:
            if self.postgres:
                with conn.transaction(), conn.cursor() as cur:
                    yield cur
            else:
                cur = conn.cursor()
                cur.execute("BEGIN IMMEDIATE")
                try:
                    yield cur
                except BaseException:
                    cur.execute("ROLLBACK")
                    raise
                cur.execute("COMMIT")
        except errors as exc:
            self._drop_connection()
            raise StoreError(f"database: {exc}") from exc

    def _errors(self) -> tuple[type[BaseException], ...]:
        if self.postgres:
            import psycopg

            return (psycopg.Error,)
        return (sqlite3.Error,)

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def query(self, text: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of a read-only query, as dicts."""
        conn = self._conn()
        try:
            cur = conn.cursor()
            try:
                cur.execute(self._sql(text), tuple(params))
                return _rows(cur)
            finally:
                cur.close()
        except self._errors() as exc:
            self._drop_connection()
            raise StoreError(f"database: {exc}") from exc

    def close(self) -> None:
        """Close every connection this store opened."""
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            with contextlib.suppress(Exception):
                conn.close()
        self._local = threading.local()

    # -- schema -----------------------------------------------------------------------

    def migrate(self) -> int:
        """Create or upgrade the schema; return the version now in force."""
        ident = "BIGSERIAL PRIMARY KEY" if self.postgres else "INTEGER PRIMARY KEY AUTOINCREMENT"
        with self._tx() as cur:
            if self.postgres:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            cur.execute(
                "CREATE TABLE IF NOT EXISTS schema_version ("
                "version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
            )
            cur.execute("SELECT MAX(version) FROM schema_version")
            row = cur.fetchone()
            have = int(row[0]) if row and row[0] is not None else 0
            if have > LATEST:
                raise StoreError(
                    f"the database is at schema version {have}, newer than this server's "
                    f"{LATEST}: upgrade the server"
                )
            for version, statements in MIGRATIONS:
                if version <= have:
                    continue
                for statement in statements:
                    cur.execute(statement.replace("{id}", ident))
                cur.execute(
                    self._sql("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)"),
                    (version, time.time()),
                )
                log.info("room database migrated to schema version %d", version)
        return LATEST

    def schema_version(self) -> int:
        """The schema version of the database (0: none yet)."""
        rows = self.query("SELECT MAX(version) AS v FROM schema_version")
        return int(rows[0]["v"] or 0)

    # -- writing ----------------------------------------------------------------------

    def write(self, batch: Batch) -> WriteResult:
        """Store a batch in one transaction."""
        result = WriteResult()
        with self._tx() as cur:
            self._write_events(cur, batch.events, result)
            self._write_messages(cur, batch.messages, result)
            if batch.rejected:
                cur.executemany(
                    self._sql(
                        "INSERT INTO rejected (room, topic, received_at, reason, payload_b64) "
                        "VALUES (?, ?, ?, ?, ?)"
                    ),
                    [
                        (self.room, r.topic, r.received_at, r.reason, r.payload_b64)
                        for r in batch.rejected
                    ],
                )
            self._touch_tables(cur, batch)
        return result

    def _write_events(self, cur: Any, events: list[EventRow], result: WriteResult) -> None:
        by_table: dict[str, dict[int, EventRow]] = {}
        for row in events:
            seen = by_table.setdefault(row.table, {})
            first = seen.get(row.seq)
            if first is None:
                seen[row.seq] = row
            elif first.digest == row.digest:
                result.duplicates += 1
            else:
                result.conflicts.append(row)
        if self.postgres:
            self._insert_events_pg(cur, by_table, result)
            return
        fresh: list[EventRow] = []
        for table, rows in by_table.items():
            low, high = min(rows), max(rows)
            cur.execute(
                self._sql(
                    "SELECT seq, digest FROM events WHERE room = ? AND table_id = ? "
                    "AND seq BETWEEN ? AND ?"
                ),
                (self.room, table, low, high),
            )
            stored = {int(seq): digest for seq, digest in cur.fetchall()}
            for seq, row in rows.items():
                if seq not in stored:
                    fresh.append(row)
                    result.new_events.setdefault(table, []).append(row)
                elif stored[seq] == row.digest:
                    result.duplicates += 1
                else:
                    result.conflicts.append(row)
        if fresh:
            cur.executemany(
                self._sql(
                    "INSERT INTO events (room, table_id, seq, hand, type, t, received_at, digest, "
                    "payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
                ),
                [(self.room, *_event_values(r)) for r in fresh],
            )

    def _insert_events_pg(
        self, cur: Any, by_table: dict[str, dict[int, EventRow]], result: WriteResult
    ) -> None:
        """PostgreSQL: the whole batch in one statement (arrays, unnest), the rows it did
        not insert (already there) looked up in one more: two round trips a batch."""
        rows = [row for seqs in by_table.values() for row in seqs.values()]
        if not rows:
            return
        columns = list(zip(*(_event_values(r) for r in rows), strict=True))
        cur.execute(
            "INSERT INTO events (room, table_id, seq, hand, type, t, received_at, digest, "
            "payload) SELECT %s, * FROM unnest(%s::text[], %s::bigint[], %s::bigint[], "
            "%s::text[], %s::float8[], %s::float8[], %s::text[], %s::text[]) "
            "ON CONFLICT DO NOTHING RETURNING table_id, seq",
            (self.room, *(list(c) for c in columns)),
        )
        inserted = {(str(t), int(s)) for t, s in cur.fetchall()}
        existing = [r for r in rows if (r.table, r.seq) not in inserted]
        for row in rows:
            if (row.table, row.seq) in inserted:
                result.new_events.setdefault(row.table, []).append(row)
        if existing:
            cur.execute(
                "SELECT e.table_id, e.seq, e.digest FROM events e JOIN unnest(%s::text[], "
                "%s::bigint[]) AS k(table_id, seq) ON e.table_id = k.table_id AND e.seq = k.seq "
                "WHERE e.room = %s",
                ([r.table for r in existing], [r.seq for r in existing], self.room),
            )
            stored = {(str(t), int(s)): d for t, s, d in cur.fetchall()}
            for row in existing:
                if stored.get((row.table, row.seq)) == row.digest:
                    result.duplicates += 1
                else:
                    result.conflicts.append(row)

    def _write_messages(self, cur: Any, messages: list[MessageRow], result: WriteResult) -> None:
        if not messages:
            return
        unique = {(m.table, m.topic, m.digest): m for m in messages}
        cur.executemany(
            self._sql(
                "INSERT INTO messages (room, table_id, topic, digest, received_at, payload) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
            ),
            [
                (self.room, m.table, m.topic, m.digest, m.received_at, m.payload)
                for m in unique.values()
            ],
        )
        result.new_messages += len(unique)

    def _touch_tables(self, cur: Any, batch: Batch) -> None:
        """Keep one row per table: last seen, epoch estimate, status, state, max seq."""
        info: dict[str, dict[str, Any]] = {}
        for e in batch.events:
            d = info.setdefault(e.table, {"seen": e.received_at, "epoch": None, "max": 0})
            d["seen"] = max(d["seen"], e.received_at)
            d["max"] = max(d["max"], e.seq)
            estimate = e.received_at - e.t
            d["epoch"] = estimate if d["epoch"] is None else min(d["epoch"], estimate)
        for m in batch.messages:
            if m.topic.startswith("cmd/"):  # the room's own command: no table said anything
                continue
            d = info.setdefault(m.table, {"seen": m.received_at, "epoch": None, "max": 0})
            d["seen"] = max(d["seen"], m.received_at)
            if m.topic == "status":
                d["status"] = m
            elif m.topic == "state":
                d["state"] = m
        upserts, statuses, states = [], [], []
        for table, d in sorted(info.items()):  # one order: concurrent writers never deadlock
            upserts.append((self.room, table, d["seen"], d["seen"], d["epoch"], d["max"]))
            status = d.get("status")
            if status is not None:
                state = json.loads(status.payload).get("state")
                statuses.append((str(state), status.received_at, self.room, table))
            snap = d.get("state")
            if snap is not None:
                states.append((snap.payload, snap.seq, self.room, table, snap.seq or 0))
        # executemany: one round trip for all (psycopg's pipeline), in-process for SQLite
        if upserts:
            cur.executemany(
                self._sql(
                    "INSERT INTO tables (room, table_id, first_seen, last_seen, epoch, max_seq) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (room, table_id) DO UPDATE SET "
                    "last_seen = CASE WHEN excluded.last_seen > tables.last_seen "
                    "THEN excluded.last_seen ELSE tables.last_seen END, "
                    "epoch = CASE WHEN tables.epoch IS NULL OR (excluded.epoch IS NOT NULL "
                    "AND excluded.epoch < tables.epoch) THEN excluded.epoch ELSE tables.epoch END, "
                    "max_seq = CASE WHEN excluded.max_seq > tables.max_seq "
                    "THEN excluded.max_seq ELSE tables.max_seq END"
                ),
                upserts,
            )
        if statuses:
            cur.executemany(
                self._sql(
                    "UPDATE tables SET status = ?, status_at = ? WHERE room = ? AND table_id = ?"
                ),
                statuses,
            )
        if states:
            cur.executemany(
                self._sql(
                    "UPDATE tables SET state = ?, state_seq = ? WHERE room = ? "
                    "AND table_id = ? AND (state_seq IS NULL OR state_seq <= ?)"
                ),
                states,
            )

    def put_hand(self, row: dict[str, Any]) -> None:
        """Insert or replace one hand's summary row (room/summary.py computes it)."""
        columns = [
            "room",
            "table_id",
            "hand",
            "first_seq",
            "last_seq",
            "started_t",
            "completed_t",
            "dealer_uid",
            "dealer_name",
            "players",
            "misdeals",
            "four_card_flops",
            "premature_cards",
            "pot",
            "rake",
            "phh_problem",
        ]
        values = [self.room if c == "room" else row.get(c) for c in columns]
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns[3:])
        with self._tx() as cur:
            cur.execute(
                self._sql(
                    f"INSERT INTO hands ({', '.join(columns)}) VALUES "
                    f"({', '.join('?' * len(columns))}) "
                    f"ON CONFLICT (room, table_id, hand) DO UPDATE SET {updates}"
                ),
                values,
            )

    def add_room_alert(self, table: str | None, kind: str, severity: str, message: str) -> None:
        """Record something the room server noticed."""
        with self._tx() as cur:
            cur.execute(
                self._sql(
                    "INSERT INTO room_alerts (room, table_id, type, severity, message, at) "
                    "VALUES (?, ?, ?, ?, ?, ?)"
                ),
                (self.room, table, kind, severity, message, time.time()),
            )

    def acknowledge(self, alert_id: int, by: str) -> dict[str, Any] | None:
        """Record who acknowledged a table's alert, once (the first acknowledgement stands);
        the acknowledgement in force, or None if there is no such alert."""
        with self._tx() as cur:
            cur.execute(
                self._sql("SELECT id FROM messages WHERE room = ? AND id = ? AND topic = 'alerts'"),
                (self.room, alert_id),
            )
            if cur.fetchone() is None:
                return None
            cur.execute(
                self._sql(
                    "INSERT INTO alert_acks (room, alert_id, acknowledged_by, acknowledged_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
                ),
                (self.room, alert_id, by, time.time()),
            )
            cur.execute(
                self._sql(
                    "SELECT acknowledged_by, acknowledged_at FROM alert_acks "
                    "WHERE room = ? AND alert_id = ?"
                ),
                (self.room, alert_id),
            )
            row = cur.fetchone()
        return {"id": alert_id, "acknowledged_by": row[0], "acknowledged_at": row[1]}

    def open_gap(self, table: str, first: int, last: int) -> int:
        """Record a hole found; its id."""
        with self._tx() as cur:
            cur.execute(
                self._sql(
                    "INSERT INTO gaps (room, table_id, first_seq, last_seq, status, found_at) "
                    "VALUES (?, ?, ?, ?, 'open', ?)"
                ),
                (self.room, table, first, last, time.time()),
            )
            cur.execute(
                self._sql(
                    "SELECT MAX(id) FROM gaps WHERE room = ? AND table_id = ? AND first_seq = ?"
                ),
                (self.room, table, first),
            )
            row = cur.fetchone()
            return int(row[0])

    def update_gap(self, gap_id: int, **fields: Any) -> bool:
        """Change a gap's status, asked_at, tries, closed_at, reason, last_seq; whether it
        changed.

        A new `status` is compare-and-set (`room.gaps.GAP_MOVES`): written only while the
        row still has a status it may replace, in the same statement, so two writers (the
        ingest thread healing, the heal loop asking) can never put an older state over a
        newer one. A change refused leaves the row whole.
        """
        allowed = {"status", "asked_at", "tries", "closed_at", "reason", "last_seq", "first_seq"}
        keys = [k for k in fields if k in allowed]
        if not keys:
            return False
        where = "id = ?"
        params: list[Any] = [*(fields[k] for k in keys), gap_id]
        if "status" in fields:
            before = GAP_MOVES.get(str(fields["status"]))
            if before is None:
                raise StoreError(f"a gap cannot be set to status {fields['status']!r}")
            where += f" AND status IN ({', '.join('?' for _ in before)})"
            params.extend(before)
        with self._tx() as cur:
            cur.execute(
                self._sql(f"UPDATE gaps SET {', '.join(f'{k} = ?' for k in keys)} WHERE {where}"),
                params,
            )
            return bool(cur.rowcount)

    # -- reading ----------------------------------------------------------------------

    def holes(self) -> dict[str, tuple[int, list[tuple[int, int]]]]:
        """For every table: its highest stored seq and the holes below it."""
        out: dict[str, tuple[int, list[tuple[int, int]]]] = {}
        for row in self.query(
            "SELECT table_id, MIN(seq) AS low, MAX(seq) AS high FROM events WHERE room = ? "
            "GROUP BY table_id",
            (self.room,),
        ):
            holes = [(1, int(row["low"]) - 1)] if int(row["low"]) > 1 else []
            out[str(row["table_id"])] = (int(row["high"]), holes)
        for row in self.query(
            "SELECT table_id, seq + 1 AS first, next_seq - 1 AS last FROM ("
            "SELECT table_id, seq, LEAD(seq) OVER (PARTITION BY table_id ORDER BY seq) AS next_seq "
            "FROM events WHERE room = ?) s WHERE next_seq > seq + 1",
            (self.room,),
        ):
            out[str(row["table_id"])][1].append((int(row["first"]), int(row["last"])))
        return out

    def lost_ranges(self) -> dict[str, list[tuple[int, int]]]:
        """Ranges a table said it no longer has (not asked for again)."""
        out: dict[str, list[tuple[int, int]]] = {}
        for row in self.query(
            "SELECT table_id, first_seq, last_seq FROM gaps WHERE room = ? AND status = 'lost'",
            (self.room,),
        ):
            out.setdefault(str(row["table_id"]), []).append(
                (int(row["first_seq"]), int(row["last_seq"]))
            )
        return out

    def tables(self) -> list[dict[str, Any]]:
        """Every table of the room, with its latest status and state."""
        return self.query(
            "SELECT t.table_id, t.first_seen, t.last_seen, t.epoch, t.status, t.status_at, "
            "t.state, t.max_seq, (SELECT COUNT(*) FROM gaps g WHERE "
            "g.room = t.room AND g.table_id = t.table_id AND g.status IN ('open', 'asked')) "
            "AS open_gaps FROM tables t WHERE t.room = ? ORDER BY t.table_id",
            (self.room,),
        )

    def hands(
        self, table: str | None = None, limit: int = 100, before: int | None = None
    ) -> list[dict[str, Any]]:
        """Hands, newest first (of one table, or of every table)."""
        where = ["room = ?"]
        params: list[Any] = [self.room]
        if table is not None:
            where.append("table_id = ?")
            params.append(table)
        if before is not None:
            where.append("hand < ?")
            params.append(before)
        params.append(limit)
        return self.query(
            f"SELECT * FROM hands WHERE {' AND '.join(where)} "
            "ORDER BY started_t DESC, hand DESC LIMIT ?",
            params,
        )

    def hand(self, table: str, hand: int) -> dict[str, Any] | None:
        """One hand's summary row."""
        rows = self.query(
            "SELECT * FROM hands WHERE room = ? AND table_id = ? AND hand = ?",
            (self.room, table, hand),
        )
        return rows[0] if rows else None

    def hand_events(self, table: str, hand: int) -> list[dict[str, Any]]:
        """A hand's events in seq order, as stored (payload text)."""
        return self.query(
            "SELECT seq, type, t, received_at, payload FROM events WHERE room = ? AND "
            "table_id = ? AND hand = ? ORDER BY seq",
            (self.room, table, hand),
        )

    def events_of_type(
        self, table: str, kind: str, before_seq: int | None = None, limit: int = 1
    ) -> list[dict[str, Any]]:
        """The latest events of a type at a table (before a seq), newest first."""
        params: list[Any] = [self.room, table, kind]
        extra = ""
        if before_seq is not None:
            extra = " AND seq < ?"
            params.append(before_seq)
        params.append(limit)
        return self.query(
            "SELECT seq, t, payload FROM events WHERE room = ? AND table_id = ? AND type = ?"
            f"{extra} ORDER BY seq DESC LIMIT ?",
            params,
        )

    def latest_state_before(self, table: str, seq: int) -> dict[str, Any] | None:
        """The stored `state` with the highest seq not after `seq` (player names)."""
        rows = self.query(
            "SELECT payload FROM messages WHERE room = ? AND table_id = ? AND topic = 'state' "
            "ORDER BY id DESC LIMIT 200",
            (self.room, table),
        )
        best: dict[str, Any] | None = None
        for row in rows:
            state = json.loads(row["payload"])
            s = state.get("seq")
            if isinstance(s, int) and s <= seq and (best is None or s > best.get("seq", -1)):
                best = state
        return best

    def completed_hands(self, since_t: float | None = None) -> list[dict[str, Any]]:
        """Completed hands with their table's epoch (wall time = epoch + t), oldest first."""
        return self.query(
            "SELECT h.*, t.epoch FROM hands h JOIN tables t ON t.room = h.room AND "
            "t.table_id = h.table_id WHERE h.room = ? AND h.completed_t IS NOT NULL "
            "ORDER BY h.table_id, h.started_t",
            (self.room,),
        )

    def room_alerts(self, limit: int = 100) -> list[dict[str, Any]]:
        """The room server's own alerts, newest first."""
        return self.query(
            "SELECT id, table_id, type, severity, message, at FROM room_alerts WHERE room = ? "
            "ORDER BY id DESC LIMIT ?",
            (self.room, limit),
        )

    def gaps(self, table: str | None = None) -> list[dict[str, Any]]:
        """Every hole recorded, newest first."""
        if table is None:
            return self.query("SELECT * FROM gaps WHERE room = ? ORDER BY id DESC", (self.room,))
        return self.query(
            "SELECT * FROM gaps WHERE room = ? AND table_id = ? ORDER BY id DESC",
            (self.room, table),
        )

    def messages(self, table: str, topic: str, limit: int = 100) -> list[dict[str, Any]]:
        """Stored messages of one topic at a table, newest first."""
        return self.query(
            "SELECT id, received_at, payload FROM messages WHERE room = ? AND table_id = ? AND "
            "topic = ? ORDER BY id DESC LIMIT ?",
            (self.room, table, topic, limit),
        )

    def table_alerts(
        self, table: str | None = None, kind: str | None = None, limit: int = 200
    ) -> list[dict[str, Any]]:
        """The tables' alerts (topic `alerts`), newest first, each with who acknowledged it
        and when (None: not yet)."""
        where = ["m.room = ?", "m.topic = 'alerts'"]
        params: list[Any] = [self.room]
        if table is not None:
            where.append("m.table_id = ?")
            params.append(table)
        rows = self.query(
            "SELECT m.id, m.table_id, m.received_at, m.payload, a.acknowledged_by, "
            "a.acknowledged_at FROM messages m LEFT JOIN alert_acks a ON a.room = m.room "
            f"AND a.alert_id = m.id WHERE {' AND '.join(where)} ORDER BY m.id DESC LIMIT ?",
            [*params, limit if kind is None else max(limit * 20, 2000)],
        )
        out = []
        for row in rows:
            payload = json.loads(row["payload"])
            if kind is not None and payload.get("type") != kind:
                continue
            out.append({**row, "payload": payload})
        return out[:limit]

    def latest_statuses(self) -> dict[str, dict[str, Any]]:
        """Every table's latest stored `status` message: its payload and arrival time."""
        rows = self.query(
            "SELECT m.table_id, m.received_at, m.payload FROM messages m WHERE m.room = ? AND "
            "m.topic = 'status' AND m.id = (SELECT MAX(n.id) FROM messages n WHERE "
            "n.room = m.room AND n.table_id = m.table_id AND n.topic = 'status')",
            (self.room,),
        )
        return {
            str(r["table_id"]): {
                "received_at": r["received_at"],
                "payload": json.loads(r["payload"]),
            }
            for r in rows
        }

    def last_events(self) -> dict[str, dict[str, Any]]:
        """Every table's latest stored event: its type, `hand`, `t` and arrival time."""
        rows = self.query(
            "SELECT e.table_id, e.type, e.hand, e.t, e.received_at FROM events e JOIN tables t "
            "ON e.room = t.room AND e.table_id = t.table_id AND e.seq = t.max_seq "
            "WHERE t.room = ?",
            (self.room,),
        )
        return {str(r["table_id"]): r for r in rows}

    def event_counts(self) -> dict[str, int]:
        """Rows and distinct keys of the events table (a duplicate check for benchmarks)."""
        rows = self.query(
            "SELECT COUNT(*) AS n, COUNT(DISTINCT table_id || '/' || CAST(seq AS TEXT)) AS d "
            "FROM events WHERE room = ?",
            (self.room,),
        )
        return {"rows": int(rows[0]["n"]), "distinct": int(rows[0]["d"])}


#: SQLite's files beside the database (write-ahead log, shared memory, rollback journal).
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def private_files(path: Path) -> None:
    """The SQLite database `path` readable by its owner only, whatever the umask: created
    0600 if missing, group and other rights taken from it and its side files (SQLite makes
    those with the database's own mode). It holds staff badge uids and every event."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.fchmod(fd, os.fstat(fd).st_mode & 0o700)
    finally:
        os.close(fd)
    for suffix in SQLITE_SIDE_FILES:
        side = path.with_name(path.name + suffix)
        with contextlib.suppress(FileNotFoundError):
            side.chmod(side.stat().st_mode & 0o700)


def open_store(config: DatabaseConfig, room: str, *, migrate: bool = True) -> Store:
    """A store for `room`, its schema created or upgraded."""
    store = Store(config, room)
    if migrate:
        store.migrate()
    return store


def sqlite_url(path: Path) -> str:
    """The database URL of a SQLite file."""
    return f"sqlite:///{path}"
