"""The input journal: header epoch, durable appends, torn last line, wrong table."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.config import load_config
from controller.errors import ConfigError, JournalError
from controller.journal import Journal
from controller.trace import ButtonPress, Command, Tick, load_trace

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "sim-table.toml"


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
    assert load_trace(path) == events  # the journal is itself a trace
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
