"""The room database's schema, as numbered migrations applied in order (SQLite and PostgreSQL).

`schema_version` holds one row per migration applied. A server applies the ones its
database lacks at start (several servers on one PostgreSQL take turns under an advisory
lock) and refuses a database newer than itself. Column types are chosen to mean the same in
both: TEXT, BIGINT, DOUBLE PRECISION; `{id}` is an auto-increment key.
"""

from __future__ import annotations

#: (version, statements): never edit one that was released; add the next.
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            # One row per table seen: its last status and state, and the seq reached.
            """CREATE TABLE tables (
                room TEXT NOT NULL,
                table_id TEXT NOT NULL,
                first_seen DOUBLE PRECISION NOT NULL,
                last_seen DOUBLE PRECISION NOT NULL,
                epoch DOUBLE PRECISION,
                status TEXT,
                status_at DOUBLE PRECISION,
                state TEXT,
                state_seq BIGINT,
                max_seq BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (room, table_id))""",
            # Every event, once: the key is (room, table, seq).
            """CREATE TABLE events (
                room TEXT NOT NULL,
                table_id TEXT NOT NULL,
                seq BIGINT NOT NULL,
                hand BIGINT,
                type TEXT NOT NULL,
                t DOUBLE PRECISION NOT NULL,
                received_at DOUBLE PRECISION NOT NULL,
                digest TEXT NOT NULL,
                payload TEXT NOT NULL,
                PRIMARY KEY (room, table_id, seq))""",
            "CREATE INDEX events_by_hand ON events (room, table_id, hand, seq)",
            "CREATE INDEX events_by_type ON events (room, table_id, type, seq)",
            # state, status, alerts, replies and the room's commands: each distinct payload
            # of a topic once (a redelivered copy is the same bytes).
            """CREATE TABLE messages (
                id {id},
                room TEXT NOT NULL,
                table_id TEXT NOT NULL,
                topic TEXT NOT NULL,
                digest TEXT NOT NULL,
                received_at DOUBLE PRECISION NOT NULL,
                payload TEXT NOT NULL,
                UNIQUE (room, table_id, topic, digest))""",
            "CREATE INDEX messages_by_topic ON messages (room, table_id, topic, id)",
            # One row per hand, kept up to date from its events (listing and statistics).
            """CREATE TABLE hands (
                room TEXT NOT NULL,
                table_id TEXT NOT NULL,
                hand BIGINT NOT NULL,
                first_seq BIGINT NOT NULL,
                last_seq BIGINT,
                started_t DOUBLE PRECISION NOT NULL,
                completed_t DOUBLE PRECISION,
                dealer_uid TEXT,
                dealer_name TEXT,
                players INTEGER NOT NULL DEFAULT 0,
                misdeals INTEGER NOT NULL DEFAULT 0,
                four_card_flops INTEGER NOT NULL DEFAULT 0,
                premature_cards INTEGER NOT NULL DEFAULT 0,
                pot BIGINT NOT NULL DEFAULT 0,
                rake BIGINT NOT NULL DEFAULT 0,
                phh_problem TEXT,
                PRIMARY KEY (room, table_id, hand))""",
            # Holes in a table's seq: found, asked for (resend), healed or lost for good.
            """CREATE TABLE gaps (
                id {id},
                room TEXT NOT NULL,
                table_id TEXT NOT NULL,
                first_seq BIGINT NOT NULL,
                last_seq BIGINT NOT NULL,
                status TEXT NOT NULL,
                found_at DOUBLE PRECISION NOT NULL,
                asked_at DOUBLE PRECISION,
                tries INTEGER NOT NULL DEFAULT 0,
                closed_at DOUBLE PRECISION,
                reason TEXT)""",
            "CREATE INDEX gaps_by_table ON gaps (room, table_id, status)",
            # What the room server itself noticed (gaps, lost events, bad input).
            """CREATE TABLE room_alerts (
                id {id},
                room TEXT NOT NULL,
                table_id TEXT,
                type TEXT NOT NULL,
                severity TEXT NOT NULL,
                message TEXT NOT NULL,
                at DOUBLE PRECISION NOT NULL)""",
            # Input that could not be stored as a message (not JSON, no seq ...), kept whole.
            """CREATE TABLE rejected (
                id {id},
                room TEXT NOT NULL,
                topic TEXT NOT NULL,
                received_at DOUBLE PRECISION NOT NULL,
                reason TEXT NOT NULL,
                payload_b64 TEXT NOT NULL)""",
        ),
    ),
    (
        2,
        (
            # Who acknowledged a table's alert (a `messages` row of topic `alerts`) and when:
            # the monitor's alerts feed (docs/room.md, *The monitor*).
            """CREATE TABLE alert_acks (
                room TEXT NOT NULL,
                alert_id BIGINT NOT NULL,
                acknowledged_by TEXT NOT NULL,
                acknowledged_at DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (room, alert_id))""",
        ),
    ),
)

LATEST = MIGRATIONS[-1][0]
