"""A hole card is never retained, on any path a message takes to the broker.

A retained hole card would be served by the broker to anyone who subscribes later, for as
long as it is kept. The paths: what the engine makes (every scenario and demo hand, replayed
as the daemon would publish it); the publisher itself (any QoS, before or after connecting);
and the daemon, whose engine is made here to produce a retained hole card by mistake: the
publisher refuses it, the room is told, the rest of the same input's messages still go out,
and a restart (which publishes the journal's unacknowledged messages again) neither sends it
nor fails to start. In every case a subscriber arriving afterwards gets no hole card.
"""

from __future__ import annotations

import dataclasses
import io
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.engine import Engine
from controller.publisher import Publisher, PublishError
from controller.replay import replay
from controller.trace import load_trace
from kernel.inputs import ButtonPress, Command, Event, TagIn
from kernel.messages import HOLECARDS, Message
from sim.demo import demo_script
from tests.broker import Mosquitto, Received, Subscriber

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.jsonl"))
PREFIX = "poker/retain/t01"


def _holecards(lines: str) -> list[dict[str, Any]]:
    out = [json.loads(line) for line in lines.splitlines()]
    return [o for o in out if o["topic"].endswith("/holecards")]


def test_the_engine_never_makes_a_retained_hole_card() -> None:
    """Every scenario (misdeals and re-deals, exposed cards, four-card flops, all-ins) and
    forty demo hands, as `tablectl replay` prints what the daemon would publish."""
    config = load_config(EXAMPLE)
    seen = 0
    traces = [load_trace(p) for p in SCENARIOS if not p.name.endswith(".expected.jsonl")]
    traces.append(demo_script(config, 40, seed=3))
    for events in traces:
        out = io.StringIO()
        replay(config, events, out)
        for message in _holecards(out.getvalue()):
            assert message["retain"] is False and message["qos"] == 1, message
            seen += 1
    assert seen > 300


@pytest.fixture
def publisher(mosquitto: Mosquitto) -> Iterator[Publisher]:
    pub = Publisher(mosquitto.broker_config(), PREFIX, "retain-test", status={"table": "t01"})
    yield pub
    pub.stop()


def _late_holecards(broker: Mosquitto) -> list[bytes]:
    """What a subscriber arriving now gets on the hole-card topic (retained messages)."""
    with Subscriber(broker, f"{PREFIX}/#") as late:
        assert late.wait_for(lambda r: any(m.topic.endswith("/status") for m in r), 10)
        time.sleep(0.3)  # anything else retained arrives with the status
        return [m.payload for m in late.messages(f"{PREFIX}/{HOLECARDS}")]


@pytest.mark.parametrize("qos", [0, 1, 2])
def test_the_publisher_refuses_a_retained_hole_card_before_and_after_connecting(
    mosquitto: Mosquitto, publisher: Publisher, qos: int
) -> None:
    card = {"table": "t01", "hand": 1, "seat": 3, "cards": ["As", "Kd"], "t": 1.0}
    with pytest.raises(PublishError, match="never be retained"):
        publisher.publish(Message(HOLECARDS, card, qos=qos, retain=True))  # queued: not yet
    publisher.start()
    with pytest.raises(PublishError, match="never be retained"):
        publisher.publish(Message(HOLECARDS, card, qos=qos, retain=True))
    publisher.publish(Message(HOLECARDS, card, qos=qos, retain=False))  # this one goes
    assert publisher.wait_idle(10)
    assert publisher.stats()["published"] == 2  # the one card and the online status
    assert _late_holecards(mosquitto) == []


def _retaining(apply: Callable[[Engine, Event], list[Message]]) -> Any:
    """`Engine.apply` with a bug: every hole-card message it makes is retained."""

    def buggy(engine: Engine, event: Event) -> list[Message]:
        return [
            dataclasses.replace(m, retain=True) if m.topic == HOLECARDS else m
            for m in apply(engine, event)
        ]

    return buggy


def _config(tmp_path: Path) -> Config:
    config = load_config(EXAMPLE)
    return dataclasses.replace(
        config, journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal")
    )


def _refusals(messages: list[Received]) -> int:
    return sum(1 for m in messages if b'"publish_refused"' in m.payload)


def _card_in_state(messages: list[Received], seat: int) -> bool:
    """A `state` shows the seat holding a card (the message the same input made after the
    hole card)."""
    for m in messages:
        if m.topic.endswith("/state"):
            seats = json.loads(m.payload).get("seats") or {}
            if seats.get(str(seat), {}).get("cards"):
                return True
    return False


def test_a_retained_hole_card_from_the_engine_is_refused_and_the_table_goes_on(
    tmp_path: Path, mosquitto: Mosquitto, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Engine, "apply", _retaining(Engine.apply))
    config = _config(tmp_path)
    broker = mosquitto.broker_config(prefix=PREFIX, client_id="tablectl-t01")
    room = Subscriber(mosquitto, f"{PREFIX}/#")
    try:
        daemon = Daemon(config, broker=broker)
        daemon.start()
        try:
            for seat, name in ((1, "Alice"), (2, "Bruno")):
                args = {"seat": seat, "player": name, "stack": 5000, "id": f"s{seat}"}
                daemon.submit(Command(daemon.now(), "seat", args))
            daemon.submit(Command(daemon.now(), "button", {"seat": 2, "id": "b"}))
            daemon.submit(ButtonPress(daemon.now(), "shuffler"))
            daemon.submit(TagIn(daemon.now(), "seat1", card="As"))
            assert room.wait_for(lambda ms: _refusals(ms) >= 1, 10), room.messages()
            # The same input's next message (the state showing the card) still went out.
            assert room.wait_for(lambda ms: _card_in_state(ms, 1), 10)
            # And the daemon goes on taking inputs.
            daemon.submit(TagIn(daemon.now(), "seat2", card="Kd"))
            assert room.wait_for(lambda ms: _refusals(ms) >= 2 and _card_in_state(ms, 2), 10)
            assert daemon.failed is None and daemon.applied >= 6
        finally:
            daemon.stop()
        # A restart publishes the messages after the broker's last acknowledged event again
        # (both hole cards): refused again, and the daemon starts all the same.
        again = Daemon(config, broker=broker)
        again.start()
        try:
            assert room.wait_for(lambda ms: _refusals(ms) >= 4, 10), _refusals(room.messages())
            assert again.failed is None and again.engine.hand is not None
        finally:
            again.stop()
        assert room.messages(HOLECARDS) == []
        alert = next(json.loads(m.payload) for m in room.messages("alerts") if _refusals([m]))
        assert alert["severity"] == "critical" and alert["topic"] == HOLECARDS
        assert "As" not in json.dumps(alert)  # the alert does not leak the card either
    finally:
        room.close()
    assert _late_holecards(mosquitto) == []
