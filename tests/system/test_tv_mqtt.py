"""The TV service on a real broker: it reads as `tv` over TLS and never publishes anything.

The table is the real daemon on the simulated boards; the broker is mosquitto with the
shipped kit (TLS, the `examples/mosquitto/acl` identities), and also an open one with no
ACL, where the TV client could publish if it tried: the broker's own log (`log_type all`)
shows every PUBLISH it received, with the client that sent it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.seal import SealError, open_sealed
from tests.broker import Mosquitto, Subscriber
from tests.tv_helpers import engine_messages, flop_plan, hand_events
from tests.tv_rig import PREFIX, SimTable, TvRig, wait_until

pytestmark = pytest.mark.timeout(120)
D = 30.0
SEAL = 3.0  # the table's release delay ([seal] delay), real seconds here
TV_CLIENT = "tablectl-tv-under-test"
FINALS = {1: ["Ah", "Kh"], 2: ["Qs", "Qc"], 3: ["7d", "6d"], 4: ["2c", "9s"]}


@pytest.fixture(params=["mosquitto_room", "mosquitto"])
def broker(request: pytest.FixtureRequest) -> Iterator[tuple[Mosquitto, str | None]]:
    """The shipped kit (TLS, ACL, passwords) and an open broker (anyone may publish)."""
    user = "tv" if request.param == "mosquitto_room" else None
    yield request.getfixturevalue(request.param), user


class TimedSubscriber(Subscriber):
    """A subscriber that also notes when each message arrived (monotonic seconds)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.arrivals: list[tuple[float, str, dict[str, Any]]] = []
        super().__init__(*args, **kwargs)

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        self.arrivals.append((time.monotonic(), msg.topic, json.loads(msg.payload)))
        super()._on_message(client, userdata, msg)


def test_tv_credentials_see_no_card_before_its_release_and_the_key_opens_the_card_read(
    tmp_path: Path, broker: tuple[Mosquitto, str | None]
) -> None:
    """A subscriber with the TV credentials gets every hole card sealed the moment it is
    read, and nothing that opens it until the table's delay has passed; the released key
    opens it to the very cards read; the TV service (whose own delay, 1 s, is shorter)
    shows no card before the key, and never publishes one."""
    mosquitto, user = broker
    tv_user = user
    table_user = "table-t01" if user else None
    rig = TvRig(delay=1.0, broker=mosquitto.broker_config(tv_user, client_id=TV_CLIENT))
    assert rig.service.subscriber is not None
    assert rig.service.subscriber.subscribed.wait(10)
    assert rig.service.subscriber.refused == []  # the ACL grants every TV topic
    spy = TimedSubscriber(
        mosquitto, [f"{PREFIX}/holecards", f"{PREFIX}/holekeys"], username=tv_user
    )
    table = SimTable(tmp_path, mosquitto, table_user, seal_delay=SEAL)
    feed = rig.reader("/feed/t01")
    try:
        table.play(hand_events(flop_plan()))
        assert wait_until(lambda: rig.desk.lookahead.hand.awarded, timeout=30)
        sealed = {p["seq"]: (at, p) for at, topic, p in spy.arrivals if topic.endswith("holecards")}
        assert sealed and all("cards" not in p and "sealed" in p for _, p in sealed.values())
        # no card on air yet, though the TV's own delay (1 s) has long passed on its clock
        rig.clock.advance(5.0)
        rig.settle()
        early_keys = [p for _, topic, p in spy.arrivals if topic.endswith("holekeys")]
        opened_early = {p["seq"] for p in early_keys}
        assert all(s["cards"] is None for f in feed.frames for s in f["seats"]), opened_early
        assert wait_until(lambda: len(rig.desk.holes.keys) == len(sealed), timeout=SEAL + 20)
        keys = {p["seq"]: (at, p) for at, topic, p in spy.arrivals if topic.endswith("holekeys")}
        assert set(keys) == set(sealed)
        for seq, (read_at, payload) in sealed.items():
            key_at, key = keys[seq]
            # nothing that opens a card before the table's delay from its read
            assert key_at - read_at >= SEAL - 0.25, (seq, key_at - read_at)
            assert key["t"] >= payload["t"] + SEAL - 1e-6
            # a wrong key (another message's) does not open it
            other = keys[seq % len(keys) + 1][1]["key"]
            with pytest.raises(SealError):
                open_sealed(payload, other)
        opened = {p["seat"]: open_sealed(p, keys[q][1]["key"]) for q, (_, p) in sealed.items()}
        assert {s: c for s, c in opened.items() if len(c) == 2} == FINALS
        rig.clock.advance(D)
        rig.settle()
        on_air = {s["seat"]: s["cards"] for f in feed.frames for s in f["seats"] if s["cards"]}
        assert on_air == FINALS
    finally:
        table.stop()
        spy.close()
        rig.close()
    log = mosquitto.log_file.read_text(errors="replace")
    assert "Received PUBLISH from tablectl-t01" in log  # the log does show publishers
    assert f"as {TV_CLIENT}" in log  # it did connect (mosquitto: "New client connected ...")
    assert f"Received PUBLISH from {TV_CLIENT}" not in log  # no hole was missed: no request
    # and the only hole cards on the broker are the table's: as many as the engine made
    made = [m for m in engine_messages(hand_events(flop_plan())) if m.topic == "holecards"]
    assert len(spy.messages("holecards")) == len(made)
