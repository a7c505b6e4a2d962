"""The room command `resend`: the table publishes journaled events again, byte for byte."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from controller.commands import CommandError, parse_resend
from controller.config import Config, load_config
from controller.daemon import Daemon
from controller.engine.checkpoint import checkpoint
from controller.journal import list_segments, open_journal
from controller.resend import MAX_RANGE, ResendRequest
from controller.schema import validate
from kernel.inputs import Event
from kernel.messages import EVENTS, REPLIES, Message
from sim.demo import demo_script
from tests.broker import EXAMPLE_ACL, USERS, Mosquitto, Subscriber
from tests.table_rig import poll

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "sim-table.toml"
PREFIX = "poker/sim/t01"  # the room the shipped ACL pins


def _config(tmp_path: Path, *, segments: bool) -> Config:
    config = load_config(EXAMPLE)
    journal = dataclasses.replace(
        config.journal,
        path=None if segments else tmp_path / "t01.journal",
        directory=tmp_path / "journal" if segments else None,
    )
    return dataclasses.replace(config, journal=journal)


def _offline_daemon(config: Config) -> Daemon:
    """A daemon with its journal open but no broker and no devices: `handle` only."""
    daemon = Daemon(config)
    daemon.journal = open_journal(config.journal, config.table.id, now=1_700_000_000.0)
    assert daemon.journal is not None
    daemon.journal.write_checkpoint(daemon.engine.t, checkpoint(daemon.engine))
    return daemon


def _play(daemon: Daemon, events: list[Event]) -> list[Message]:
    published: list[Message] = []
    for event in events:
        published += daemon.handle([event])
    return published


def _events(messages: list[Message]) -> dict[int, bytes]:
    return {m.payload["seq"]: m.payload_bytes() for m in messages if m.topic == EVENTS}


def _resend(
    daemon: Daemon, first: int, last: int, rid: str = "r-1"
) -> tuple[dict[int, bytes], dict[str, Any]]:
    out = daemon.handle([ResendRequest(first, last, rid)])
    replies = [m for m in out if m.topic == REPLIES]
    assert len(replies) == 1
    assert out[-1].topic == REPLIES, "the reply comes after the events it announces"
    validate(replies[0])
    return _events(out), replies[0].payload


def test_resend_publishes_the_same_bytes_with_the_same_seq(tmp_path: Path) -> None:
    config = _config(tmp_path, segments=False)
    daemon = _offline_daemon(config)
    published = _events(_play(daemon, demo_script(config, 2, 3)))
    assert len(published) > 20
    again, reply = _resend(daemon, 5, 15)
    assert again == {seq: published[seq] for seq in range(5, 16)}
    assert reply["ok"] is True and reply["error"] is None
    assert reply["resent"] == 11 and reply["command"] == "resend" and reply["id"] == "r-1"
    # The reply is journaled (the shell's own message); the copies are not (already there).
    text = config.journal.path.read_text()  # type: ignore[union-attr]
    assert text.count('"command":"resend"') == 1
    copies = [ln for ln in text.splitlines() if ln.startswith('{"out":"events"')]
    assert sum('"seq":5,' in ln for ln in copies) == 1


def test_resend_beyond_the_last_seq_is_cut_there(tmp_path: Path) -> None:
    config = _config(tmp_path, segments=False)
    daemon = _offline_daemon(config)
    published = _events(_play(daemon, demo_script(config, 1, 4)))
    last = max(published)
    again, reply = _resend(daemon, last - 2, last + 50)
    assert sorted(again) == [last - 2, last - 1, last]
    assert reply["ok"] is True and reply["last_seq"] == last
    nothing, reply = _resend(daemon, last + 1, last + 5)
    assert nothing == {}
    assert reply["ok"] is False and f"last seq published is {last}" in reply["error"]


def test_resend_reads_closed_gzip_segments_and_says_what_retention_deleted(
    tmp_path: Path,
) -> None:
    config = _config(tmp_path, segments=True)
    daemon = _offline_daemon(config)
    script = demo_script(config, 4, 11)
    hand_starts = [i for i, e in enumerate(script) if getattr(e, "name", None) == "shuffler"]
    published: dict[int, bytes] = {}
    bounds = [*hand_starts[1:], len(script)]
    start = 0
    for end in bounds:  # one segment per hand: rotate between hands, as the daemon does
        published |= _events(_play(daemon, script[start:end]))
        start = end
        if daemon.engine.hand is None:
            assert daemon.journal is not None
            daemon.journal.rotate(checkpoint(daemon.engine), daemon.engine.t)
    segments = list_segments(config.journal.directory)  # type: ignore[arg-type]
    assert len(segments) >= 4 and all(p.name.endswith(".gz") for p in segments[:-1])
    everything, reply = _resend(daemon, 1, max(published))
    assert everything == published and reply["ok"] is True
    # Retention deletes the first two segments: their events are gone, and the reply says so.
    first_kept = min(_events_in(segments[2]))
    for path in segments[:2]:
        path.unlink()
    again, reply = _resend(daemon, 1, max(published), "r-2")
    assert again == {s: b for s, b in published.items() if s >= first_kept}
    assert reply["ok"] is False
    assert reply["missing"] == [[1, first_kept - 1]]
    assert f"events 1..{first_kept - 1} are no longer in the journal" in reply["error"]


def _events_in(segment: Path) -> list[int]:
    import gzip

    text = gzip.decompress(segment.read_bytes()).decode()
    return [
        json.loads(line)["payload"]["seq"]
        for line in text.splitlines()
        if line.startswith('{"out":"events"')
    ]


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        (b'{"from_seq": 1}', r"needs field 'to_seq'"),
        (b'{"from_seq": 0, "to_seq": 3}', r"'from_seq' must be an integer >= 1"),
        (b'{"from_seq": 5, "to_seq": 3}', r"to_seq 3 is before from_seq 5"),
        (b'{"from_seq": true, "to_seq": 3}', r"'from_seq' must be an integer"),
        (b'{"from_seq": 1, "to_seq": 2, "seat": 3}', r"has no field 'seat'"),
        (f'{{"from_seq": 1, "to_seq": {MAX_RANGE + 1}}}'.encode(), r"at most 10000 at once"),
        (b'{"name": "seat", "from_seq": 1, "to_seq": 2}', r"payload says 'seat'"),
        (b"[1, 2]", r"must be a JSON object"),
    ],
)
def test_malformed_resend_is_refused(payload: bytes, error: str) -> None:
    with pytest.raises(CommandError, match=error):
        parse_resend(payload)


def test_resend_over_mqtt_heals_what_a_subscriber_missed(tmp_path: Path) -> None:
    """The room asks on cmd/resend (as the `room` identity, through the shipped ACL); the
    table answers on its events topic with the very bytes it published, then replies."""
    config = _config(tmp_path, segments=True)
    broker = Mosquitto(tmp_path / "mosquitto", users=USERS, acl_file=EXAMPLE_ACL).start()
    daemon = Daemon(
        config, broker=broker.broker_config("table-t01", prefix=PREFIX, client_id="tablectl-t01")
    )
    room = Subscriber(broker, f"{PREFIX}/#", username="room")
    daemon.start()
    try:
        for event in demo_script(config, 1, 5):
            daemon.submit(event)
        assert poll(lambda: any(b'"hand_completed"' in m.payload for m in room.messages()), 30)
        first = [m.payload for m in room.messages(f"{PREFIX}/events")]
        assert len(first) > 10
        request = {"from_seq": 2, "to_seq": 6, "id": "heal-1"}
        room.publish(f"{PREFIX}/cmd/resend", json.dumps(request).encode())
        assert room.wait_for(
            lambda ms: any(b'"heal-1"' in m.payload for m in ms if m.topic.endswith("/replies")),
            20,
        )
        got = [m.payload for m in room.messages(f"{PREFIX}/events")]
        assert got[len(first) :] == first[1:6]  # seq 2..6, the same bytes, in order
        reply = json.loads(room.messages(f"{PREFIX}/replies")[-1].payload)
        assert reply["ok"] is True and reply["resent"] == 5
    finally:
        daemon.stop()
        room.close()
        broker.stop()
