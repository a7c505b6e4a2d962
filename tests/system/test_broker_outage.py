"""The room broker goes away mid-hand, the daemon dies while it is away, the last will: no loss.

Real mosquitto (with persistence, so the room's persistent session and its QoS 1 backlog
survive the broker's restart), the daemon as `tablectl run` in a subprocess, reader boards
on ptys in this process. Which end holds what: while the broker is down the daemon's outbox
holds every message, in order; once the broker has acknowledged one (PUBACK) the broker holds
it for the room's persistent session; and across a daemon crash the journal holds the inputs
that regenerate every message the broker never acknowledged (the `acked` mark).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.schema import validate
from kernel.messages import Message
from tests.broker import Mosquitto, Received, Subscriber
from tests.table_rig import (
    PREFIX,
    Expectation,
    Player,
    Step,
    TableRig,
    events_of,
    poll,
    session,
    statuses,
    top_seq,
    without_t,
)

pytestmark = pytest.mark.timeout(300)

OUTAGE = 5.0  # seconds the broker stays down, at least
DEAL_SEED = 3  # two hands, each to the river


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    """A broker that keeps its sessions and retained messages across a restart."""
    with Mosquitto(tmp_path / "mosquitto", persistence=True) as mq:
        yield mq


def _first_step_reaching(expect: Expectation, steps: list[Step], kind: str, nth: int = 1) -> int:
    """The index of the step after which the `nth` event of type `kind` exists."""
    seqs = [e["seq"] for e in expect.events if e["type"] == kind]
    target = seqs[nth - 1]
    return next(k for k, seq in enumerate(expect.seq_after) if seq >= target)


def _in_arrival_order(messages: list[Received]) -> list[dict[str, Any]]:
    """Events in arrival order, each seq kept at its first arrival."""
    seen: set[int] = set()
    out: list[dict[str, Any]] = []
    for event in events_of(messages):
        if event["seq"] not in seen:
            seen.add(event["seq"])
            out.append(event)
    return out


def _room(broker: Mosquitto) -> Subscriber:
    return Subscriber(broker, f"{PREFIX}/#", client_id="room-server", persistent=True)


def test_broker_outage_mid_hand_loses_nothing_and_keeps_order(
    tmp_path: Path, broker: Mosquitto
) -> None:
    with TableRig(tmp_path / "rig", broker) as rig:
        steps = session(rig.config, 2, DEAL_SEED)
        expect = Expectation(rig.config, steps)
        room = _room(broker)
        try:
            player = Player(rig, room, steps, expect)
            player.start()
            assert rig.proc is not None
            pid = rig.proc.pid
            flop = _first_step_reaching(expect, steps, "board_dealt")
            player.play(range(flop + 1))
            before = top_seq(room)

            broker.stop()  # mid-hand, after the flop
            down_at = time.monotonic()
            k = flop + 1
            while k < len(steps) - 1 and (time.monotonic() - down_at < OUTAGE or k < flop + 8):
                player.play([k], room=False)  # the table plays on: journal only
                k += 1
            assert expect.seq_after[k - 1] > before + 3, "the outage must cover some events"
            assert top_seq(room) == before
            broker.start()  # same port, same persistence file

            player.play(range(k, len(steps)))
            final = expect.seq_after[-1]
            assert poll(lambda: top_seq(room) >= final, 60)
            assert rig.alive and rig.proc.pid == pid, "the daemon rode out the outage"

            got = _in_arrival_order(room.messages())
            assert [e["seq"] for e in got] == list(range(1, final + 1)), "order kept, no gap"
            assert [without_t(e) for e in got] == [without_t(e) for e in expect.events]
            assert statuses(room)[-1] == "online"
            assert rig.stop() == 0
            assert int((rig.journal.parent / "t09.journal.acked").read_text()) == final
        finally:
            room.close()


def test_events_the_broker_never_acknowledged_are_sent_after_a_crash(
    tmp_path: Path, broker: Mosquitto
) -> None:
    """A hand ends while the broker is down, then the daemon is SIGKILLed with those events
    still in its (memory) outbox: the restarted daemon regenerates them from the journal."""
    with TableRig(tmp_path / "rig", broker) as rig:
        steps = session(rig.config, 2, DEAL_SEED)
        expect = Expectation(rig.config, steps)
        room = _room(broker)
        try:
            player = Player(rig, room, steps, expect)
            player.start()
            turn = _first_step_reaching(expect, steps, "board_dealt", 2)
            player.play(range(turn + 1))
            acked_before = top_seq(room)

            broker.stop()
            second = _first_step_reaching(expect, steps, "hand_started", 2)
            player.play(range(turn + 1, second + 3), room=False)  # hand 1 ends, hand 2 starts
            rig.kill()  # its outbox is gone; only the journal knows
            broker.start()
            player.start()

            final = expect.seq_after[second + 2]
            assert poll(lambda: top_seq(room) >= final, 60)
            got = _in_arrival_order(room.messages())
            assert [e["seq"] for e in got] == list(range(1, final + 1))
            assert [without_t(e) for e in got] == [without_t(e) for e in expect.events[:final]]
            completed = [e for e in got if e["type"] == "hand_completed"]
            assert completed and completed[0]["seq"] > acked_before, (
                "the end of hand 1 was only ever in the dead daemon's outbox"
            )
            assert rig.stop() == 0
        finally:
            room.close()


def test_last_will_marks_the_table_offline_when_the_daemon_dies(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    with TableRig(tmp_path / "rig", mosquitto) as rig:
        watcher = Subscriber(mosquitto, f"{PREFIX}/status")
        try:
            rig.start()
            assert poll(lambda: statuses(watcher)[-1:] == ["online"], 30)
            rig.kill()  # no goodbye: the broker sees the connection drop
            assert poll(lambda: statuses(watcher)[-1:] == ["offline"], 30)
            last_will = json.loads(watcher.messages()[-1].payload)
            assert last_will["table"] == "t09"
            validate(Message("status", last_will, 1, True))

            late = Subscriber(mosquitto, f"{PREFIX}/status")  # e.g. a room server restarting
            try:
                assert late.wait_for(lambda m: len(m) >= 1, 10)
                first = late.messages()[0]
                assert first.retain and json.loads(first.payload)["state"] == "offline"
            finally:
                late.close()

            rig.start()
            assert poll(lambda: statuses(watcher)[-1:] == ["online"], 30)
            assert rig.stop() == 0
            assert poll(lambda: statuses(watcher)[-1:] == ["offline"], 10)  # said on the way out
        finally:
            watcher.close()
