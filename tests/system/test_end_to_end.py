"""End to end: firmware simulators on ptys, the daemon, a real mosquitto with the shipped ACL."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.schema import validate
from controller.seal import open_sealed
from kernel.inputs import ButtonPress
from kernel.messages import Message
from sim.dealer import DealerClock, Decision, HandPlan, TableDealer, seat_players
from sim.demo import demo_script
from sim.player import ScriptPlayer
from tests.broker import Mosquitto, Received, Subscriber

pytestmark = pytest.mark.timeout(90)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim-table.toml"
CARD = re.compile(r'"[23456789TJQKA][cdhs]"')
PREFIX = "poker/sim/t01"
TABLECTL = [sys.executable, "-m", "tablectl.cli"]


def _config(tmp_path: Path) -> Config:
    config = load_config(EXAMPLE)
    return dataclasses.replace(
        config, journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal")
    )


def _events(sub: Subscriber) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in sub.messages(f"{PREFIX}/events")]


def _wait_types(sub: Subscriber, types: list[str], timeout: float = 30.0) -> bool:
    def done(msgs: list[Received]) -> bool:
        seen = [json.loads(m.payload)["type"] for m in msgs if m.topic.endswith("/events")]
        return all(seen.count(t) >= types.count(t) for t in set(types))

    return sub.wait_for(done, timeout)


@pytest.fixture
def table(tmp_path: Path, mosquitto_acl: Mosquitto):  # type: ignore[no-untyped-def]
    config = _config(tmp_path)
    daemon = Daemon(
        config,
        broker=mosquitto_acl.broker_config("table-t01", prefix=PREFIX, client_id="tablectl-t01"),
    )
    room = Subscriber(mosquitto_acl, "poker/#", username="room")
    tv = Subscriber(mosquitto_acl, f"{PREFIX}/holecards", username="tv")
    daemon.start()
    assert daemon.devices.readers[0].wait_synced(10.0)
    # The daemon subscribes to its commands before it says "online": once the room saw
    # that, a command it sends is not published to nobody.
    assert room.wait_for(lambda ms: any(b'"online"' in m.payload for m in ms), 10)
    yield daemon, room, tv
    daemon.stop()
    room.close()
    tv.close()


def test_end_to_end_hand_on_real_broker_and_ptys(table, mosquitto_acl, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    daemon, room, tv = table
    events = seat_players(
        [(1, "Alice", 20000), (2, "Bruno", 20000), (3, "Chiara", 20000)], (100, 200, 0), button=3
    )
    D = Decision
    checks = [D(1, "check"), D(2, "check"), D(3, "check")]
    plan = HandPlan(
        dealt_in=[1, 2, 3],
        button=3,
        small_blind_seat=1,
        big_blind_seat=2,
        blinds=(100, 200, 0),
        stacks={1: 20000, 2: 20000, 3: 20000},
        hole={1: ["As", "Kd"], 2: ["7h", "7c"], 3: ["Qs", "Jd"]},
        board=["2d", "9d", "5s", "2s", "3s"],
        burns=["4c", "8c", "Tc"],
        streets=[
            [D(3, "call"), D(1, "call"), D(2, "check")],
            checks,
            checks,
            [D(1, "bet", 400), D(2, "fold"), D(3, "fold")],
        ],
    )
    # settle > the engine's 1 s: every push is read as settled by a timer the daemon fires
    events += TableDealer(DealerClock(0.5), step=0.1, settle=1.1).play(plan)
    ScriptPlayer(daemon, speed=1.0).play(events)
    assert _wait_types(
        room,
        [
            "hand_started",
            "board_dealt",
            "board_dealt",
            "board_dealt",
            "pot_awarded",
            "hand_completed",
        ],
    )
    got = _events(room)
    start = [e["type"] for e in got].index("hand_started")
    assert [
        (e["type"], e.get("street")) for e in got if e["type"] in ("hand_started", "board_dealt")
    ] == [
        ("hand_started", None),
        ("board_dealt", "flop"),
        ("board_dealt", "turn"),
        ("board_dealt", "river"),
    ]
    boards = [e for e in got if e["type"] == "board_dealt"]
    awarded = [e for e in got if e["type"] == "pot_awarded"]
    # The river bet was not called: it goes back (15-B), the 600 pot goes to seat 1.
    returned = [e for e in got if e["type"] == "uncalled_bet_returned"]
    assert [(e["seat"], e["amount"]) for e in returned] == [(1, 400)]
    assert awarded[0]["winners"] == [1] and awarded[0]["amount"] == 600
    assert not room.messages(f"{PREFIX}/alerts"), "a clean hand raises no alert"
    seqs = [e["seq"] for e in got]
    assert seqs == list(range(1, len(seqs) + 1)), "events seq must be contiguous from 1"
    assert got[start]["trigger"] == "shuffler" and got[start]["button"] == 3

    # TV production receives all six hole cards, sealed, the moment they are read; the keys
    # (kept in the journal until the table's delay has passed) open them to the cards.
    assert tv.wait_for(lambda m: len(m) >= 6, 10)
    hole = [json.loads(m.payload) for m in tv.messages()]
    assert {h["seat"] for h in hole} == {1, 2, 3}
    assert [h["seq"] for h in hole] == list(range(1, len(hole) + 1))
    assert all(not m.retain for m in tv.messages())
    assert all("cards" not in h for h in hole)
    keys = {
        r["payload"]["seq"]: r["key"]
        for r in map(json.loads, (tmp_path / "t01.journal").read_text().splitlines()[1:])
        if r.get("out") == "holecards"
    }
    opened = {h["seat"]: open_sealed(h, keys[h["seq"]]) for h in hole}
    finals = {seat: cards for seat, cards in opened.items() if len(cards) == 2}
    assert sorted(finals) == [1, 2, 3]

    # The room identity, subscribed to '#', receives no hole card at all.
    assert not room.messages(f"{PREFIX}/holecards")
    board = {c for e in boards for c in e["cards"]}
    hole_cards = {c for cards in finals.values() for c in cards}
    for m in room.messages():
        found = {c.strip('"') for c in CARD.findall(m.payload.decode())}
        assert not found & hole_cards, f"hole card leaked on {m.topic}"
        assert found <= board

    # Everything published, as the room and TV received it, matches its schema.
    for m in [*room.messages(), *tv.messages()]:
        kind = m.topic.rsplit("/", 1)[1]
        retain = kind in ("state", "status")  # live deliveries carry retain=False anyway
        validate(Message(kind, json.loads(m.payload), 1, retain))

    # Retained state and status are there for a late subscriber; hole cards never are.
    late = Subscriber(mosquitto_acl, f"{PREFIX}/#", username="room")
    assert late.wait_for(lambda m: len({x.topic for x in m}) >= 2, 10)
    time.sleep(0.3)
    retained = {m.topic: json.loads(m.payload) for m in late.messages() if m.retain}
    late.close()
    assert retained[f"{PREFIX}/status"]["state"] == "online"
    assert retained[f"{PREFIX}/state"]["hand"] is None  # the hand is over
    assert retained[f"{PREFIX}/state"]["seats"]["1"]["stack"] == 20000 + 400
    assert set(retained) == {f"{PREFIX}/status", f"{PREFIX}/state"}

    # A dispute: the journal the daemon wrote, in real time (timers fired late, as they
    # do), replays to exactly what the room and TV received, and matches its own record
    # of what was published (exit 0: no difference).
    replayed = subprocess.run(
        [*TABLECTL, "replay", str(tmp_path / "t01.journal"), "--config", str(EXAMPLE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert replayed.returncode == 0, replayed.stderr
    lines = [json.loads(line) for line in replayed.stdout.splitlines()]
    by_topic = {
        topic: [line["payload"] for line in lines if line["topic"] == f"{PREFIX}/{topic}"]
        for topic in ("events", "holecards", "alerts")
    }
    assert by_topic["events"] == got
    assert by_topic["holecards"] == hole
    assert by_topic["alerts"] == []


def test_room_command_over_mqtt_and_malformed_command_alert(table, mosquitto_acl) -> None:  # type: ignore[no-untyped-def]
    daemon, room, _tv = table
    room.publish(f"{PREFIX}/cmd/seat", b'{"seat": 4, "player": "Dora", "stack": 15000}')
    room.publish(f"{PREFIX}/cmd/seat", b'{"seat": 44, "player": "Nope"}')
    room.publish(f"{PREFIX}/cmd/level", b"not json")

    def seated(msgs: list[Received]) -> bool:
        states = [json.loads(m.payload) for m in msgs if m.topic.endswith("/state")]
        return bool(states) and states[-1]["seats"]["4"]["player"] == "Dora"

    assert room.wait_for(seated, 10)
    assert room.wait_for(lambda ms: len([m for m in ms if m.topic.endswith("/alerts")]) >= 2, 10)
    alerts = [json.loads(m.payload) for m in room.messages(f"{PREFIX}/alerts")]
    assert {a["type"] for a in alerts} >= {"command_malformed"}
    assert daemon.engine.seats[4].stack == 15000


def test_restart_recovers_state_and_seq_from_journal(
    tmp_path: Path, mosquitto_acl: Mosquitto
) -> None:
    config = _config(tmp_path)
    broker = mosquitto_acl.broker_config("table-t01", prefix=PREFIX, client_id="tablectl-t01")
    first = Daemon(config, broker=broker)
    first.start()
    script = demo_script(config, 1, seed=3)
    player = ScriptPlayer(first, speed=50.0)
    player.play(script)
    deadline = time.monotonic() + 20
    while first.engine.seq < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    seq_before = first.engine.seq
    # An unfinished hand is completed (one more event) when the next one starts.
    next_start = seq_before + (2 if first.engine.hand is not None else 1)
    first.stop()
    assert seq_before >= 4

    second = Daemon(config, broker=broker)
    second.start()
    try:
        assert second.engine.seq == seq_before
        assert second.engine.hand_number == first.engine.hand_number
        room = Subscriber(mosquitto_acl, f"{PREFIX}/events", username="room")
        second.commands.submit("level", b'{"small_blind": 200, "big_blind": 400, "ante": 0}')
        ScriptPlayer(second).perform(ButtonPress(0.0, "shuffler"))
        assert room.wait_for(
            lambda m: any(json.loads(x.payload)["type"] == "hand_started" for x in m), 10
        )
        new = [json.loads(m.payload) for m in room.messages()]
        # seq survives the restart: the new hand is numbered after the journaled ones
        # (the current hand's events may also be published again: at-least-once).
        started = {e["seq"]: e["hand"] for e in new if e["type"] == "hand_started"}
        assert started.get(next_start) == first.engine.hand_number + 1
        assert max(started) == next_start
        room.close()
    finally:
        second.stop()


def test_reader_board_going_away_alerts_the_floor_and_lights_the_fault_lamp(table) -> None:  # type: ignore[no-untyped-def]
    daemon, room, _tv = table
    fault_pin = daemon.config.gpio.lamps["fault"]
    assert daemon.devices.gpio.level(fault_pin) is False
    daemon.devices.sim_boards["chip_reader"].stop()  # the chip board dies (USB pulled, power lost)

    def reader_alert(msgs: list[Received]) -> bool:
        alerts = [json.loads(m.payload) for m in msgs if m.topic.endswith("/alerts")]
        return any(a["type"] in ("reader_silent", "reader_disconnected") for a in alerts)

    assert room.wait_for(reader_alert, 15)
    alert = next(
        json.loads(m.payload)
        for m in room.messages(f"{PREFIX}/alerts")
        if json.loads(m.payload)["type"] in ("reader_silent", "reader_disconnected")
    )
    assert alert["severity"] == "critical" and alert["reader"] == "chip_reader"
    deadline = time.monotonic() + 5
    while not daemon.devices.gpio.level(fault_pin) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert daemon.devices.gpio.level(fault_pin) is True
    # The table goes on: a room command is still applied while the board is away.
    room.publish(f"{PREFIX}/cmd/seat", b'{"seat": 5, "player": "Eva", "stack": 1000}')
    deadline = time.monotonic() + 5
    while daemon.engine.seats[5].player != "Eva" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert daemon.engine.seats[5].player == "Eva"
