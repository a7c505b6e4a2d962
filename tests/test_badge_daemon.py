"""End to end: staff badges through the daemon to MQTT, on a real pcscd + vpcd and mosquitto."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.config import BadgeConfig, Config, load_config
from controller.daemon import Daemon
from controller.errors import RegistryError
from controller.staff import load_staff
from controller.trace import Badge
from firmware_sim.badge_card import VirtualBadge
from firmware_sim.player import ScriptPlayer
from tests.broker import Mosquitto, Received, Subscriber
from tests.pcscd import SLOT0, Pcscd, check_prerequisites, free_port_pair

pytestmark = pytest.mark.timeout(150)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "sim-table.toml"
STAFF = ROOT / "examples" / "staff" / "sim-staff.toml"
PREFIX = "poker/sim/t01"
MARIA, LUCA, GIULIA = "04A1B2C3D4E5F6", "04B2C3D4E5F607", "04F1E2D3C4B5A6"
STRANGER = "04DEADBEEF0001"


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
        reader = daemon.badge_reader
        deadline = time.monotonic() + 30
        while reader.reader_name != SLOT0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reader.reader_name == SLOT0

        for seat in (1, 2, 3):
            cmd = {"seat": seat, "player": f"P{seat}", "stack": 5000}
            daemon.submit_command("seat", json.dumps(cmd).encode())
        level = {"small_blind": 25, "big_blind": 50, "ante": 0}
        daemon.submit_command("level", json.dumps(level).encode())
        # A dealer taps in: the room learns who deals.
        card.insert(MARIA)
        assert room.wait_for(_dealer_changed(MARIA, "Maria Rossi"), 30), room.messages()
        card.remove()
        # The dealer push started the hand (rule 23) and the shuffler's button pressed for
        # the same hand does not start a second one.
        assert room.wait_for(_event_count("hand_started", 1), 30), room.messages()
        daemon.gpio.press(daemon.config.gpio.shuffler)
        daemon.gpio.release(daemon.config.gpio.shuffler)
        assert room.wait_for(_alert("hand_already_started"), 30), room.messages()
        started = [e for e in _payloads(room.messages(), "events") if e["type"] == "hand_started"]
        assert [e["trigger"] for e in started] == ["dealer_push"]
        assert started[0]["dealer"] == {"uid": MARIA, "name": "Maria Rossi"}

        # The floor's badge authorises a ruling: the floor button then releases the table.
        card.insert(GIULIA)
        assert room.wait_for(_event_count("floor_arrived", 1), 30), room.messages()
        card.remove()
        daemon.gpio.press(daemon.config.gpio.panel["floor"])
        daemon.gpio.release(daemon.config.gpio.panel["floor"])
        assert room.wait_for(_event_count("floor_ruling", 1), 30), room.messages()
        events = _payloads(room.messages(), "events")
        ruling = next(e for e in events if e["type"] == "floor_ruling")
        assert ruling["floor"] == {"uid": GIULIA, "name": "Giulia Ferrari"}

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
    journal = (tmp_path / "t01.journal").read_text() if (tmp_path / "t01.journal").is_file() else ""
    if journal:  # a single-file journal: the badge and device lines are in it
        assert f'"uid": "{MARIA}"' in journal or f'"uid":"{MARIA}"' in journal
        assert '"badge_reader"' in journal


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
        assert daemon.sim_badge is daemon.badge_reader is not None
        daemon.sim_badge.tap(LUCA)
        assert room.wait_for(_dealer_changed(LUCA, "Luca Bianchi"), 30), room.messages()
        # a trace's badge lines are played on the simulated reader
        ScriptPlayer(daemon).perform(Badge(0.0, MARIA))
        assert room.wait_for(_dealer_changed(MARIA, "Maria Rossi"), 30), room.messages()
        assert daemon.sim_badge.current == MARIA
        ScriptPlayer(daemon).perform(Badge(0.0, MARIA, removed=True))
        assert daemon.sim_badge.current is None
        daemon.sim_badge.tap(STRANGER)
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
