"""Holes in a table's seq: found, raised as an alert, asked for with `resend`, healed or lost."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from room.config import load_room_config
from room.gaps import GapTracker
from room.server import RoomServer
from tests.broker import Mosquitto, Subscriber
from tests.room_helpers import write_room_config
from tests.table_rig import poll

pytestmark = pytest.mark.timeout(120)

PREFIX = "poker/test/tx"


def _event(seq: int) -> bytes:
    return json.dumps(
        {"type": "tick", "seq": seq, "hand": None, "t": float(seq), "table": "tx"},
        separators=(",", ":"),
    ).encode()


class FakeTable:
    """Plays a table on the broker: publishes events, answers `resend` as told."""

    def __init__(self, broker: Mosquitto, have: set[int] | None = None) -> None:
        self.have = have  # None: every seq asked for is there
        self.asked: list[dict[str, Any]] = []
        self.client = Subscriber(broker, f"{PREFIX}/cmd/#")

    def publish(self, *seqs: int) -> None:
        for seq in seqs:
            self.client.publish(f"{PREFIX}/events", _event(seq))

    def answer(self) -> None:
        """Answer every resend not answered yet."""
        for message in self.client.messages()[len(self.asked) :]:
            ask = json.loads(message.payload)
            self.asked.append(ask)
            wanted = range(ask["from_seq"], ask["to_seq"] + 1)
            sent = [s for s in wanted if self.have is None or s in self.have]
            self.publish(*sent)
            missing = [s for s in wanted if s not in sent]
            reply: dict[str, Any] = {
                "table": "tx",
                "id": ask["id"],
                "command": "resend",
                "ok": not missing,
                "error": None if not missing else "no longer in the journal",
                "t": 1.0,
                "resent": len(sent),
                "last_seq": 10,
            }
            if missing:
                reply["missing"] = [[min(missing), max(missing)]]
            self.client.publish(f"{PREFIX}/replies", json.dumps(reply).encode())

    def close(self) -> None:
        self.client.close()


@pytest.fixture
def server(tmp_path: Path, mosquitto: Mosquitto) -> Iterator[RoomServer]:
    path = write_room_config(tmp_path / "room.toml", mosquitto, f"sqlite:///{tmp_path}/r.db")
    room = RoomServer(load_room_config(path))
    room.start()
    assert room.ingest.connected.wait(10)
    yield room
    room.stop()


def _seqs(room: RoomServer) -> list[int]:
    return [r["seq"] for r in room.store.query("SELECT seq FROM events ORDER BY seq")]


def test_a_hole_is_asked_for_and_healed(server: RoomServer, mosquitto: Mosquitto) -> None:
    table = FakeTable(mosquitto)
    try:
        table.publish(1, 2, 5, 6)  # 3 and 4 never reached the broker
        assert poll(lambda: len(table.client.messages()) >= 1, 15), "no resend asked"
        ask = json.loads(table.client.messages()[0].payload)
        assert (ask["from_seq"], ask["to_seq"]) == (3, 4)
        table.answer()
        assert poll(lambda: _seqs(server) == [1, 2, 3, 4, 5, 6], 15)
        assert poll(lambda: server.store.gaps()[0]["status"] == "healed", 10)
        kinds = [a["type"] for a in server.store.room_alerts()]
        assert "seq_gap" in kinds and "gap_healed" in kinds
    finally:
        table.close()


def test_missing_events_at_the_end_are_found_from_the_state_seq(
    server: RoomServer, mosquitto: Mosquitto
) -> None:
    table = FakeTable(mosquitto)
    try:
        table.publish(1, 2)
        state = {"table": "tx", "seq": 4, "hand": None, "t": 4.0}
        table.client.publish(f"{PREFIX}/state", json.dumps(state).encode())  # 3, 4 lost
        assert poll(lambda: len(table.client.messages()) >= 1, 15)
        table.answer()
        assert poll(lambda: _seqs(server) == [1, 2, 3, 4], 15)
    finally:
        table.close()


def test_events_the_table_no_longer_has_are_recorded_lost(
    server: RoomServer, mosquitto: Mosquitto
) -> None:
    table = FakeTable(mosquitto, have={1, 2, 3, 4, 7, 8, 9})
    try:
        table.publish(4, 9)  # a room seeing the table for the first time: history from 1
        assert poll(lambda: len(table.client.messages()) >= 2, 15)
        table.answer()
        assert poll(lambda: _seqs(server) == [1, 2, 3, 4, 7, 8, 9], 15)
        def lost_alerts() -> list[dict[str, Any]]:
            return [a for a in server.store.room_alerts() if a["type"] == "events_lost"]

        assert poll(lambda: bool(lost_alerts()), 10)  # raised once the lost range is recorded
        gaps = server.store.gaps()
        assert (5, 6) in [(g["first_seq"], g["last_seq"]) for g in gaps if g["status"] == "lost"]
        alerts = lost_alerts()
        assert alerts and alerts[0]["severity"] == "critical" and "5..6" in alerts[0]["message"]
        asked = len(table.client.messages())
        server.ingest.heal_now()  # nothing left to ask: lost is lost
        assert len(table.client.messages()) == asked
    finally:
        table.close()


def test_bad_input_is_kept_whole_and_counted(server: RoomServer, mosquitto: Mosquitto) -> None:
    table = FakeTable(mosquitto)
    try:
        table.client.publish(f"{PREFIX}/events", b"not json")
        table.client.publish(f"{PREFIX}/events", b'{"type":"x","seq":"one","t":1}')
        table.publish(1)
        assert poll(lambda: _seqs(server) == [1], 10)
        rejected = server.store.query("SELECT reason FROM rejected ORDER BY id")
        assert len(rejected) == 2 and "not JSON" in rejected[0]["reason"]
    finally:
        table.close()


def test_tracker_splits_holes_and_backfills() -> None:
    tracker = GapTracker(grace=0.0, retry=10.0, backfill=True)
    opened, _ = tracker.saw("t", [5, 6, 10], now=0.0)
    assert [(h.first, h.last) for h in opened] == [(1, 4), (7, 9)]
    _, healed = tracker.saw("t", [8], now=1.0)
    assert not healed
    assert [h.missing for h in tracker.open_holes()] == [[(1, 4)], [(7, 7), (9, 9)]]
    requests = [(a, b) for _h, a, b in tracker.due(2.0)]
    assert requests == [(1, 4), (7, 7), (9, 9)]
    assert tracker.due(3.0) == []  # not again before `retry`
    _, healed = tracker.saw("t", [7, 9], now=4.0)
    assert [(h.first, h.last) for h in healed] == [(7, 9)]
    quiet = GapTracker(grace=0.0, retry=10.0, backfill=False)
    assert quiet.saw("t", [5, 6], now=0.0) == ([], [])


def test_a_heal_that_lands_while_the_heal_loop_asks_stays_healed(
    server: RoomServer, mosquitto: Mosquitto
) -> None:
    """The heal loop publishes `resend` and then records the gap `asked`; a table that
    answers at once lets the ingest thread store the events and record `healed` first.
    The late `asked` must not overwrite it (it used to: the gap stayed `asked` for ever and
    `/api/tables` counted it open). Here the `asked` write is held until `healed` is in."""
    store = server.store
    real_update = store.update_gap
    healed_in = threading.Event()
    asked_done = threading.Event()

    def update_gap(gap_id: int, **fields: Any) -> bool:
        if fields.get("status") == "asked":
            healed_in.wait(15)  # the heal loop is late: the ingest thread goes first
        done = real_update(gap_id, **fields)
        if fields.get("status") == "healed":
            healed_in.set()
        if fields.get("status") == "asked":
            asked_done.set()
        return done

    store.update_gap = update_gap  # type: ignore[method-assign]
    table = FakeTable(mosquitto)
    try:
        table.publish(1, 2, 5)
        assert poll(lambda: len(table.client.messages()) >= 1, 15), "no resend asked"
        table.answer()
        assert poll(lambda: _seqs(server) == [1, 2, 3, 4, 5], 15)
        assert healed_in.wait(15), "the gap was never recorded healed"
        assert asked_done.wait(15), "the heal loop never recorded the gap asked"
        gaps = store.gaps("tx")
        assert [g["status"] for g in gaps] == ["healed"], gaps
        assert [t["open_gaps"] for t in store.tables() if t["table_id"] == "tx"] == [0]
    finally:
        table.close()

