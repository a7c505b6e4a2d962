"""Journal before effect: every published message is journaled (and committed) before it is
published, and a journal that cannot be written stops the daemon without losing an event."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import pytest

from controller.config import load_config
from controller.daemon import Daemon
from controller.engine import Engine
from controller.items import DeviceAlert, RefusedCommand
from controller.journal import Output, open_journal, read_trace_file
from controller.replay import Step, replay_path
from controller.trace import event_to_json
from kernel.errors import DeviceError
from kernel.inputs import ButtonPress, Command, TagIn, Tick
from kernel.messages import EVENTS, Message
from tests.journal_session import SEATS, offline_daemon, sim_config

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim-table.toml"


class JournalProbe:
    """Stands where the publisher is: at each publish, reads the journal file as it is on
    disk and keeps whether the message's `out` record is already there."""

    def __init__(self, journal: Path) -> None:
        self.journal = journal
        self.published: list[tuple[Message, bool]] = []

    def publish(self, message: Message) -> None:
        recorded = [o.message for outs in self._outputs().values() for o in outs]
        self.published.append((message, message in recorded))

    def _outputs(self) -> dict[int, Any]:
        return read_trace_file(self.journal).outputs


def test_every_published_message_is_in_the_journal_before_it_is_published(
    tmp_path: Path,
) -> None:
    config = load_config(EXAMPLE)
    path = tmp_path / "t01.journal"
    config = dataclasses.replace(config, journal=dataclasses.replace(config.journal, path=path))
    daemon = Daemon(config, clock=lambda: 1_700_000_000.0)
    daemon.journal = journal = open_journal(config.journal, config.table.id, now=1_700_000_000.0)
    assert journal is not None
    probe = JournalProbe(path)
    daemon.publisher = probe  # type: ignore[assignment]
    seat = {"seat": 1, "player": "Alice", "stack": 20000, "id": "r1"}
    daemon.handle(
        [
            Command(0.0, "seat", seat),
            Command(0.0, "seat", {**seat, "seat": 2, "player": "Bruno", "id": "r2"}),
            Command(0.0, "button", {"seat": 2, "id": "r3"}),
            ButtonPress(1.0, "shuffler"),
            TagIn(1.5, "seat1", card="As"),
        ]
    )
    daemon.handle([DeviceAlert("reader_silent", "card_reader: no frame for 3 s", {})])
    daemon.handle([RefusedCommand("level", "r4", "field 'big_blind' must be an integer")])
    journal.close()

    topics = [m.topic for m, _ in probe.published]
    assert {"replies", "events", "state", "holecards", "alerts"} <= set(topics)
    assert [m for m, journaled in probe.published if not journaled] == []
    # The journal replays to exactly what was published, the shell's own messages included.
    out = io.StringIO()
    result = replay_path(config, path, out)
    assert result.mismatches == []
    replayed = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["payload"] for r in replayed] == [m.payload for m, _ in probe.published]


def test_a_journal_without_output_records_replays_unverified(tmp_path: Path) -> None:
    """Journals written before outputs were journaled hold inputs only: nothing to check."""
    config = sim_config(tmp_path)
    path = tmp_path / "old.journal"
    path.write_text(
        "# tablectl-journal v1 epoch=1700000000.000000 table=t01\n"
        + "".join(event_to_json(e) + "\n" for e in SEATS)
    )
    out = io.StringIO()
    result = replay_path(config, path, out)
    assert result.mismatches == [] and result.messages > 0


def test_an_input_the_engine_failed_on_replays_as_it_went_live(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug that makes the engine raise on one input: live, the input is journaled and an
    engine_fault alert published; replay and recovery go past it the same way."""
    original = Engine.apply

    def apply(engine: Engine, event: Any) -> list[Message]:
        if isinstance(event, ButtonPress) and event.name == "exposed":
            raise RuntimeError("injected engine bug")
        return original(engine, event)

    monkeypatch.setattr(Engine, "apply", apply)
    config = sim_config(tmp_path)
    daemon = offline_daemon(config)
    daemon.handle([*SEATS, ButtonPress(1.0, "exposed"), ButtonPress(2.0, "shuffler")])
    assert daemon.journal is not None
    daemon.journal.close()
    out = io.StringIO()
    result = replay_path(config, tmp_path / "t01.journal", out)
    assert result.mismatches == []
    types = [json.loads(line)["payload"].get("type") for line in out.getvalue().splitlines()]
    assert "engine_fault" in types and "hand_started" in types  # and it went on


def test_an_effect_that_fails_after_the_commit_is_told_and_the_next_input_goes_on(
    tmp_path: Path,
) -> None:
    config = sim_config(tmp_path)
    daemon = offline_daemon(config)
    probe = JournalProbe(tmp_path / "t01.journal")
    daemon.publisher = probe  # type: ignore[assignment]

    def broken_lamps(out: list[Message]) -> None:
        raise DeviceError("GPIO17: lamp driver not answering")

    daemon.register_event_handler("table:committed", broken_lamps)
    daemon.handle(SEATS[:1])
    daemon.handle(SEATS[1:])
    faults = [m.payload for m, _ in probe.published if m.payload.get("type") == "daemon_fault"]
    assert len(faults) == 2 and "lamp driver" in faults[0]["message"]
    assert all(journaled for _, journaled in probe.published)
    assert daemon.engine.seats[2].player == "Bruno"


def test_the_alert_that_the_staff_file_was_not_saved_is_journaled_before_it_is_published(
    tmp_path: Path,
) -> None:
    """After the commit, a failure (the staff file cannot be rewritten) is told to the room,
    and that alert, like every other message, is journaled before it is published."""
    staff_dir = tmp_path / "staff"
    staff_dir.mkdir()
    staff = staff_dir / "staff.toml"
    staff.write_text((EXAMPLE.parent / "staff" / "sim-staff.toml").read_text())
    config = sim_config(tmp_path)
    config = dataclasses.replace(config, badge=dataclasses.replace(config.badge, staff=staff))
    daemon = offline_daemon(config)
    probe = JournalProbe(tmp_path / "t01.journal")
    daemon.publisher = probe  # type: ignore[assignment]
    staff_dir.rename(tmp_path / "moved")
    staff_dir.write_text("a file where the staff directory was: the file cannot be written")
    request = {"uid": "04DEADBEEF0001", "person": "Eva Neri", "role": "dealer", "id": "s1"}
    daemon.handle([Command(0.0, "staff", request)])
    alerts = [m.payload for m, _ in probe.published if m.topic == "alerts"]
    assert [a["type"] for a in alerts] == ["staff_registry_not_saved"]
    assert all(journaled for _, journaled in probe.published)


TICK = Tick(1.0)


def _started(**extra: object) -> Message:
    payload = {"type": "hand_started", "seq": 3, "table": "t01", "hand": 1, "button": 4}
    return Message(EVENTS, {**payload, **extra}, 1, False)


def test_a_journal_of_an_earlier_release_replays_without_a_mismatch_where_fields_were_added() -> (
    None
):
    """A release that adds fields to a message (the contract extends, never renames or
    drops) replays an earlier release's journal without `journal_mismatch`; a field whose
    value differs, or one the journal has and the replay lost, is still a difference."""
    was = [Output(1.0, "engine", _started())]
    assert Step(TICK, [_started(players={"4": "Anna"})], was).mismatch() is None
    assert Step(TICK, [_started(button=5, players={})], was).mismatch() is not None
    lost = [Output(1.0, "engine", _started(game="nlhe"))]
    assert Step(TICK, [_started(players={})], lost).mismatch() is not None
    assert Step(TICK, [_started(), _started()], was).mismatch() is not None
