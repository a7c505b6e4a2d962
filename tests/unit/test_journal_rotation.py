"""Journal segments: rotation between hands with checkpoints, retention, recovery, replay."""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import subprocess
from pathlib import Path

import pytest

from controller.config import load_config
from controller.engine.checkpoint import VERSION, checkpoint, restore
from controller.journal import (
    SEGMENT_RE,
    SegmentedJournal,
    list_segments,
    open_journal,
    read_journal_dir,
    read_trace_file,
)
from controller.replay import build_engine, drive, drive_segments, replay_path
from kernel.errors import CheckpointError, ConfigError, JournalError, TraceError
from kernel.inputs import ButtonPress, TagIn, Tick
from kernel.messages import Message
from sim.dealer import seat_players
from tablectl.cli import main as cli_main
from tests.journal_session import EPOCH, TABLE_TOML, make_config, run_daemon, session


def lines(messages: list[Message]) -> list[str]:
    return [m.to_line("p") for m in messages]


def test_checkpoint_restore_continues_exactly(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    events = session(config, hands=4)
    engine = build_engine(config)
    cut = None
    for i, (_event, _messages) in enumerate(drive(engine, events)):
        if engine.hand is None and i > len(events) // 2:
            cut = i
            break
    assert cut is not None
    state = checkpoint(engine)
    assert state["version"] == VERSION and json.loads(json.dumps(state)) == state
    rest = events[cut + 1 :]
    restored = build_engine(config)
    restore(restored, state)
    assert checkpoint(restored) == state
    got = [m for _e, ms in drive(restored, rest) for m in ms]
    want = [m for _e, ms in drive(engine, rest) for m in ms]
    assert got and lines(got) == lines(want)


def test_checkpoint_refuses_unknown_versions_and_a_restore_over_a_hand(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    engine = build_engine(config)
    for event in seat_players([(1, "A", 100), (2, "B", 100)], (1, 2, 0), button=2):
        engine.apply(event)
    state = checkpoint(engine)
    with pytest.raises(CheckpointError, match="version 99"):
        restore(build_engine(config), {**state, "version": 99})
    with pytest.raises(CheckpointError, match="version None"):
        restore(build_engine(config), {k: v for k, v in state.items() if k != "version"})
    with pytest.raises(CheckpointError, match="does not fit table"):
        restore(build_engine(config), {**state, "seat_count": 9})
    with pytest.raises(CheckpointError, match="malformed"):
        restore(build_engine(config), {**state, "seats": {str(n): {} for n in range(1, 7)}})
    # Versions 2 and 3 had no version-4 keys: they restore as none of them.
    older = {k: v for k, v in state.items() if k not in ("hole_reads", "hand")}
    for version in (2, 3):
        again = build_engine(config)
        restore(again, {**older, "version": version})
        assert {**checkpoint(again), "hole_reads": state["hole_reads"]} == state
    engine.apply(ButtonPress(1.0, "shuffler"))
    assert engine.hand is not None
    mid_hand = checkpoint(engine)  # the hand in progress is in it
    assert mid_hand["hand"]["record"]["facts"]["number"] == engine.hand.number
    with pytest.raises(CheckpointError, match="hand in progress"):
        restore(engine, state)


def test_segments_rotate_between_hands_and_each_opens_with_a_checkpoint(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    events = session(config, hands=6)
    daemon, _out = run_daemon(config, events)
    assert daemon.journal is not None
    daemon.journal.close()
    segments = read_journal_dir(tmp_path / "journal")
    assert len(segments) >= 4
    assert [s.number for s in segments] == list(range(1, len(segments) + 1))
    assert segments[0].checkpoint is None
    names = [p.name for p in list_segments(tmp_path / "journal")]
    # closed segments are compressed, the active one is not
    assert names[0] == f"journal-{int(EPOCH)}-000001.jsonl.gz"
    assert [n.endswith(".gz") for n in names] == [True] * (len(names) - 1) + [False]
    for segment in segments[1:]:
        assert segment.checkpoint is not None and segment.checkpoint["version"] == VERSION
        # Only between hands: the segment's first hand starts inside it.
        assert segment.checkpoint["last_state"]["hand"] is None
    # Every input is in exactly one segment, in order.
    assert len([e for s in segments for e in s.events]) == len(events)


def test_replay_from_segment_one_equals_recovery_from_the_last_checkpoint(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    events = session(config, hands=6)
    daemon, live = run_daemon(config, events)
    assert daemon.journal is not None
    daemon.journal.close()
    segments = read_journal_dir(tmp_path / "journal")
    last = segments[-1]
    assert last.checkpoint is not None and last.events

    # (a) segment 1 through N on one engine (each checkpoint is checked against the state
    # replayed up to it); the messages of the last segment's inputs are the tail.
    full = build_engine(config)
    steps = [step for step in drive_segments(full, segments) if step.event is not None]
    # What the engine gives now is what the journal says the daemon published.
    assert [step.mismatch() for step in steps] == [None] * len(steps)
    per_input = [step.published for step in steps]
    tail = [m for ms in per_input[len(per_input) - len(last.events) :] for m in ms]

    # (b) a fresh engine restored from the last checkpoint, then the last segment only.
    recovered = build_engine(config)
    restore(recovered, last.checkpoint)
    from_checkpoint = [m for _e, ms in drive(recovered, last.events) for m in ms]

    # (c) what the live daemon published for those inputs.
    live_tail = [m for ms in live[len(live) - len(last.events) :] for m in ms]

    assert lines(from_checkpoint) == lines(tail) == lines(live_tail)
    assert full.snapshot() == recovered.snapshot() == daemon.engine.snapshot()

    # The CLI prints the same: the directory (all segments), and the last segment alone.
    out = io.StringIO()
    replay_path(config, last.path, out)
    assert out.getvalue().splitlines() == [m.to_line(config.broker.prefix) for m in tail]
    out = io.StringIO()
    replay_path(config, tmp_path / "journal", out)
    everything = [m.to_line(config.broker.prefix) for ms in per_input for m in ms]
    assert out.getvalue().splitlines() == everything


def _segment_dir(tmp_path: Path, count: int, step: float) -> tuple[SegmentedJournal, Path]:
    """A journal with `count` segments, the k-th closed at t = k * step."""
    directory = tmp_path / "segments"
    journal = SegmentedJournal(
        directory, "t01", now=EPOCH, fsync="never", max_segment_bytes=1, keep_segments=0
    )
    state = {"version": 1}
    for k in range(1, count):
        journal.append(Tick(k * step - 1.0))
        journal.rotate(state, k * step)
    return journal, directory


def numbers(paths: list[Path]) -> list[int]:
    """The segment numbers of journal segment files (`.jsonl` or `.jsonl.gz`)."""
    return [int(SEGMENT_RE.match(p.name)["number"]) for p in paths]  # type: ignore[index]


def test_retention_by_count_keeps_the_newest_and_never_the_active_one(tmp_path: Path) -> None:
    journal, directory = _segment_dir(tmp_path, 6, 10.0)
    assert len(list_segments(directory)) == 6
    journal.keep_segments = 2
    removed = journal.enforce_retention(EPOCH + 100)
    assert numbers(removed) == [1, 2, 3, 4]
    assert numbers(list_segments(directory)) == [5, 6]
    journal.keep_segments = 1
    journal.enforce_retention(EPOCH + 100)
    assert list_segments(directory) == [journal.path]
    journal.append(Tick(60.0))  # the active segment is still written
    journal.close()
    assert read_trace_file(journal.path).events == [Tick(60.0)]


def test_retention_by_age_uses_when_each_segment_was_closed(tmp_path: Path) -> None:
    day = 86400.0
    journal, directory = _segment_dir(tmp_path, 5, day)  # segment k closed on day k
    journal.keep_days = 2.5
    removed = journal.enforce_retention(EPOCH + 5 * day)  # closed before day 2.5: 1 and 2
    assert numbers(removed) == [1, 2]
    journal.keep_days = 0.5
    journal.enforce_retention(EPOCH + 100 * day)
    assert list_segments(directory) == [journal.path]  # never the active one
    journal.close()


def test_retention_never_deletes_what_recovery_needs(tmp_path: Path) -> None:
    journal, directory = _segment_dir(tmp_path, 3, 10.0)
    journal.close()
    # A segment that does not open with a checkpoint (here: made by hand) needs the ones
    # before it: they stay.
    last = list_segments(directory)[-1]
    text = last.read_text().splitlines(keepends=True)
    last.write_text("".join([text[0], *text[2:]]))
    again = SegmentedJournal(directory, "t01", now=EPOCH + 1e6, fsync="never", keep_segments=1)
    assert numbers(list_segments(directory)) == [2, 3]
    again.close()


def test_replay_of_a_directory_detects_a_checkpoint_that_does_not_follow(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    daemon, _ = run_daemon(config, session(config, hands=3))
    assert daemon.journal is not None
    daemon.journal.close()
    # a later segment that published something (one may hold only the chips gathered after
    # a hand: inputs that publish nothing)
    second = next(
        p
        for p in list_segments(tmp_path / "journal")[1:-1]
        if '{"out"' in gzip.decompress(p.read_bytes()).decode()
    )
    assert second.name.endswith(".gz")  # closed: compressed
    text = gzip.decompress(second.read_bytes()).decode()
    second.write_bytes(gzip.compress(text.replace('"stack":', '"stack":1', 1).encode()))
    with pytest.raises(JournalError, match="checkpoint differs"):
        replay_path(config, tmp_path / "journal", io.StringIO())
    # The segment alone starts from its (tampered) checkpoint: replay accepts it, and the
    # journal's record of what was published shows the stacks it now gives are not those.
    result = replay_path(config, second, io.StringIO())
    assert result.messages > 0
    assert result.mismatches and "replay gives" in result.mismatches[0]


def test_single_file_journal_still_works_and_a_torn_line_is_cut_off(tmp_path: Path) -> None:
    path = tmp_path / "t01.journal"
    cfg = dataclasses.replace(
        make_config(tmp_path).journal, path=path, directory=None, fsync="never"
    )
    journal = open_journal(cfg, "t01", now=EPOCH)
    assert journal is not None and not journal.rotation_due()
    journal.append(ButtonPress(1.0, "shuffler"))
    journal.close()
    with path.open("a") as fh:
        fh.write('{"t": 2.0, "event": "butt')  # power cut mid-write
    again = open_journal(cfg, "t01", now=EPOCH)
    assert again is not None and list(again) == [ButtonPress(1.0, "shuffler")]
    again.append(TagIn(3.0, "seat1", card="As"))  # starts on a line of its own
    again.close()
    assert read_trace_file(path).events == [
        ButtonPress(1.0, "shuffler"),
        TagIn(3.0, "seat1", card="As"),
    ]


def test_cli_replays_a_journal_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = make_config(tmp_path)
    daemon, live = run_daemon(config, session(config, hands=3))
    assert daemon.journal is not None
    daemon.journal.close()
    assert cli_main(["replay", str(tmp_path / "journal"), "--config", str(config.path)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [m.to_line(config.broker.prefix) for ms in live for m in ms]


def test_config_journal_directory_keys(tmp_path: Path) -> None:
    config = make_config(tmp_path, "keep_segments = 30\nkeep_days = 7\n")
    assert config.journal.directory == tmp_path / "journal"
    assert config.journal.path is None
    assert (config.journal.max_segment_mb, config.journal.keep_segments) == (0.01, 30)
    assert config.journal.keep_days == 7.0
    bad = [
        ('path = "x.journal"\n', r"\[journal\] directory: give either path"),
        ("keep_days = -1\n", r"\[journal\] keep_days: must be >= 0"),
        ("keep_segments = -1\n", r"\[journal\] keep_segments"),
    ]
    for extra, message in bad:
        with pytest.raises(ConfigError, match=message):
            make_config(tmp_path, extra)
    path = tmp_path / "big.toml"
    path.write_text(TABLE_TOML.replace("max_segment_mb = 0.01", "max_segment_mb = 0"))
    with pytest.raises(ConfigError, match=r"\[journal\] max_segment_mb: must be in"):
        load_config(path)
    path = tmp_path / "one.toml"
    path.write_text(
        TABLE_TOML.replace('directory = "journal"\nmax_segment_mb = 0.01\n', 'path = "t.journal"\n')
        + "keep_days = 3\n"
    )
    with pytest.raises(ConfigError, match=r"keep_days: applies to a segmented journal only"):
        load_config(path)


def test_a_one_file_journal_migrates_to_segment_one_as_documented(tmp_path: Path) -> None:
    """docs/operations.md, *Moving a one-file journal to segments*: the shell steps."""
    config = make_config(tmp_path)
    events = session(config, hands=2)
    single = dataclasses.replace(config.journal, path=tmp_path / "t01.journal", directory=None)
    old = open_journal(single, "t01", now=EPOCH + 0.25)
    assert old is not None
    for event in events:
        old.append(event)
    old.close()
    script = """
        set -eu
        cd "$1"
        E=$(head -1 t01.journal | sed -n 's/.* epoch=\\([0-9]*\\).*/\\1/p')
        mkdir t01
        sed '1s/$/ segment=1/' t01.journal > "t01/journal-$E-000001.jsonl"
    """
    subprocess.run(["bash", "-c", script, "migrate", str(tmp_path)], check=True)
    migrated = dataclasses.replace(config.journal, directory=tmp_path / "t01")
    journal = open_journal(migrated, "t01", now=EPOCH + 1e6)
    assert isinstance(journal, SegmentedJournal)
    assert journal.epoch == EPOCH + 0.25 and journal.checkpoint is None
    assert list(journal) == events
    journal.close()


def test_checkpoint_keeps_holds_penalties_staff_dealer_and_early_chips(tmp_path: Path) -> None:
    from controller.trace import parse_event
    from kernel.inputs import Badge

    config = make_config(tmp_path)
    engine = build_engine(config)
    commands = [
        {"event": "command", "name": "seat", "seat": 1, "player": "A", "stack": 500},
        {"event": "command", "name": "seat", "seat": 2, "player": "B", "stack": 500},
        {"event": "command", "name": "penalty", "seat": 2, "hands": 3},
        {"event": "command", "name": "away", "seat": 1, "away": True},
        {"event": "command", "name": "staff", "uid": "04AA", "person": "Ann", "role": "dealer"},
        {"event": "command", "name": "pause", "reason": "break"},
        {"event": "tag_in", "antenna": "bet1", "chip": "c1", "value": 25},
    ]
    for t, fields in enumerate(commands):
        engine.apply(parse_event({"t": float(t), **fields}))
    engine.apply(Badge(t=10.0, uid="04AA"))
    state = checkpoint(engine)
    restored = build_engine(config)
    restore(restored, state)
    assert checkpoint(restored) == state
    assert restored.penalties == {2: 3} and restored.seats[1].away
    assert restored.holds == {"pause": "break"}
    assert restored.dealer is not None and restored.dealer.name == "Ann"
    assert restored.snapshot() | {"t": 0} == engine.snapshot() | {"t": 0}


def test_closed_segments_are_compressed_and_a_cut_short_compression_is_finished(
    tmp_path: Path,
) -> None:
    journal, directory = _segment_dir(tmp_path, 4, 10.0)
    journal.close()
    closed = list_segments(directory)[:-1]
    assert [p.name.endswith(".gz") for p in closed] == [True, True, True]
    plain = [gzip.decompress(p.read_bytes()) for p in closed]
    # As if a crash had struck while segments 2 and 3 were being compressed: 2 before its
    # gzip was renamed in (a temporary file left), 3 after (both forms there).
    two, three = closed[1], closed[2]
    two_plain = two.with_name(two.name.removesuffix(".gz"))
    two_plain.write_bytes(plain[1])
    two.rename(directory / f".{two.name}.tmp")
    three.with_name(three.name.removesuffix(".gz")).write_bytes(plain[2])
    assert numbers(list_segments(directory)) == [1, 2, 3, 4]  # the plain ones are read

    again = SegmentedJournal(directory, "t01", now=EPOCH + 100, fsync="never")
    again.close()
    files = sorted(directory.iterdir())  # no temporary file, no segment twice
    assert numbers(files) == [1, 2, 3, 4]
    assert [p.name.endswith(".gz") for p in files] == [True, True, True, False]
    assert [gzip.decompress(p.read_bytes()) for p in list_segments(directory)[:-1]] == plain


def test_a_journal_of_the_previous_checkpoint_version_still_replays_and_verifies(
    tmp_path: Path,
) -> None:
    """Segments written before checkpoints kept the answered request ids (version 2): a
    directory holding them replays, each checkpoint still checked on what it records."""
    config = make_config(tmp_path)
    daemon, _ = run_daemon(config, session(config, hands=3))
    assert daemon.journal is not None
    daemon.journal.close()
    second = list_segments(tmp_path / "journal")[1]
    lines = gzip.decompress(second.read_bytes()).decode().split("\n")
    record = json.loads(lines[1])
    del record["state"]["answered"]
    record["state"]["version"] = 2
    lines[1] = json.dumps(record, separators=(",", ":"))
    second.write_bytes(gzip.compress("\n".join(lines).encode()))
    result = replay_path(config, tmp_path / "journal", io.StringIO())
    assert result.messages > 0 and result.mismatches == []
    # ... and a real difference in what it records is still caught.
    record["state"]["hand_number"] += 1
    lines[1] = json.dumps(record, separators=(",", ":"))
    second.write_bytes(gzip.compress("\n".join(lines).encode()))
    with pytest.raises(JournalError, match="checkpoint differs"):
        replay_path(config, tmp_path / "journal", io.StringIO())


def test_rotation_is_due_from_exactly_the_maximum_size(tmp_path: Path) -> None:
    journal = SegmentedJournal(tmp_path / "j", "t01", now=1000.0, max_segment_bytes=10**6)
    journal.max_segment_bytes = journal.active.size + 1
    assert not journal.rotation_due()
    journal.max_segment_bytes = journal.active.size
    assert journal.rotation_due()
    journal.close()


def test_a_segment_directory_read_whole_but_a_torn_last_line(tmp_path: Path) -> None:
    """Replay of a directory (and retention) reads the active segment as recovery does: a
    last line torn by a power cut is left out, every whole line before it kept; a segment
    without a header is refused, naming it."""
    directory = tmp_path / "j"
    journal = SegmentedJournal(directory, "t01", now=1000.0)
    journal.append(ButtonPress(1.0, "shuffler"))
    journal.append(ButtonPress(2.0, "check"))
    journal.close()
    with journal.path.open("a") as fh:
        fh.write('{"t": 3.0, "event": "butt')
    (segment,) = read_journal_dir(directory)
    assert segment.events == [ButtonPress(1.0, "shuffler"), ButtonPress(2.0, "check")]
    journal.path.write_text('{"t": 1.0, "event": "tick"}\n')
    with pytest.raises(TraceError, match=f"{journal.path.name}: first line is not a journal"):
        read_journal_dir(directory)


def test_a_restart_after_a_rotation_knows_the_chips_still_on_the_table(tmp_path: Path) -> None:
    """A segment opens between hands, often with a pot still to push: the checkpoint keeps
    its chips, and recovery gives them back to the readers' view (cards and chips), so the
    chips that leave while the daemon is down are caught up as gone."""
    from controller.engine.checkpoint import restore
    from controller.recovery import _seed_view_from_checkpoint
    from kernel.inputs import TagIn

    config = load_config(Path(__file__).resolve().parents[2] / "examples" / "sim-table.toml")
    engine = build_engine(config)
    assert engine.chips is not None
    uids = [uid for uid, _value in engine.chips.items()][:2]
    for uid in uids:
        engine.apply(TagIn(1.0, "pot", uid=uid))
    assert engine.hand is None
    fresh = build_engine(config)
    restore(fresh, checkpoint(engine))
    view: dict[str, list[str]] = {}
    _seed_view_from_checkpoint(fresh, view)
    assert view == {"pot": [uid.upper() for uid in uids]}
