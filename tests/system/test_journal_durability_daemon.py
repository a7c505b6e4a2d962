"""Journal before effect through a started daemon and a real mosquitto: a journal that cannot
be written stops the daemon and loses nothing, restarts complete a torn input, the staff
file and a clean stop between hands are journaled as the replay needs them."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import pytest

from controller.config import load_config
from controller.daemon import Daemon
from controller.journal import read_journal_dir, read_trace_file
from controller.replay import replay_path
from kernel.inputs import Badge, Command
from tests.broker import Mosquitto, Received, Subscriber
from tests.journal_session import EXAMPLE, SEATS, offline_daemon, sim_config
from tests.table_rig import (
    PREFIX,
    STEP_TIMEOUT,
    Expectation,
    Player,
    TableRig,
    dedup,
    events_of,
    poll,
    session,
    top_seq,
    without_t,
)

LIMIT = 20_000  # bytes: a whole hand journals about 37 KB, so this is hit mid-hand


@pytest.mark.timeout(300)
def test_a_journal_that_cannot_be_written_stops_the_daemon_and_loses_nothing(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """RLIMIT_FSIZE makes the journal's writes fail mid-hand (EFBIG, as a full disk does).
    The daemon publishes nothing it could not journal, says so on `alerts`, exits 1 (for
    systemd to restart it); restarted with room to write, it recovers from the journal and
    the room's events, de-duplicated by seq, are exactly the uninterrupted session's."""
    with TableRig(tmp_path / "rig", mosquitto, file_size_limit=LIMIT) as rig:
        steps = session(rig.config, 1, 7)
        expect = Expectation(rig.config, steps)
        room = Subscriber(mosquitto, f"{PREFIX}/#")
        try:
            player = Player(rig, room, steps, expect)
            player.start()
            stopped_at: int | None = None
            for k, step in enumerate(steps):
                player.perform(step)
                assert poll(lambda k=k: player.done(k) or not rig.alive, STEP_TIMEOUT, 0.02)  # type: ignore[misc]
                if rig.alive:
                    continue
                assert stopped_at is None, "stopped twice"
                stopped_at = k
                assert rig.stop() == 1, rig.log.read_text()[-3000:]
                assert "journal failed" in rig.log.read_text()
                assert rig.journal.stat().st_size <= LIMIT
                rig.file_size_limit = None
                player.start()
                if player.lost():  # the press or command that failed to be journaled
                    player.perform(step, again=True)
                player.wait_done(k, 0)
            assert stopped_at is not None, "the journal never reached the limit"
            final = expect.seq_after[-1]
            assert poll(lambda: top_seq(room) >= final, 30)
            assert rig.stop() == 0
            got = dedup(events_of(room.messages()))
            assert sorted(got) == list(range(1, final + 1)), "seq has gaps"
            assert [without_t(e) for _, e in sorted(got.items())] == [
                without_t(e) for e in expect.events
            ]
            alerts = [json.loads(m.payload) for m in room.messages(f"{PREFIX}/alerts")]
            assert [a["type"] for a in alerts if a["type"] == "journal_failed"] == [
                "journal_failed"
            ]
        finally:
            room.close()


def _journal_messages(subscriber: Subscriber, kind: str) -> list[dict[str, Any]]:
    return [json.loads(m.payload) for m in subscriber.messages(f"{PREFIX_SIM}/{kind}")]


PREFIX_SIM = "poker/sim/t01"


@pytest.mark.timeout(120)
def test_a_journal_replays_with_the_staff_it_started_with(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """A badge refused as unknown, then registered by a room command (which rewrites the
    staff file): after a restart the journal still says it was refused, because a new
    journal opens with a checkpoint holding the staff registry it started with."""
    staff = tmp_path / "staff.toml"
    staff.write_text((EXAMPLE.parent / "staff" / "sim-staff.toml").read_text())
    config = load_config(EXAMPLE)
    config = dataclasses.replace(
        config,
        journal=dataclasses.replace(config.journal, path=tmp_path / "t01.journal"),
        badge=dataclasses.replace(config.badge, staff=staff),
    )
    broker = mosquitto.broker_config(prefix=PREFIX_SIM, client_id="tablectl-t01")
    room = Subscriber(mosquitto, f"{PREFIX_SIM}/#")
    stranger = "04DEADBEEF0001"
    try:
        daemon = Daemon(config, broker=broker)
        daemon.start()
        daemon.submit(Badge(daemon.now(), stranger))
        assert room.wait_for(lambda ms: any(b'"badge_unknown"' in m.payload for m in ms), 10), (
            "the unknown badge was not refused"
        )
        request = {"uid": stranger, "person": "Eva Neri", "role": "dealer", "id": "s1"}
        daemon.commands.submit("staff", json.dumps(request).encode())
        assert room.wait_for(lambda ms: any(b'"s1"' in m.payload for m in ms), 10)
        daemon.stop()
        assert stranger in staff.read_text()  # the file follows the room's command

        again = Daemon(config, broker=broker)
        again.start()
        try:
            assert stranger in again.engine.staff  # the command is journaled: still there
        finally:
            again.stop()
        alerts = [a["type"] for a in _journal_messages(room, "alerts")]
        assert "journal_mismatch" not in alerts
        out = io.StringIO()
        result = replay_path(config, tmp_path / "t01.journal", out)
        assert result.mismatches == []
        replayed = [json.loads(line)["payload"] for line in out.getvalue().splitlines()]
        assert [p["type"] for p in replayed if p.get("type") == "badge_unknown"] == [
            "badge_unknown"
        ]
        assert not any(p.get("type") == "dealer_changed" for p in replayed)
    finally:
        room.close()


@pytest.mark.timeout(120)
def test_a_journal_cut_inside_an_inputs_messages_is_completed_at_the_restart(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """The process died after journaling an input and only part of its messages (nothing of
    it was published: that comes after the commit). The restart records the rest before
    anything follows, so the journal never shows a difference later."""
    config = sim_config(tmp_path)
    broker = mosquitto.broker_config(prefix="poker/torn/t01", client_id="torn-t01")
    first = offline_daemon(config)
    first.handle(SEATS)
    assert first.journal is not None
    first.journal.close()
    path = tmp_path / "t01.journal"
    lines = path.read_text().split("\n")
    last_input = max(i for i, line in enumerate(lines) if line.startswith('{"t"'))
    assert lines[last_input + 2].startswith('{"out"')  # it had two messages or more
    path.write_text("\n".join(lines[: last_input + 2]) + "\n")  # keep only the first

    room = Subscriber(mosquitto, "poker/torn/t01/#")
    try:
        for request in ("x1", "x2"):  # two restarts, an input between them
            daemon = Daemon(config, broker=broker)
            daemon.start()
            daemon.commands.submit("pause", json.dumps({"id": request}).encode())

            def answered(ms: list[Received], r: str = request) -> bool:
                return any(r.encode() in m.payload for m in ms)

            assert room.wait_for(answered)
            daemon.stop()
        alerts = [json.loads(m.payload)["type"] for m in room.messages("poker/torn/t01/alerts")]
        assert "journal_mismatch" not in alerts
    finally:
        room.close()
    result = replay_path(config, path, io.StringIO())
    assert result.mismatches == []
    torn = read_trace_file(path).outputs[last_input - 1]  # positions count the inputs
    assert len([o for o in torn if o.src == "engine"]) >= 2


@pytest.mark.timeout(120)
def test_a_staff_file_edited_while_stopped_is_taken_at_start_as_journaled_commands(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    staff = tmp_path / "staff.toml"
    staff.write_text((EXAMPLE.parent / "staff" / "sim-staff.toml").read_text())
    config = sim_config(tmp_path)
    config = dataclasses.replace(config, badge=dataclasses.replace(config.badge, staff=staff))
    broker = mosquitto.broker_config(prefix="poker/staff/t01", client_id="staff-t01")
    first = Daemon(config, broker=broker)
    first.start()
    first.stop()
    assert "04B2C3D4E5F607" in first.engine.staff  # Luca Bianchi, a dealer
    # The floor manager edits the file while the table is stopped: Luca leaves, Eva joins.
    text = staff.read_text().replace('uid = "04B2C3D4E5F607"', 'uid = "04E5E5E5E5E5E5"')
    staff.write_text(text.replace('name = "Luca Bianchi"', 'name = "Eva Neri"'))

    again = Daemon(config, broker=broker)
    again.start()
    try:

        def adopted() -> bool:
            staff_now = again.engine.staff
            return "04E5E5E5E5E5E5" in staff_now and "04B2C3D4E5F607" not in staff_now

        assert poll(adopted, 10)
    finally:
        again.stop()
    journaled = read_trace_file(tmp_path / "t01.journal").events
    changes = [e for e in journaled if isinstance(e, Command) and e.name == "staff"]
    assert [c.args for c in changes] == [
        {"uid": "04E5E5E5E5E5E5", "person": "Eva Neri", "role": "dealer"},
        {"uid": "04B2C3D4E5F607", "remove": True},
    ]
    assert replay_path(config, tmp_path / "t01.journal", io.StringIO()).mismatches == []


@pytest.mark.timeout(120)
def test_a_clean_stop_between_hands_starts_a_new_segment(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """So the next start, maybe of an updated version, replays nothing this run journaled."""
    config = sim_config(tmp_path)
    journal = dataclasses.replace(config.journal, path=None, directory=tmp_path / "journal")
    config = dataclasses.replace(config, journal=journal)
    broker = mosquitto.broker_config(prefix="poker/stop/t01", client_id="stop-t01")
    first = Daemon(config, broker=broker)
    first.start()
    for command in SEATS:
        first.commands.submit(command.name, json.dumps(command.args).encode())
    assert poll(lambda: first.engine.seats[2].player == "Bruno", 10)
    first.stop()
    segments = read_journal_dir(tmp_path / "journal")
    assert [len(s.events) > 0 for s in segments] == [True, False]
    assert segments[-1].checkpoint is not None
    again = Daemon(config, broker=broker)
    again.start()
    try:
        assert again.journal is not None and again.journal.events == []  # nothing replayed
        assert again.engine.seats[2].player == "Bruno"
        assert again.engine.seq == first.engine.seq
    finally:
        again.stop()
    assert len(read_journal_dir(tmp_path / "journal")) == 2  # nothing new: no rotation
