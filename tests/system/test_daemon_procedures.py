"""End to end: a four-card flop through the simulated table, the daemon and a real broker.

The table lights the floor and pending lamps (GPIO outputs) and holds (the script's check
and bet are refused), the floor's badge brings the random draw (RP-14) that the daemon makes
and journals, the readers verify the remedy, the table is released, and the lamps go out.
A room `staff` command rewrites the staff registry file.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from controller.config import load_config
from controller.daemon import Daemon
from controller.staff import load_staff
from controller.trace import load_trace
from kernel.inputs import Event, TagIn, TagOut
from sim.player import ScriptPlayer
from tests.broker import Mosquitto, Received, Subscriber

pytestmark = pytest.mark.timeout(180)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"
SCENARIO = ROOT / "tests" / "scenarios" / "rule_39_four_card_flop_floor_draws_the_burn.jsonl"
PREFIX = "poker/sim/t01"


def _payloads(msgs: list[Received], kind: str) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in msgs if m.topic == f"{PREFIX}/{kind}"]


def _event(kind: str):  # type: ignore[no-untyped-def]
    return lambda msgs: any(e["type"] == kind for e in _payloads(msgs, "events"))


def _alert(kind: str):  # type: ignore[no-untyped-def]
    return lambda msgs: any(a["type"] == kind for a in _payloads(msgs, "alerts"))


def _until_draw(events: list[Event]) -> tuple[list[Event], list[Event]]:
    """The scenario up to the floor's badge, and what follows the table's draw command."""
    at = next(i for i, e in enumerate(events) if getattr(e, "name", "") == "draw")
    return events[:at], events[at + 1 :]


def _daemon(tmp_path: Path, mosquitto_acl: Mosquitto) -> Daemon:
    staff = tmp_path / "staff.toml"
    shutil.copy(ROOT / "examples" / "staff" / "sim-staff.toml", staff)
    config = load_config(EXAMPLE)
    config = dataclasses.replace(
        config,
        journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal"),
        badge=dataclasses.replace(config.badge, staff=staff),
    )
    broker = mosquitto_acl.broker_config("table-t01", prefix=PREFIX, client_id="tablectl-t01")
    return Daemon(config, broker=broker)


def test_rule_39_four_card_flop_end_to_end_with_lamps_and_the_tables_draw(
    tmp_path: Path, mosquitto_acl: Mosquitto
) -> None:
    daemon = _daemon(tmp_path, mosquitto_acl)
    room = Subscriber(mosquitto_acl, "poker/#", username="room")
    daemon.start()
    try:
        lamps = daemon.config.gpio.lamps
        before, after = _until_draw(load_trace(SCENARIO))
        player = ScriptPlayer(daemon, speed=4.0)
        badge_at = next(i for i, e in enumerate(before) if type(e).__name__ == "Badge")
        player.play(before[:badge_at])
        assert room.wait_for(_event("four_card_flop"), 30), room.messages()
        deadline = time.monotonic() + 10
        while not daemon.devices.gpio.level(lamps["floor"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        gpio = daemon.devices.gpio
        assert gpio.level(lamps["floor"]) and gpio.level(lamps["pending"])
        # The table holds (rule 39): the script's check and bet before the floor are refused.
        assert room.wait_for(_alert("action_refused"), 30), room.messages()
        player.perform(before[badge_at])  # the floor's badge: the table draws the burn
        assert room.wait_for(_event("burn_drawn"), 30), room.messages()
        drawn = next(e for e in _payloads(room.messages(), "events") if e["type"] == "burn_drawn")
        assert drawn["card"] in drawn["cards"] and len(drawn["cards"]) == 4
        assert drawn["floor"]["name"] == "Giulia Ferrari"
        # The dealer moves the drawn card to the burn; the rest of the scenario follows.
        rest = [e for e in after if getattr(e, "card", None) != "Kc"]
        player.perform(TagOut(t=0.0, antenna="board", card=drawn["card"]))
        player.perform(TagIn(t=0.0, antenna="burn", card=drawn["card"]))
        # The dealer goes on once the table is released (the card reader is slower than the
        # dealer panel: a check pressed before the burn is read would be refused).
        assert room.wait_for(_alert("table_released"), 30), room.messages()
        # The flop's four checks, then the turn once the last is in: the script has the
        # turn 50 ms after it (12 ms at this speed), less than a button press and a card
        # read may differ by on a loaded machine (it would be a premature turn, RP-5B).
        turn = next(i for i, e in enumerate(rest) if getattr(e, "card", None) == "Qh")
        checks = sum(1 for e in _payloads(room.messages(), "events") if e.get("action") == "check")
        player.play(rest[:turn])

        def flop_checked(msgs: list[Received]) -> bool:
            done = [e for e in _payloads(msgs, "events") if e.get("action") == "check"]
            return len(done) >= checks + 4

        assert room.wait_for(flop_checked, 30), room.messages()
        player.play(rest[turn:])
        assert room.wait_for(_event("procedure_completed"), 30), room.messages()
        done = next(
            e for e in _payloads(room.messages(), "events") if e["type"] == "procedure_completed"
        )
        assert (done["procedure"], done["burn"]) == ("four_card_flop", drawn["card"])
        deadline = time.monotonic() + 10
        while daemon.devices.gpio.level(lamps["pending"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not gpio.level(lamps["pending"]) and not gpio.level(lamps["floor"])
    finally:
        daemon.stop()
        room.close()
    journal = (tmp_path / "t01.journal").read_text()
    assert '"name":"draw"' in journal.replace(" ", "")  # the random draw is an input


def test_room_staff_command_rewrites_the_staff_registry(
    tmp_path: Path, mosquitto_acl: Mosquitto
) -> None:
    daemon = _daemon(tmp_path, mosquitto_acl)
    room = Subscriber(mosquitto_acl, "poker/#", username="room")
    daemon.start()
    try:
        payload = {"uid": "04ABCDEF000001", "person": "Nuovo Floor", "role": "floor", "id": "s1"}
        room.publish(f"{PREFIX}/cmd/staff", json.dumps(payload).encode())

        def replied(msgs: list[Received]) -> bool:
            return any(r.get("id") == "s1" for r in _payloads(msgs, "replies"))

        assert room.wait_for(replied, 30), room.messages()
        reply = next(r for r in _payloads(room.messages(), "replies") if r["id"] == "s1")
        assert reply["ok"] is True
        registry = load_staff(daemon.config.badge.staff)  # type: ignore[arg-type]
        member = registry.get("04ABCDEF000001")
        assert member is not None and (member.name, member.role) == ("Nuovo Floor", "floor")
        assert len(registry) == 4
    finally:
        daemon.stop()
        room.close()
