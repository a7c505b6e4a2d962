"""A table restart, a room-server restart and a broker restart mid-hand: the same rows.

The table is `tablectl run` in a subprocess (tests/table_rig.py: reader boards on ptys here,
buttons through its GPIO socket), the room server is `tablectl room` in a subprocess, the
broker a real mosquitto. Each run deals the same session; what the room stores must be, row
for row, what an uninterrupted run gives (the pure engine's events for the same steps, the
time `t` aside) and, byte for byte, what the table published (its journal's `out` records).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from room.config import DatabaseConfig
from room.store import Store, open_store
from tests.broker import Mosquitto, Subscriber, free_port
from tests.room_helpers import RoomProcess, write_room_config
from tests.table_rig import (
    PREFIX,
    Expectation,
    Player,
    Step,
    TableRig,
    poll,
    session,
    without_t,
)

pytestmark = pytest.mark.timeout(420)

DEAL_SEED = 3
HANDS = 2


def _step_after(expect: Expectation, kind: str, nth: int = 1) -> int:
    """The index of the step after which the `nth` event of type `kind` exists."""
    target = [e["seq"] for e in expect.events if e["type"] == kind][nth - 1]
    return next(k for k, seq in enumerate(expect.seq_after) if seq >= target)


def _rows(store: Store) -> dict[int, str]:
    return {
        int(r["seq"]): str(r["payload"])
        for r in store.query("SELECT seq, payload FROM events ORDER BY seq")
    }


def _published(rig: TableRig) -> dict[int, str]:
    """What the table published, by seq (the first record of each: a seq is never reused)."""
    out: dict[int, str] = {}
    for segment in rig.journal_segments():
        for records in segment.outputs.values():
            for o in records:
                if o.message.topic == "events":
                    out.setdefault(o.message.payload["seq"], o.message.payload_bytes().decode())
    return out


class Scene:
    """A rig, a room server process, its database, and the session to deal."""

    def __init__(self, workdir: Path, broker: Mosquitto, database_url: str) -> None:
        self.rig = TableRig(workdir / "rig", broker)
        self.steps: list[Step] = session(self.rig.config, HANDS, DEAL_SEED)
        self.expect = Expectation(self.rig.config, self.steps)
        port = free_port()
        config = write_room_config(
            workdir / "room.toml", broker, database_url, room="rig", http_port=port
        )
        self.room = RoomProcess(config, port, workdir / "room.log")
        self.database = DatabaseConfig(url=database_url)
        self.watch: Subscriber | None = None
        self.player: Player | None = None

    def __enter__(self) -> Scene:
        self.rig.__enter__()
        self.room.start()
        self.watch = Subscriber(self.rig.broker, f"{PREFIX}/#")
        self.player = Player(self.rig, self.watch, self.steps, self.expect)
        self.player.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.watch is not None:
            self.watch.close()
        self.room.stop()
        self.rig.__exit__()

    def check(self) -> dict[str, Any]:
        """The room ends with exactly the uninterrupted run's rows."""
        final = self.expect.seq_after[-1]
        store = open_store(self.database, "rig")
        try:
            ok = poll(lambda: len(_rows(store)) >= final, 90)
            rows = _rows(store)
            log = self.room.log.read_text()[-2000:]
            assert ok, f"room has {len(rows)} of {final} events: {log}"
            assert sorted(rows) == list(range(1, final + 1)), "every seq once, none missing"
            assert [without_t(json.loads(rows[s])) for s in sorted(rows)] == [
                without_t(e) for e in self.expect.events
            ], "the same events as an uninterrupted run"
            assert rows == _published(self.rig), "the very bytes the table published"
            assert store.event_counts() == {"rows": final, "distinct": final}
            def completed() -> int:
                return sum(h["completed_t"] is not None for h in store.hands("t09"))

            assert poll(lambda: completed() == HANDS, 30)
            return {"gaps": store.gaps(), "hands": store.hands("t09")}
        finally:
            store.close()


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    with Mosquitto(tmp_path / "mosquitto", persistence=True) as mq:
        yield mq


def test_uninterrupted_run_is_the_reference(tmp_path: Path, broker: Mosquitto) -> None:
    with Scene(tmp_path, broker, f"sqlite:///{tmp_path}/room.db") as scene:
        assert scene.player is not None
        scene.player.play(range(len(scene.steps)))
        assert scene.check()["gaps"] == []


def test_table_restart_mid_hand_gives_the_same_rows(tmp_path: Path, broker: Mosquitto) -> None:
    with Scene(tmp_path, broker, f"sqlite:///{tmp_path}/room.db") as scene:
        assert scene.player is not None
        flop = _step_after(scene.expect, "board_dealt")
        scene.player.play(range(flop + 1))
        scene.rig.kill()  # SIGKILL mid-hand: recovery from the journal, re-sent events
        scene.player.start()
        scene.player.play(range(flop + 1, len(scene.steps)))
        scene.check()


def test_room_server_restart_mid_hand_gives_the_same_rows(
    tmp_path: Path, broker: Mosquitto, database_url: str
) -> None:
    with Scene(tmp_path, broker, database_url) as scene:
        assert scene.player is not None
        flop = _step_after(scene.expect, "board_dealt")
        scene.player.play(range(flop + 1))
        scene.room.kill()  # SIGKILL: a batch may be received and not committed nor acked
        turn = _step_after(scene.expect, "board_dealt", 2)
        scene.player.play(range(flop + 1, turn + 1))  # the broker queues for the room
        scene.room.start()
        scene.player.play(range(turn + 1, len(scene.steps)))
        scene.check()


def test_broker_restart_mid_hand_gives_the_same_rows(tmp_path: Path) -> None:
    """Without persistence the broker forgets what it had queued for the room and the room's
    session: the room finds the hole and the table sends the events again (resend)."""
    with (
        Mosquitto(tmp_path / "mosquitto") as broker,
        Scene(tmp_path, broker, f"sqlite:///{tmp_path}/room.db") as scene,
    ):
        assert scene.player is not None and scene.watch is not None
        flop = _step_after(scene.expect, "board_dealt")
        scene.player.play(range(flop + 1))
        scene.room.kill()  # the room is away: the broker queues its events ...
        turn = _step_after(scene.expect, "board_dealt", 2)
        scene.player.play(range(flop + 1, turn + 1))
        broker.restart()  # ... and forgets them (no persistence)
        scene.watch.close()
        scene.watch = Subscriber(broker, f"{PREFIX}/#")
        scene.player.room = scene.watch
        scene.room.start()
        scene.player.play(range(turn + 1, len(scene.steps)), room=False)
        result = scene.check()
        assert any(g["status"] == "healed" for g in result["gaps"]), result["gaps"]
