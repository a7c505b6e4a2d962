"""The input journal: header epoch, durable appends, torn last line, wrong table."""

from __future__ import annotations

import gzip
import os
import time
from pathlib import Path

import pytest

from controller.config import load_config
from controller.journal import Journal, read_trace_file
from kernel.errors import ConfigError, JournalError, TraceError
from kernel.inputs import ButtonPress, Command, Tick
from kernel.messages import ALERTS, Message

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sim-table.toml"


@pytest.mark.parametrize("policy", ["always", "interval", "never"])
def test_journal_is_a_replayable_trace_and_keeps_epoch(tmp_path: Path, policy: str) -> None:
    path = tmp_path / "j" / "t01.journal"
    journal = Journal(path, "t01", now=1000.5, fsync=policy, fsync_interval=0.01)
    events = [
        Command(0.0, "seat", {"seat": 1, "player": "A", "stack": 10}),
        ButtonPress(1.25, "shuffler"),
        Tick(2.0),
    ]
    for event in events:
        journal.append(event)
    journal.close()
    # the journal is itself a trace for `replay` (each record's chain member set aside)
    assert read_trace_file(path).events == events
    again = Journal(path, "t01", now=9999.0, fsync=policy)
    assert again.epoch == 1000.5 and list(again) == events
    again.close()


def test_torn_last_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "t01.journal"
    journal = Journal(path, "t01", now=1.0)
    journal.append(ButtonPress(1.0, "shuffler"))
    journal.close()
    with path.open("a") as fh:
        fh.write('{"t": 2.0, "event": "butt')  # power cut mid-write
    assert list(Journal(path, "t01", now=5.0)) == [ButtonPress(1.0, "shuffler")]


def test_journal_of_another_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t01.journal"
    Journal(path, "t01", now=1.0).close()
    with pytest.raises(JournalError, match="belongs to table t01, not t02"):
        Journal(path, "t02", now=1.0)


def test_corrupt_journal_line_is_refused_with_line_number(tmp_path: Path) -> None:
    path = tmp_path / "t01.journal"
    Journal(path, "t01", now=1.0).close()
    with path.open("a") as fh:
        fh.write('{"t": 1.0, "event": "tick"}\n{"t": 2.0, "event": "nope"}\n')
    with pytest.raises(JournalError, match=r"t01.journal:3: unknown event kind 'nope'"):
        Journal(path, "t01", now=1.0)


def test_config_refuses_unknown_fsync_policy(tmp_path: Path) -> None:
    text = EXAMPLE.read_text().replace(
        'path = "../var/t01.journal"', 'path = "../var/t01.journal"\nfsync = "sometimes"'
    )
    for sub in EXAMPLE.parent.iterdir():  # decks, chips, staff ...: the example's own paths
        if sub.is_dir():
            (tmp_path / sub.name).symlink_to(sub)
    cfg = tmp_path / "t.toml"
    cfg.write_text(text)
    with pytest.raises(ConfigError, match=r"\[journal\] fsync: 'sometimes' is not one of"):
        load_config(cfg)


def test_text_with_line_separators_inside_a_record_reads_back_whole(tmp_path: Path) -> None:
    """JSON text may hold U+2028, U+2029, U+0085 as they are (a board's error text, say):
    the journal splits lines on "\\n" only, so such a record is not cut in two."""
    path = tmp_path / "t01.journal"
    journal = Journal(path, "t01", now=1000.0)
    journal.append(ButtonPress(1.0, "shuffler"))
    odd = "antenna\u2028burn\u2029open\u0085circuit\r"
    journal.record(1.0, "daemon", Message(ALERTS, {"type": "reader_error", "text": odd}))
    journal.append(ButtonPress(2.0, "check"))
    journal.commit()
    journal.close()
    again = Journal(path, "t01", now=2000.0)  # the daemon's own reading at a restart
    assert [e.t for e in again.events] == [1.0, 2.0]
    assert again.outputs[1][0].message.payload["text"] == odd
    again.close()
    assert read_trace_file(path).outputs[1][0].message.payload["text"] == odd


def test_a_damaged_compressed_segment_is_a_clear_error(tmp_path: Path) -> None:
    segment = tmp_path / "journal-1000-000001.jsonl.gz"
    header = b"# tablectl-journal v1 epoch=1000 table=t01 segment=1\n"
    segment.write_bytes(gzip.compress(header)[:-9])  # truncated
    with pytest.raises(TraceError, match=str(segment.name)):
        read_trace_file(segment)
    segment.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"not deflate at all")
    with pytest.raises(TraceError, match=str(segment.name)):
        read_trace_file(segment)


def test_a_header_torn_by_a_power_cut_starts_the_journal_afresh(tmp_path: Path) -> None:
    """The power went while the header of a new journal was being written: nothing else
    can have been written (the header is synced first), so the file starts again."""
    path = tmp_path / "t01.journal"
    path.write_bytes(b"# tablectl-journal v1 epo")
    journal = Journal(path, "t01", now=1234.5)
    journal.append(ButtonPress(1.0, "shuffler"))
    journal.close()
    again = Journal(path, "t01", now=9999.0)
    assert again.epoch == 1234.5 and list(again) == [ButtonPress(1.0, "shuffler")]
    again.close()


def test_zeros_left_by_a_power_cut_are_refused_with_the_remedy(tmp_path: Path) -> None:
    """A file system that reorders writes may leave zeros where the unsynced end of the
    journal was: the daemon says where, why, and how to cut it off; cut, it starts."""
    path = tmp_path / "t01.journal"
    journal = Journal(path, "t01", now=1.0)
    journal.append(ButtonPress(1.0, "shuffler"))
    journal.close()
    good = path.stat().st_size
    with path.open("ab") as fh:
        fh.write(b"\0" * 40 + b'{"t": 3.0, "event": "tick"}\n')
    with pytest.raises(JournalError, match=rf"line 3 \(byte {good}\) holds zero bytes") as info:
        Journal(path, "t01", now=5.0)
    assert f"truncate -s {good} {path}" in str(info.value)
    os.truncate(path, good)
    assert list(Journal(path, "t01", now=5.0)) == [ButtonPress(1.0, "shuffler")]


class SyncSpy:
    """Records the inode of every fdatasync the process makes (the real call still runs):
    what a commit does under each policy, seen at the operating system's door."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.synced: list[tuple[float, int]] = []
        real = os.fdatasync

        def fdatasync(fd: int) -> None:
            real(fd)
            self.synced.append((time.monotonic(), os.fstat(fd).st_ino))

        monkeypatch.setattr(os, "fdatasync", fdatasync)

    def count(self, path: Path) -> int:
        inode = path.stat().st_ino
        return sum(1 for _t, i in self.synced if i == inode)


def test_fsync_policies_sync_when_they_say(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = SyncSpy(monkeypatch)
    paths = {p: tmp_path / f"{p}.journal" for p in ("always", "interval", "never")}
    journals = {
        p: Journal(path, "t01", now=1.0, fsync=p, fsync_interval=0.05) for p, path in paths.items()
    }
    for journal in journals.values():
        journal.append(ButtonPress(1.0, "shuffler"))
        journal.commit()
    assert spy.count(paths["always"]) == 1  # synced before commit returned
    began = time.monotonic()
    while spy.count(paths["interval"]) == 0 and time.monotonic() - began < 2:
        time.sleep(0.005)
    assert spy.count(paths["interval"]) == 1 and time.monotonic() - began < 0.5
    time.sleep(0.2)  # no new write: the background syncer syncs nothing more
    assert spy.count(paths["interval"]) == 1 and spy.count(paths["never"]) == 0
    journals["interval"].append(ButtonPress(2.0, "check"))  # written, not committed yet
    time.sleep(0.2)
    assert spy.count(paths["interval"]) == 1
    journals["interval"].commit()
    while spy.count(paths["interval"]) == 1 and time.monotonic() - began < 3:
        time.sleep(0.005)
    assert spy.count(paths["interval"]) == 2
    for journal in journals.values():
        journal.close()  # a close makes everything durable, whatever the policy
    assert spy.count(paths["never"]) == 1 and spy.count(paths["always"]) == 2
