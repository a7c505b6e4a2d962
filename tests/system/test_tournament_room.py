"""The tournament in the room server, for real: a test mosquitto, the room server with
[tournament], simulated tables dealing on the simulated boards, the floor through the HTTP
API with the token; and `tablectl sim --tables N --tournament FILE` to a winner."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.broker import Mosquitto
from tests.table_rig import tablectl
from tests.tournament_live import EXAMPLES, LiveRoom

pytestmark = pytest.mark.timeout(600)
MINI = EXAMPLES / "mini.toml"
CARD = re.compile(r"(?<![0-9A-Za-z])[23456789TJQKA][cdhs](?![0-9A-Za-z])")


@pytest.fixture
def live(tmp_path: Path, mosquitto: Mosquitto) -> Iterator[LiveRoom]:
    room = LiveRoom(tmp_path, mosquitto, MINI, tables=2, time_scale=30.0)
    yield room
    room.stop()


def test_the_floor_needs_the_token_and_a_refusal_says_why(live: LiveRoom) -> None:
    live.start()
    assert live.post("/api/tournament/start", {"by": "x"}, token=None).status_code == 401
    assert (
        live.post("/api/tournament/start", {"by": "x"}, token="wrong-token-0000").status_code == 401
    )
    refused = live.post("/api/tournament/clock", {"action": "pause", "by": "x"})
    assert refused.status_code == 409 and "has not started" in refused.json()["detail"]
    assert live.post("/api/tournament/clock", {"action": "nap"}).status_code == 422
    summary = live.get("/api/tournament")
    assert (summary["name"], summary["players_left"], summary["started"]) == ("Mini", 8, False)


def test_seats_levels_and_holds_reach_the_tables_through_the_broker(live: LiveRoom) -> None:
    live.start()
    live.act("/api/tournament/draw")

    # The draw holds the tables (not started) and seats every player with the full stack.
    def seated() -> bool:
        return sum(
            1 for d in live.daemons for s in d.engine.seats.values() if s.player
        ) == 8 and all(d.engine.holds.get("room") for d in live.daemons)

    live.wait(seated, 30, confirm=False)
    assert {s.stack for d in live.daemons for s in d.engine.seats.values() if s.player} == {1500}
    assert all(d.engine.hand is None for d in live.daemons)  # held: no hand before the start
    live.act("/api/tournament/start")
    live.wait(lambda: all(d.engine.hand_number >= 2 for d in live.daemons), 120)
    assert all(not d.engine.holds for d in live.daemons)
    assert {(d.engine.level.small_blind, d.engine.level.big_blind) for d in live.daemons} <= {
        (25, 50),
        (50, 100),
        (100, 200),
    }
    board = live.get("/api/tournament/leaderboard")
    assert board["players_left"] == 8 and len(board["players"]) == 8
    engine_stacks = {
        s.player: s.stack for d in live.daemons for s in d.engine.seats.values() if s.player
    }

    def counts_match() -> bool:
        rows = live.get("/api/tournament/leaderboard")["players"]
        now = {s.player: s.stack for d in live.daemons for s in d.engine.seats.values() if s.player}
        idle = all(d.engine.hand is None for d in live.daemons)
        return idle and {r["name"]: r["chips"] for r in rows if r["name"] in now} == now

    live.wait(counts_match, 60, confirm=False)
    assert engine_stacks  # the chip counts are the tables' stacks after their hands
    assert not CARD.search(json.dumps(live.get("/api/tournament/leaderboard")))


def test_a_tournament_to_a_winner_and_a_room_restart_on_the_way(live: LiveRoom) -> None:
    live.start()
    live.act("/api/tournament/start")
    live.wait(lambda: live.get("/api/tournament")["players_left"] <= 6, 300)
    before = live.get("/api/tournament/leaderboard")
    results_before = live.get("/api/tournament/results")["results"]
    # The room server goes away (the tables play on) and comes back from its journal.
    live.stop_room()
    time.sleep(2.0)
    live.start_room()
    after = {r["id"]: r["place"] for r in live.get("/api/tournament/results")["results"]}
    assert {r["id"]: r["place"] for r in results_before}.items() <= after.items()
    assert live.get("/api/tournament")["players_left"] <= before["players_left"]
    summary = live.wait(lambda: (s := live.get("/api/tournament"))["finished"] and s, 420)
    results = live.get("/api/tournament/results")
    assert summary["players_left"] == 1
    assert results["results"][0]["place"] == 1
    places = {p for r in results["results"] for p in range(r["place"], r["place_to"] + 1)}
    assert places == set(range(1, 9))
    assert sum(r["prize"] for r in results["results"]) == summary["prize_pool"] == 400
    log = live.get("/api/tournament/log")
    assert any(e["kind"] == "final" for e in log) and any(e["kind"] == "winner" for e in log)


def lines_of(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [ln for ln in proc.stdout.splitlines() if not re.search(r" (INFO|WARNING) ", ln)]


def test_tablectl_sim_plays_a_tournament_to_a_winner(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            *tablectl(),
            "sim",
            "--tables",
            "2",
            "--tournament",
            str(MINI),
            "--speed",
            "60",
            "--no-tv",
            "--seed",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=540,
        cwd=Path(__file__).resolve().parents[2],
    )
    out = lines_of(proc)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    text = "\n".join(out)
    assert re.search(r"^tournament: \S.* wins Mini", text, re.M), text[-2000:]
    assert "tournament over:" in text
    table = [ln for ln in out if re.match(r"^\s+\d+(-\d+)?\s", ln)]
    assert len(table) == 8
    assert re.search(r"floor: +http://127\.0\.0\.1:\d+/tournament/floor", text)
    assert re.search(r"clock: +http://127\.0\.0\.1:\d+/tournament/clock", text)
    assert re.search(r"^tournament: final table at t01: .*\[7\]$", text, re.M)
    assert not CARD.search(text.split("tournament over:")[1])


def snapshot(live: LiveRoom) -> dict[str, Any]:
    return {
        "summary": live.get("/api/tournament"),
        "board": live.get("/api/tournament/leaderboard"),
    }


def test_rule_RP8_hand_for_hand_through_the_broker(tmp_path: Path, mosquitto: Mosquitto) -> None:
    # The mini event with hand-for-hand three players from the money: seven players left on
    # two tables, on until the final table (one table: hand-for-hand ends by itself).
    event = tmp_path / "bubble.toml"
    event.write_text(
        MINI.read_text(encoding="utf-8").replace(
            'final_table = "t01"', 'final_table = "t01"\nhand_for_hand_at = 3'
        ),
        encoding="utf-8",
    )
    live = LiveRoom(tmp_path, mosquitto, event, tables=2, time_scale=30.0, seed=2)
    try:
        live.start()
        live.act("/api/tournament/start")
        live.wait(lambda: live.get("/api/tournament")["finished"], 480)
        log = live.get("/api/tournament/log")
        on = [e for e in log if e["kind"] == "hand_for_hand"]
        assert len(on) == 2 and all(e["rule"] == "RP-8" for e in on)
        assert live.server is not None
        store = live.server.store
        for table in ("t01", "t02"):
            holds = [
                json.loads(r["payload"])
                for r in store.events_of_type(table, "room_hold", limit=500)
            ]
            assert any(h["rule"] == "RP-8" and h["hand"] is None for h in holds), table
        released = [
            json.loads(r["payload"])
            for t in ("t01", "t02")
            for r in store.events_of_type(t, "room_release", limit=500)
        ]
        assert any(r["hand_for_hand"] is False for r in released)  # ended
    finally:
        live.stop()


def test_the_tournament_catches_up_from_the_room_database(live: LiveRoom) -> None:
    from room.tournament.service import TournamentService

    live.start()
    live.act("/api/tournament/start")
    live.wait(lambda: all(d.engine.hand_number >= 3 for d in live.daemons), 180)
    assert live.server is not None and live.server.tournament is not None
    old = live.server.tournament
    settings = old.settings
    old.stop()  # the tournament stops; the room goes on storing every table's events
    hands = {d.config.table.id: d.engine.hand_number for d in live.daemons}
    live.wait(
        lambda: all(d.engine.hand_number >= hands[d.config.table.id] + 2 for d in live.daemons),
        180,
        confirm=False,
    )
    new = TournamentService(settings, live.server.ingest)
    try:
        new.start()  # its journal, then the facts stored meanwhile
        for d in live.daemons:
            table = new.core.tables[d.config.table.id]
            done = d.engine.hand_number - (1 if d.engine.hand is not None else 0)
            assert table.last_hand >= min(done, hands[d.config.table.id] + 1)
        # The tables play on: a hand completed a moment ago may still be on its way through
        # the broker to the room. Each table is compared at rest, once the catching-up
        # tournament has that table's last completed hand.
        matched: set[str] = set()
        last: dict[str, Any] = {}
        deadline = time.monotonic() + 60
        while len(matched) < len(live.daemons) and time.monotonic() < deadline:
            for d in live.daemons:
                tid = d.config.table.id
                before = (d.engine.hand_number, d.engine.hand is None)
                stacks = {s.player: s.stack for s in d.engine.seats.values() if s.player}
                if not before[1] or (d.engine.hand_number, d.engine.hand is None) != before:
                    continue  # mid-hand, or a hand began while reading
                if new.core.tables[tid].last_hand != before[0]:
                    continue  # the room has not handed the tournament that hand yet
                counted = {
                    p.name: p.stack for p in new.core.players.values() if p.name in stacks
                }
                last[tid] = (counted, stacks)
                if counted == stacks:
                    matched.add(tid)
            time.sleep(0.05)
        assert len(matched) == len(live.daemons), last
    finally:
        new.stop()
