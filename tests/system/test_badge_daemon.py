"""End to end: staff badges through the daemon to MQTT, on a real pcscd + vpcd and mosquitto."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.config import BadgeConfig, Config, load_config
from controller.daemon import Daemon
from controller.journal import read_trace_file
from controller.staff import load_staff
from firmware_sim.badge_card import VirtualBadge
from kernel.errors import RegistryError
from kernel.inputs import Badge, ButtonPress, Device, TagIn
from sim.player import ScriptPlayer
from tests.broker import Mosquitto, Received, Subscriber
from tests.pcscd import SLOT0, Pcscd, check_prerequisites, free_port_pair

pytestmark = pytest.mark.timeout(150)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"
STAFF = ROOT / "examples" / "staff" / "sim-staff.toml"
PREFIX = "poker/sim/t01"
MARIA, LUCA, GIULIA = "04A1B2C3D4E5F6", "04B2C3D4E5F607", "04F1E2D3C4B5A6"
STRANGER = "04DEADBEEF0001"
# Button on seat 3: seat 1 posts the small blind, seat 2 the big blind, seat 3 acts first.
HOLE = {1: ["Ah", "Kh"], 2: ["Qd", "Jd"], 3: ["9s", "9c"]}


def _config(tmp_path: Path, badge: BadgeConfig) -> Config:
    config = load_config(EXAMPLE)
    return dataclasses.replace(
        config,
        badge=badge,
        journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal"),
    )


def _payloads(msgs: list[Received], kind: str) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in msgs if m.topic == f"{PREFIX}/{kind}"]


def _names(payload: dict[str, Any], uid: str, name: str) -> bool:
    """The message names this member of staff: their badge uid and their name."""
    text = json.dumps(payload)
    return f'"{uid}"' in text and json.dumps(name) in text


def _dealer_changed(uid: str, name: str):  # type: ignore[no-untyped-def]
    def done(msgs: list[Received]) -> bool:
        return any(
            e["type"] == "dealer_changed" and _names(e, uid, name)
            for e in _payloads(msgs, "events")
        )

    return done


def _alert(kind: str, uid: str | None = None):  # type: ignore[no-untyped-def]
    def done(msgs: list[Received]) -> bool:
        return any(
            a["type"] == kind and (uid is None or uid in json.dumps(a))
            for a in _payloads(msgs, "alerts")
        )

    return done


def _event_count(kind: str, n: int):  # type: ignore[no-untyped-def]
    def done(msgs: list[Received]) -> bool:
        return sum(e["type"] == kind for e in _payloads(msgs, "events")) >= n

    return done


def _action(seat: int, action: str):  # type: ignore[no-untyped-def]
    def done(msgs: list[Received]) -> bool:
        return any(
            e["type"] == "action" and (e["seat"], e["action"]) == (seat, action)
            for e in _payloads(msgs, "events")
        )

    return done


def _state(predicate: Callable[[dict[str, Any]], bool]):  # type: ignore[no-untyped-def]
    """The latest `state` the room has received satisfies `predicate`."""

    def done(msgs: list[Received]) -> bool:
        states = _payloads(msgs, "state")
        return bool(states) and predicate(states[-1])

    return done


def _chips(player: ScriptPlayer, seat: int, *values: int) -> None:
    """Chips of these values arrive in the seat's bet zone (on the simulated chip board)."""
    for value in values:
        chip = f"b{len(player.chip_uids) + 1}"  # a chip not played yet: the next tag uid
        player.perform(TagIn(0.0, f"bet{seat}", chip=chip, value=value))


@pytest.fixture
def pcscd(tmp_path: Path) -> Iterator[Pcscd]:
    check_prerequisites()  # fails (never skips) with the reason when pcscd cannot run
    daemon = Pcscd(tmp_path / "pcscd", free_port_pair())
    daemon.start()
    yield daemon
    daemon.stop()


def test_badges_on_a_real_pcsc_reader_reach_the_room(
    tmp_path: Path, pcscd: Pcscd, mosquitto_acl: Mosquitto
) -> None:
    config = _config(tmp_path, BadgeConfig(backend="pcsc", reader=SLOT0, staff=STAFF))
    broker = mosquitto_acl.broker_config("table-t01", prefix=PREFIX, client_id="tablectl-t01")
    daemon = Daemon(config, broker=broker)
    room = Subscriber(mosquitto_acl, "poker/#", username="room")
    card = VirtualBadge(port=pcscd.port)
    daemon.start()
    try:
        reader = daemon.devices.badge_reader
        deadline = time.monotonic() + 30
        while reader.reader_name != SLOT0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reader.reader_name == SLOT0

        for seat in (1, 2, 3):
            cmd = {"seat": seat, "player": f"P{seat}", "stack": 5000}
            daemon.commands.submit("seat", json.dumps(cmd).encode())
        level = {"small_blind": 25, "big_blind": 50, "ante": 0}
        daemon.commands.submit("level", json.dumps(level).encode())
        daemon.commands.submit("button", json.dumps({"seat": 3}).encode())
        # A dealer taps in: the room learns who deals.
        card.insert(MARIA)
        assert room.wait_for(_dealer_changed(MARIA, "Maria Rossi"), 30), room.messages()
        card.remove()
        # The dealer push started the hand (rule 23) and the shuffler's button pressed for
        # the same hand does not start a second one.
        assert room.wait_for(_event_count("hand_started", 1), 30), room.messages()
        daemon.devices.gpio.press(daemon.config.gpio.shuffler)
        daemon.devices.gpio.release(daemon.config.gpio.shuffler)
        assert room.wait_for(_alert("hand_already_started"), 30), room.messages()
        started = [e for e in _payloads(room.messages(), "events") if e["type"] == "hand_started"]
        assert [e["trigger"] for e in started] == ["dealer_push"]
        assert started[0]["dealer"] == {"uid": MARIA, "name": "Maria Rossi"}
        assert started[0]["button"] == 3

        # The hand is dealt on the simulated reader boards, and the betting goes on to
        # substantial action (rule 36): seat 3 calls, seat 1 completes. The two boards are
        # separate links, so each motion waits until the table has seen the one before.
        player = ScriptPlayer(daemon)
        _chips(player, 1, 25)
        _chips(player, 2, 25, 25)
        assert room.wait_for(_event_count("posted", 2), 30), room.messages()
        for i in range(2):
            for seat in (1, 2, 3):  # from the left of the button (35A-2)
                player.perform(TagIn(0.0, f"seat{seat}", card=HOLE[seat][i]))
        dealt = _state(lambda s: all(s["seats"][n]["cards"] == 2 for n in "123"))
        assert room.wait_for(dealt, 30), room.messages()
        _chips(player, 3, 25, 25)
        assert room.wait_for(_action(3, "call"), 30), room.messages()
        _chips(player, 1, 25)
        assert room.wait_for(_action(1, "call"), 30), room.messages()
        assert room.wait_for(_state(lambda s: s["substantial_action"]), 30), room.messages()
        assert _payloads(room.messages(), "state")[-1]["floor"] is None

        # A misdeal now needs the floor (35-D): without the floor's badge it is refused,
        # with an alert that calls the floor, and the hand goes on.
        misdeal = ButtonPress(0.0, "misdeal")
        player.perform(misdeal)
        assert room.wait_for(_alert("misdeal_refused"), 30), room.messages()
        alerts = _payloads(room.messages(), "alerts")
        assert next(a for a in alerts if a["type"] == "misdeal_refused")["rule"] == "35D"
        assert _event_count("misdeal", 1)(room.messages()) is False

        # The floor lays the badge on the reader and, with it still there, rules the misdeal:
        # the event names the floor.
        card.insert(GIULIA)
        assert room.wait_for(_event_count("floor_arrived", 1), 30), room.messages()
        events = _payloads(room.messages(), "events")
        arrived = next(e for e in events if e["type"] == "floor_arrived")
        assert arrived["floor"] == {"uid": GIULIA, "name": "Giulia Ferrari"}
        player.perform(misdeal)
        assert room.wait_for(_event_count("misdeal", 1), 30), room.messages()
        assert reader.current == GIULIA, "the floor's badge stayed on the reader"
        ruled = next(e for e in _payloads(room.messages(), "events") if e["type"] == "misdeal")
        assert (ruled["reason"], ruled["rule"]) == ("floor_ruling", "35D")
        assert ruled["by"] == {"uid": GIULIA, "name": "Giulia Ferrari"}
        assert ruled["hand"] == started[0]["hand"]
        giulia = {"uid": GIULIA, "name": "Giulia Ferrari"}
        assert room.wait_for(_state(lambda s: s["floor"] == giulia), 30), room.messages()
        # Taking the badge off ends the floor's authority at once.
        card.remove()
        assert room.wait_for(_state(lambda s: s["floor"] is None), 30), room.messages()

        # A badge nobody registered: refused, and the floor is told.
        card.insert(STRANGER)
        assert room.wait_for(_alert("badge_unknown", STRANGER), 30), room.messages()
        card.remove()
        assert not any(_names(e, STRANGER, "") for e in _payloads(room.messages(), "events")), (
            "an unknown badge changes nothing"
        )

        # pcscd dies and comes back: the daemon goes on reading badges.
        pcscd.kill()
        deadline = time.monotonic() + 30
        while reader.state != "offline" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reader.state == "offline"
        pcscd.start()
        card.insert(LUCA)
        assert room.wait_for(_dealer_changed(LUCA, "Luca Bianchi"), 30), room.messages()
        card.remove()
        assert reader.state == "online"
        # The reader's absence was an input like any other: journaled, seen by the engine,
        # which told the floor.
        alerts = _payloads(room.messages(), "alerts")
        assert any("badge_reader" in json.dumps(a) for a in alerts), alerts
    finally:
        card.remove()
        daemon.stop()
        room.close()
    # The badge and the reader's absence are journaled inputs (a one-file journal here).
    inputs = read_trace_file(tmp_path / "t01.journal").events
    assert any(isinstance(e, Badge) and e.uid == MARIA for e in inputs)
    assert any(isinstance(e, Device) and e.name == "badge_reader" for e in inputs)


def test_badges_on_the_simulated_reader(tmp_path: Path, mosquitto_acl: Mosquitto) -> None:
    config = load_config(EXAMPLE)  # backend "sim" with the example staff registry
    config = dataclasses.replace(
        config, journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal")
    )
    assert config.badge.backend == "sim"
    broker = mosquitto_acl.broker_config("table-t01", prefix=PREFIX, client_id="tablectl-t01")
    daemon = Daemon(config, broker=broker)
    room = Subscriber(mosquitto_acl, "poker/#", username="room")
    daemon.start()
    try:
        assert daemon.devices.sim_badge is daemon.devices.badge_reader is not None
        daemon.devices.sim_badge.tap(LUCA)
        assert room.wait_for(_dealer_changed(LUCA, "Luca Bianchi"), 30), room.messages()
        # a trace's badge lines are played on the simulated reader
        ScriptPlayer(daemon).perform(Badge(0.0, MARIA))
        assert room.wait_for(_dealer_changed(MARIA, "Maria Rossi"), 30), room.messages()
        assert daemon.devices.sim_badge.current == MARIA
        ScriptPlayer(daemon).perform(Badge(0.0, MARIA, removed=True))
        assert daemon.devices.sim_badge.current is None
        daemon.devices.sim_badge.tap(STRANGER)
        assert room.wait_for(_alert("badge_unknown", STRANGER), 30), room.messages()
    finally:
        daemon.stop()
        room.close()


def test_a_bad_staff_registry_refuses_to_start(tmp_path: Path) -> None:
    staff = tmp_path / "staff.toml"
    staff.write_text('[[staff]]\nuid = "04A1"\nname = "Maria"\nrole = "croupier"\n')
    config = _config(tmp_path, BadgeConfig(backend="sim", staff=staff))
    with pytest.raises(RegistryError, match=r"staff\.toml: \[\[staff\]\] entry 1.*croupier"):
        Daemon(config)
    assert len(load_staff(STAFF)) == 3
