"""The TV service on a real broker: it reads as `tv` over TLS and never publishes anything.

The table is the real daemon on the simulated boards; the broker is mosquitto with the
shipped kit (TLS, the `examples/mosquitto/acl` identities), and also an open one with no
ACL, where the TV client could publish if it tried: the broker's own log (`log_type all`)
shows every PUBLISH it received, with the client that sent it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.broker import Mosquitto, Subscriber
from tests.tv_helpers import engine_messages, flop_plan, hand_events
from tests.tv_rig import PREFIX, SimTable, TvRig, wait_until

pytestmark = pytest.mark.timeout(120)
D = 30.0
TV_CLIENT = "tablectl-tv-under-test"


@pytest.fixture(params=["mosquitto_room", "mosquitto"])
def broker(request: pytest.FixtureRequest) -> Iterator[tuple[Mosquitto, str | None]]:
    """The shipped kit (TLS, ACL, passwords) and an open broker (anyone may publish)."""
    user = "tv" if request.param == "mosquitto_room" else None
    yield request.getfixturevalue(request.param), user


def test_the_tv_service_reads_every_hole_card_and_never_republishes_one(
    tmp_path: Path, broker: tuple[Mosquitto, str | None]
) -> None:
    mosquitto, user = broker
    tv_user = user
    table_user = "table-t01" if user else None
    rig = TvRig(delay=D, broker=mosquitto.broker_config(tv_user, client_id=TV_CLIENT))
    assert rig.service.subscriber is not None
    assert rig.service.subscriber.subscribed.wait(10)
    assert rig.service.subscriber.refused == []  # the ACL grants every TV topic
    spy = Subscriber(mosquitto, f"{PREFIX}/holecards", username=tv_user)
    table = SimTable(tmp_path, mosquitto, table_user)
    feed = rig.reader("/feed/t01")
    try:
        table.play(hand_events(flop_plan()))
        assert wait_until(lambda: rig.desk.lookahead.hand.awarded, timeout=30)
        hole = [json.loads(m.payload) for m in spy.messages()]
        finals = {h["seat"]: h["cards"] for h in hole if len(h["cards"]) == 2}
        assert finals == {1: ["Ah", "Kh"], 2: ["Qs", "Qc"], 3: ["7d", "6d"], 4: ["2c", "9s"]}
        rig.settle()
        assert all(s["cards"] is None for f in feed.frames for s in f["seats"])  # held back
        rig.clock.advance(D)
        rig.settle()
        on_air = {s["seat"]: s["cards"] for f in feed.frames for s in f["seats"] if s["cards"]}
        assert on_air == finals
    finally:
        table.stop()
        spy.close()
        rig.close()
    log = mosquitto.log_file.read_text(errors="replace")
    assert "Received PUBLISH from tablectl-t01" in log  # the log does show publishers
    assert f"as {TV_CLIENT}" in log  # it did connect (mosquitto: "New client connected ...")
    assert f"Received PUBLISH from {TV_CLIENT}" not in log
    # and the only hole cards on the broker are the table's: as many as the engine made
    made = [m for m in engine_messages(hand_events(flop_plan())) if m.topic == "holecards"]
    assert len(spy.messages()) == len(made)
