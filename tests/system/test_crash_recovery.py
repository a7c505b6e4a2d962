"""SIGKILL the daemon at 50+ random points of a multi-hand session: no event is lost or changed.

The reader boards are simulated here on real ptys (the physical truth survives the kill),
the daemon is `tablectl run` in a subprocess on a real mosquitto, buttons are pressed
through its GPIO control socket. Each kill point is a step of the session and a delay after
it (the kill may land before, while or after the daemon journals the step); sometimes the
next dealer motion is made while the daemon is down (the inventory on reconnect must catch
it), sometimes the daemon is killed again while it recovers. A button press or room command
the daemon never journaled is made again once it is back, as a dealer would on seeing no
reaction. The room's `events`, de-duplicated by `seq`, must equal an uninterrupted run of
the same session; copies of one `seq` must be identical. Reproduce a failure with
RESILIENCE_SEED=<seed printed in the assertion>.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.broker import Mosquitto, Subscriber
from tests.table_rig import (
    PREFIX,
    Expectation,
    Player,
    Step,
    TableRig,
    dedup,
    env_seed,
    events_of,
    poll,
    seeded,
    session,
    top_seq,
    without_t,
)

pytestmark = pytest.mark.timeout(900)

HANDS = 3
DEAL_SEED = 7
KILL_POINTS = 50
DOWNTIME = 2.5  # systemd's RestartSec=2 plus a start: longer than a push takes to settle


@dataclass
class Run:
    """One session played on a rig, and what the room saw."""

    events: dict[int, dict[str, Any]]
    state: dict[str, Any]
    kills: int = 0
    redone: int = 0
    while_down: int = 0
    segments: int = 0


def _play(
    workdir: Path,
    broker: Mosquitto,
    steps: list[Step],
    expect: Expectation,
    kills: dict[int, float],
    seed: int,
) -> Run:
    rng = seeded(seed + 1)
    # The layout the unit recommends: segments, rotated between hands (small ones here, so
    # kills also land around rotations and recoveries start from checkpoints).
    with TableRig(workdir, broker, segments=True) as rig:
        room = Subscriber(broker, f"{PREFIX}/#")
        try:
            player = Player(rig, room, steps, expect)
            player.start()
            player.play(range(len(steps)), seed=seed, kills=kills, rng=rng)
            final = expect.seq_after[-1]
            assert poll(lambda: top_seq(room) >= final, 30), f"seed {seed}: events missing"
            assert rig.stop() == 0, rig.log.read_text()[-3000:]
            events = dedup(events_of(room.messages()))
            states = [json.loads(m.payload) for m in room.messages(f"{PREFIX}/state")]
            return Run(
                events=events,
                state=states[-1],
                kills=rig.kills,
                redone=player.redone,
                while_down=player.while_down,
                segments=len(rig.journal_segments()),
            )
        finally:
            room.close()


def test_sigkill_at_random_points_loses_no_event(tmp_path: Path, mosquitto: Mosquitto) -> None:
    seed = env_seed(20240611)
    rng = seeded(seed)
    probe = TableRig(tmp_path / "probe", mosquitto)  # only for its configuration
    steps = session(probe.config, HANDS, DEAL_SEED)
    expect = Expectation(probe.config, steps)
    assert len(steps) > KILL_POINTS + 20

    # The uninterrupted run of the session, on its own broker.
    with Mosquitto(tmp_path / "mq-reference") as other:
        reference = _play(tmp_path / "reference", other, steps, expect, {}, seed)
    want = [without_t(e) for e in expect.events]
    assert [without_t(e) for _, e in sorted(reference.events.items())] == want, (
        "the daemon's uninterrupted run differs from the engine's"
    )

    # The same session, killed at KILL_POINTS random steps, each after a random delay.
    points = sorted(rng.sample(range(len(steps)), KILL_POINTS))
    kills = {k: rng.choice([0.0, rng.uniform(0.0, 0.05), rng.uniform(0.05, 0.4)]) for k in points}
    crashed = _play(tmp_path / "crashed", mosquitto, steps, expect, kills, seed)

    assert crashed.kills >= KILL_POINTS
    got = [without_t(e) for _, e in sorted(crashed.events.items())]
    assert sorted(crashed.events) == list(range(1, len(crashed.events) + 1)), (
        f"seed {seed}: seq has gaps"
    )
    assert got == [without_t(e) for _, e in sorted(reference.events.items())], (
        f"seed {seed}: the crashed run's events differ from the uninterrupted run"
    )
    assert without_t(crashed.state) == without_t(reference.state), f"seed {seed}: final state"
    # The plan really exercised the interesting cases.
    assert crashed.while_down > 0
    assert crashed.segments > 1, "the journal never rotated"


def _blind_push(steps: list[Step]) -> int:
    """The big blind's push: the first push of two chips or more."""
    return next(
        k
        for k, s in enumerate(steps)
        if len(s.moves) >= 2 and all(m.op == "in" and m.antenna.startswith("bet") for m in s.moves)
    )


def _journaled(rig: TableRig, uid: str) -> bool:
    return any(getattr(e, "uid", None) == uid for e in rig.journal_inputs())


@pytest.mark.parametrize("cut", ["before_the_crash", "before_the_restart_reads_the_board"])
def test_a_push_cut_by_a_restart_is_read_as_one_push(
    tmp_path: Path, mosquitto: Mosquitto, cut: str
) -> None:
    """Two chips of one push with the daemon's death in between: the first one journaled
    before the SIGKILL, or placed while it was down and read by the restarted daemon's
    catch-up just before the second arrives live. Either way one push, not two."""
    with TableRig(tmp_path / "rig", mosquitto, settle=1.0) as rig:
        steps = session(rig.config, 1, DEAL_SEED)
        expect = Expectation(rig.config, steps)
        room = Subscriber(mosquitto, f"{PREFIX}/#")
        try:
            player = Player(rig, room, steps, expect)
            player.start()
            k = _blind_push(steps)
            player.play(range(k))
            first, *rest = steps[k].moves
            if cut == "before_the_crash":
                rig.move(first)
                assert poll(lambda: _journaled(rig, first.uid), 10)
                rig.kill()
                for move in rest:
                    rig.move(move)  # while the daemon is down
                time.sleep(DOWNTIME)
                player.start()
            else:
                rig.kill()
                rig.move(first)  # while the daemon is down
                time.sleep(DOWNTIME)
                player.start()
                assert poll(lambda: _journaled(rig, first.uid), 30)  # the catch-up
                for move in rest:
                    rig.move(move)  # live, right after
            player.made.add(k)
            player.play(range(k, len(steps)))
            final = expect.seq_after[-1]
            assert poll(lambda: top_seq(room) >= final, 30)
            got = [without_t(e) for _, e in sorted(dedup(events_of(room.messages())).items())]
            assert got == [without_t(e) for e in expect.events]
            assert rig.stop() == 0
        finally:
            room.close()
