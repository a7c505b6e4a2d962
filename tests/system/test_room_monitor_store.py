"""The monitor's queries on both backends (SQLite, a real PostgreSQL): acknowledging a
table's alert (who and when, stored once), a database of schema version 1 migrated with its
alerts kept, each table's latest status and event, and the room view built from them."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import room.store
from room.config import DatabaseConfig, load_room_config
from room.deps import RoomContext
from room.pages import tiles
from room.schema import LATEST, MIGRATIONS
from room.store import Batch, Store, open_store
from tests.system.test_room_store import _event, _message

FLOOR = {
    "table": "t01",
    "type": "floor_called",
    "severity": "warning",
    "message": "floor to 3",
    "hand": 7,
    "t": 9.0,
    "seat": 3,
}
MISDEAL = {
    "table": "t02",
    "type": "procedure_required",
    "severity": "critical",
    "message": "Misdeal: collect every card",
    "hand": 2,
    "t": 4.0,
}


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    s = open_store(DatabaseConfig(url=database_url), "r1")
    yield s
    s.close()


def _alert_ids(store: Store) -> dict[str, int]:
    return {str(a["payload"]["type"]): int(a["id"]) for a in store.table_alerts()}


def test_acknowledging_an_alert_stores_who_and_when_once(store: Store) -> None:
    state = {"table": "t01", "seq": 3, "hand": 7}
    store.write(
        Batch(
            messages=[
                _message("t01", "alerts", FLOOR),
                _message("t02", "alerts", MISDEAL),
                _message("t01", "state", state),
            ]
        )
    )
    listed = store.table_alerts()
    assert [a["payload"]["type"] for a in listed] == ["procedure_required", "floor_called"]
    assert all(a["acknowledged_by"] is None for a in listed)
    ids = _alert_ids(store)
    before = time.time()
    done = store.acknowledge(ids["floor_called"], "Giulia Ferrari")
    assert done is not None and done["acknowledged_by"] == "Giulia Ferrari"
    assert before <= done["acknowledged_at"] <= time.time()
    again = store.acknowledge(ids["floor_called"], "Someone Else")
    assert again == done  # the first acknowledgement stands
    floor = store.table_alerts("t01")
    assert [(a["payload"]["type"], a["acknowledged_by"]) for a in floor] == [
        ("floor_called", "Giulia Ferrari")
    ]
    assert [a["table_id"] for a in store.table_alerts(kind="procedure_required")] == ["t02"]
    assert store.table_alerts("t02", "floor_called") == []
    state_id = store.query("SELECT id FROM messages WHERE topic = 'state'")[0]["id"]
    assert store.acknowledge(int(state_id), "Giulia Ferrari") is None  # not an alert
    assert store.acknowledge(999_999, "Giulia Ferrari") is None
    assert len(store.query("SELECT * FROM alert_acks")) == 1


def test_a_version_1_database_gets_acknowledgements_and_keeps_its_alerts(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = DatabaseConfig(url=database_url)
    with monkeypatch.context() as patch:
        patch.setattr(room.store, "MIGRATIONS", MIGRATIONS[:1])
        patch.setattr(room.store, "LATEST", 1)
        old = open_store(config, "r1")
        assert old.schema_version() == 1
        old.write(Batch(messages=[_message("t01", "alerts", FLOOR)]))
        old.close()
    new = open_store(config, "r1")
    try:
        assert new.schema_version() == LATEST == 2
        (alert,) = new.table_alerts()
        assert alert["payload"] == FLOOR and alert["acknowledged_by"] is None
        done = new.acknowledge(int(alert["id"]), "Luca")
        assert done is not None and done["acknowledged_by"] == "Luca"
    finally:
        new.close()


def test_latest_status_and_event_per_table_make_the_tiles(store: Store, tmp_path: Path) -> None:
    now = time.time()
    online = {"state": "online", "table": "t01", "heartbeat": 10, "t": now - 30}
    offline = {"state": "offline", "table": "t01", "t": now - 30}
    started = {"type": "hand_started", "seq": 1, "hand": 1, "t": 0.0, "table": "t01"}
    action = {"type": "action", "seq": 2, "hand": 1, "t": 1.0, "table": "t01"}
    store.write(
        Batch(events=[_event("t01", started)], messages=[_message("t01", "status", online)])
    )
    store.write(
        Batch(events=[_event("t01", action)], messages=[_message("t01", "status", offline)])
    )
    store.write(Batch(messages=[_message("t02", "status", {**online, "table": "t02", "t": now})]))
    statuses = store.latest_statuses()
    assert statuses["t01"]["payload"] == offline  # the last will came last
    assert statuses["t02"]["payload"]["state"] == "online"
    last = store.last_events()
    assert last["t01"]["type"] == "action" and "t02" not in last
    path = tmp_path / "room.toml"
    path.write_text(f'[room]\nname = "r1"\n\n[database]\nurl = "{store.config.url}"\n')
    config = load_room_config(path)
    shown = tiles(RoomContext(config, store), 1005.0)  # the helper's messages came at 1000.0
    assert [(t["table"], t["link"]) for t in shown] == [("t01", "offline"), ("t02", "online")]
    assert [b.kind for b in shown[0]["banners"]] == ["offline"]


def test_the_dealer_who_badged_in_as_the_first_hand_started_dealt_it(store: Store) -> None:
    """The demo's dealer taps the badge as hand 1 starts: hand 1 is hers, not a phantom
    "(no dealer badge)" dealer's; and a busted player is not counted on the tile."""
    from room.dealers import UNKNOWN
    from room.monitor import seated
    from room.summary import summarize
    from tests.system.test_room_store import _demo_messages

    messages = _demo_messages(3)
    store.write(
        Batch(
            events=[_event("t01", e) for topic, e in messages if topic == "events"],
            messages=[_message("t01", "state", p) for topic, p in messages if topic == "state"],
        )
    )
    changed = [e for topic, e in messages if topic == "events" and e["type"] == "dealer_changed"]
    assert changed and changed[0]["hand"] == 1  # badged in during hand 1
    rows = [summarize(store, "t01", n) for n in (1, 2, 3)]
    names = {r["dealer_name"] for r in rows if r is not None}
    assert names == {changed[0]["dealer"]["name"]} and UNKNOWN not in names
    state = {
        "seats": {
            "1": {"player": "Alice", "stack": 0, "status": "out"},
            "2": {"player": "Bruno", "stack": 900, "status": "waiting"},
            "3": {"player": None, "stack": 0, "status": "empty"},
        }
    }
    assert seated(state) == 1
