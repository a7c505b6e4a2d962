"""The room database on both backends: SQLite (a file) and a real PostgreSQL (private server)."""

from __future__ import annotations

import datetime
import hashlib
import json
import sqlite3
from typing import Any

import pytest

from controller.config import load_config
from controller.replay import build_engine, drive
from room.config import DatabaseConfig, StatsConfig
from room.schema import LATEST
from room.stats import table_stats
from room.store import Batch, EventRow, MessageRow, Store, StoreError, open_store
from room.summary import hand_phh, summarize
from sim.demo import demo_script
from tests.system.test_resend import EXAMPLE


def _event(table: str, payload: dict[str, Any], received_at: float = 1000.0) -> EventRow:
    text = json.dumps(payload, separators=(",", ":"))
    return EventRow(
        table,
        payload["seq"],
        payload.get("hand"),
        payload["type"],
        float(payload["t"]),
        received_at,
        hashlib.sha256(text.encode()).hexdigest()[:32],
        text,
    )


def _message(table: str, topic: str, payload: dict[str, Any]) -> MessageRow:
    text = json.dumps(payload, separators=(",", ":"))
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    return MessageRow(table, topic, digest, 1000.0, text, payload.get("seq"))


def _demo_messages(hands: int = 2) -> list[tuple[str, dict[str, Any]]]:
    config = load_config(EXAMPLE)
    engine = build_engine(config)
    script = demo_script(config, hands, 9)
    return [(m.topic, m.payload) for _e, ms in drive(engine, script) for m in ms]


@pytest.fixture
def store(database_url: str) -> Store:
    s = open_store(DatabaseConfig(url=database_url), "r1")
    yield s  # type: ignore[misc]
    s.close()


def test_schema_is_created_once_and_a_newer_database_is_refused(database_url: str) -> None:
    config = DatabaseConfig(url=database_url)
    first = open_store(config, "r1")
    assert first.schema_version() == LATEST
    second = open_store(config, "r1")  # migrating again changes nothing
    assert second.schema_version() == LATEST
    assert len(second.query("SELECT * FROM schema_version")) == LATEST
    with first._tx() as cur:  # a later server migrated this database
        cur.execute(first._sql("INSERT INTO schema_version VALUES (?, ?)"), (LATEST + 1, 0.0))
    with pytest.raises(StoreError, match=f"schema version {LATEST + 1}, newer"):
        open_store(config, "r1")
    first.close()
    second.close()


def test_an_event_is_stored_once_however_often_it_arrives(store: Store) -> None:
    events = [e for topic, e in _demo_messages(1) if topic == "events"]
    rows = [_event("t01", e) for e in events]
    result = store.write(Batch(events=rows + rows[:5]))  # copies inside the batch too
    assert sum(len(v) for v in result.new_events.values()) == len(rows)
    assert result.duplicates == 5
    again = store.write(Batch(events=rows))  # a whole redelivery
    assert again.new_events == {} and again.duplicates == len(rows)
    stored = store.query("SELECT seq, payload FROM events WHERE room = 'r1' ORDER BY seq")
    assert [r["seq"] for r in stored] == [e["seq"] for e in events]
    assert [r["payload"] for r in stored] == [r.payload for r in rows]  # the bytes as published
    assert store.event_counts() == {"rows": len(rows), "distinct": len(rows)}


def test_a_reused_seq_with_other_content_is_a_conflict_and_the_first_is_kept(
    store: Store,
) -> None:
    first = _event("t01", {"type": "tick", "seq": 1, "hand": None, "t": 1.0})
    other = _event("t01", {"type": "hand_started", "seq": 1, "hand": 1, "t": 9.0})
    store.write(Batch(events=[first]))
    result = store.write(Batch(events=[other]))
    assert result.conflicts == [other] and result.new_events == {}
    assert store.query("SELECT payload FROM events")[0]["payload"] == first.payload


def test_rooms_share_a_database_without_mixing(database_url: str) -> None:
    config = DatabaseConfig(url=database_url)
    a, b = open_store(config, "r1"), open_store(config, "r2")
    row = _event("t01", {"type": "x", "seq": 1, "hand": None, "t": 1.0})
    a.write(Batch(events=[row]))
    assert b.write(Batch(events=[row])).new_events == {"t01": [row]}  # another room's t01
    assert a.event_counts()["rows"] == 1 and b.event_counts()["rows"] == 1
    a.close()
    b.close()


def test_holes_are_found_from_the_rows(store: Store) -> None:
    seqs = (3, 4, 7, 8, 12)
    rows = [_event("t01", {"type": "x", "seq": s, "hand": None, "t": 1.0}) for s in seqs]
    rows.append(_event("t02", {"type": "x", "seq": 1, "hand": None, "t": 1.0}))
    store.write(Batch(events=rows))
    assert store.holes() == {"t01": (12, [(1, 2), (5, 6), (9, 11)]), "t02": (1, [])}


def test_other_topics_are_kept_once_per_distinct_payload(store: Store) -> None:
    online = _message("t01", "status", {"state": "online", "table": "t01", "t": 5.0})
    state = _message("t01", "state", {"table": "t01", "seq": 4, "hand": 1})
    store.write(Batch(messages=[online, state, online]))
    store.write(Batch(messages=[online]))
    rows = store.query("SELECT topic FROM messages ORDER BY id")
    assert [r["topic"] for r in rows] == ["status", "state"]
    table = store.tables()[0]
    assert table["status"] == "online" and json.loads(table["state"])["seq"] == 4


def test_hand_summary_and_phh_come_from_the_stored_events(store: Store) -> None:
    messages = _demo_messages(2)
    store.write(
        Batch(
            events=[_event("t01", e) for topic, e in messages if topic == "events"],
            messages=[_message("t01", "state", p) for topic, p in messages if topic == "state"],
        )
    )
    completed = [e for topic, e in messages if topic == "events" and e["type"] == "hand_completed"]
    assert [e["hand"] for e in completed] == [1, 2]
    for number in (1, 2):
        row = summarize(store, "t01", number)
        assert row is not None and row["completed_t"] is not None
        assert row["players"] == 9 and row["misdeals"] == 0 and row["rake"] == 0
        phh = hand_phh(store, "t01", number)
        assert phh is not None and phh.text is not None, phh
        assert "????" in phh.text  # the room never saw a hole card it was not shown
        assert dict(zip(phh.seats, phh.finishing_stacks, strict=True)) == {
            int(k): v for k, v in completed[number - 1]["stacks"].items() if int(k) in phh.seats
        }
    listed = store.hands("t01")
    assert [h["hand"] for h in listed] == [2, 1]


def test_campione_rake_is_summed_per_table_from_the_hands(store: Store) -> None:
    config = load_config(EXAMPLE, profile_override="campione")
    engine = build_engine(config)
    messages = [
        (m.topic, m.payload) for _e, ms in drive(engine, demo_script(config, 3, 9)) for m in ms
    ]
    events = [e for topic, e in messages if topic == "events"]
    store.write(Batch(events=[_event("t01", e) for e in events], messages=[]))
    completed = [e for e in events if e["type"] == "hand_completed"]
    raked = {e["hand"]: e["rake"] for e in completed}
    assert any(raked.values())  # a demo hand saw a flop and was raked
    for e in events:
        if e["type"] == "pot_awarded":
            assert sum(e["shares"].values()) == e["amount"] - e["rake"]
    rows = [summarize(store, "t01", hand) for hand in raked]
    assert {r["hand"]: r["rake"] for r in rows if r is not None} == raked
    stats = table_stats(StatsConfig(), [r | {"epoch": 0.0} for r in rows if r], by="all")
    assert [(s["table"], s["rake"]) for s in stats] == [("t01", sum(raked.values()))]


def test_sqlite_file_is_in_wal_mode(tmp_path: Any) -> None:
    path = tmp_path / "room.db"
    open_store(DatabaseConfig(url=f"sqlite:///{path}"), "r1").close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_the_rooms_phh_equals_the_tables_for_the_same_hand_however_late_it_arrived(
    store: Store, tmp_path: Any
) -> None:
    """The room writes a hand's file from the events it stored: the players' names and the
    time come from the hand itself (`hand_started`), so they are the table's even when the
    room received the hand hours later and never saw a `state`; only the hole cards it was
    not shown differ. No completed hand carries a phh_problem."""
    from controller.export_phh import table_hands
    from controller.journal import header_line, read_trace_file
    from controller.replay import drive_segments
    from controller.trace import event_to_json

    config = load_config(EXAMPLE)
    epoch = 1_790_000_000.25
    journal = tmp_path / "t01.journal"
    script = demo_script(config, 4, 9)
    journal.write_text(
        header_line(epoch, "t01") + "\n" + "".join(event_to_json(e) + "\n" for e in script)
    )
    tables = {h.hand: h for h in table_hands(config, journal)}
    engine = build_engine(config)
    published = [
        m.payload
        for step in drive_segments(engine, [read_trace_file(journal)])
        for m in step.published
        if m.topic == "events"
    ]
    late = 5 * 3600.0  # the room was cut off and got every event five hours late
    store.write(Batch(events=[_event("t01", e, epoch + e["t"] + late) for e in published]))
    assert sorted(tables) == [1, 2, 3, 4]
    for number, table in tables.items():
        row = summarize(store, "t01", number)
        assert row is not None and row["completed_t"] is not None
        assert row["phh_problem"] is None
        room = hand_phh(store, "t01", number)
        assert room is not None and room.text is not None and table.text is not None
        for key in ("players", "day", "month", "year", "time", "time_zone", "seats"):
            assert _field(room.text, key) == _field(table.text, key), key
        assert _field(room.text, "players") is not None
        start = next(e for e in published if e["type"] == "hand_started" and e["hand"] == number)
        assert start["started_at"] == round(epoch + start["t"], 6)
        when = datetime.datetime.fromtimestamp(epoch + start["t"], datetime.UTC)
        assert _field(table.text, "time") == when.time().replace(microsecond=0).isoformat()
        for key in ("starting_stacks", "finishing_stacks", "antes", "blinds_or_straddles"):
            assert _field(room.text, key) == _field(table.text, key), key
        played = [a for a in json.loads(str(_field(table.text, "actions"))) if "d dh" not in a]
        room_played = json.loads(str(_field(room.text, "actions")))
        assert [a for a in room_played if "d dh" not in a] == played


def _field(text: str, key: str) -> str | None:
    """A PHH file's field as written (its TOML text)."""
    for line in text.splitlines():
        name, _, value = line.partition(" = ")
        if name == key:
            return value
    return None
