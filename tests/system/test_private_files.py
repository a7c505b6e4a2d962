"""Files that hold secrets are private whatever the umask: the journal (every hole card), its
delivery mark, the staff file (badge uids); and the "cannot write the delivery mark" error
is said once per change, not every 100 ms."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.config import load_config
from controller.daemon import Daemon
from controller.delivery import AckedMark
from controller.journal import Journal, SegmentedJournal, list_segments
from controller.staff import StaffMember, StaffRegistry, load_staff, write_staff
from kernel.inputs import Command
from tests.broker import ROOT, Mosquitto

pytestmark = pytest.mark.timeout(120)

EXAMPLE = ROOT / "examples" / "sim-table.toml"


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most permissive umask there is: everything created is 0666/0777 unless the
    code says otherwise."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_one_file_journal_and_its_new_directory_are_private(
    tmp_path: Path, open_umask: None
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)  # e.g. /var/lib/tablectl: not the daemon's to change
    journal = Journal(shared / "var" / "lib" / "t01.journal", "t01", now=1000.0)
    journal.append(Command(t=0.0, name="level", args={"small_blind": 1, "big_blind": 2}))
    journal.commit()
    journal.close()
    assert mode(shared / "var" / "lib" / "t01.journal") == 0o600
    assert mode(shared / "var" / "lib") == 0o700 and mode(shared / "var") == 0o700
    assert mode(shared) == 0o755, "an existing directory is left as it is"


def test_an_existing_journal_readable_by_others_is_made_private(
    tmp_path: Path, open_umask: None, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "t01.journal"
    Journal(path, "t01", now=1000.0).close()
    path.chmod(0o644)  # copied back from a backup by hand, say
    Journal(path, "t01", now=2000.0).close()
    assert mode(path) == 0o640
    assert "accessible by others" in caplog.text


def test_segmented_journal_segments_checkpoints_and_gzip_are_private(
    tmp_path: Path, open_umask: None
) -> None:
    directory = tmp_path / "t01"
    journal = SegmentedJournal(directory, "t01", now=1000.0, max_segment_bytes=10)
    journal.write_checkpoint(0.0, {"seq": 0})
    journal.append(Command(t=0.0, name="level", args={"small_blind": 1, "big_blind": 2}))
    journal.commit()
    journal.rotate({"seq": 0}, 1.0)  # the new segment opens with a checkpoint
    journal.close()
    assert mode(directory) == 0o700
    segments = list_segments(directory)
    assert [p.name.endswith(".gz") for p in segments] == [True, False]
    assert all(mode(p) == 0o600 for p in directory.iterdir()), {
        p.name: oct(mode(p)) for p in directory.iterdir()
    }


def test_delivery_mark_is_private(tmp_path: Path, open_umask: None) -> None:
    mark = AckedMark(tmp_path / "acked")
    mark.write(7)
    assert mark.path.read_text() == "7\n" and mode(mark.path) == 0o600


def test_staff_file_written_by_the_daemon_is_never_readable_by_others(
    tmp_path: Path, open_umask: None
) -> None:
    staff = StaffRegistry([StaffMember("04A1B2C3", "Maria Rossi", "floor")])
    path = tmp_path / "staff.toml"
    write_staff(path, staff)
    assert mode(path) == 0o600
    path.chmod(0o644)  # made by hand, readable by all: the next write keeps group only
    write_staff(path, staff)
    assert mode(path) == 0o640
    assert load_staff(path) == staff


def test_the_daemon_writes_journal_mark_and_staff_file_private_under_umask_0(
    tmp_path: Path, open_umask: None, mosquitto: Mosquitto
) -> None:
    """The daemon itself, as a table runs it: a segment directory, a staff command."""
    config = load_config(EXAMPLE)
    staff = tmp_path / "staff.toml"
    staff.write_bytes(Path(config.badge.staff or "").read_bytes())
    staff.chmod(0o600)
    config = dataclasses.replace(
        config,
        journal=dataclasses.replace(config.journal, path=None, directory=tmp_path / "j"),
        badge=dataclasses.replace(config.badge, staff=staff),
    )
    daemon = Daemon(config, broker=mosquitto.broker_config(prefix="poker/sim/t01"))
    daemon.start()
    try:
        assert daemon.devices.readers[0].wait_synced(10.0)
        payload = {"name": "staff", "uid": "04ABCDEF000009", "person": "Nina", "role": "dealer"}
        daemon.commands.submit("staff", json.dumps(payload | {"id": "s1"}).encode())
        deadline = time.monotonic() + 10
        while "Nina" not in staff.read_text():
            assert time.monotonic() < deadline, "the staff file was not written"
            time.sleep(0.05)
    finally:
        daemon.stop()
    assert mode(staff) == 0o600
    files = sorted((tmp_path / "j").iterdir())
    assert len(files) == 2  # the closed segment (gzip) and the active one
    assert mode(tmp_path / "j") == 0o700
    assert all(mode(p) == 0o600 for p in files), {p.name: oct(mode(p)) for p in files}


def test_cannot_write_the_delivery_mark_is_said_once_per_change(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """While the mark cannot be written (here its directory is gone; a full disk the same),
    the writer retries every 100 ms: one error line, then one line when it works again."""
    caplog.set_level(logging.INFO, logger="controller.delivery")
    gone = tmp_path / "gone"
    mark = AckedMark(gone / "acked", interval=0.02)
    seq = 0

    def source() -> int:
        nonlocal seq
        seq += 1  # the number grows: a write is due every interval
        return seq

    mark.start(source)
    try:
        time.sleep(0.5)  # ~25 failed writes
        errors = [r for r in caplog.records if "cannot write the delivery mark" in r.getMessage()]
        assert len(errors) == 1, [r.getMessage() for r in errors]
        assert errors[0].levelno == logging.ERROR
        gone.mkdir()
        deadline = time.monotonic() + 5
        while not (gone / "acked").exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        time.sleep(0.2)
    finally:
        mark.stop()
    messages = [r.getMessage() for r in caplog.records]
    assert len([m for m in messages if "cannot write the delivery mark" in m]) == 1
    again = [m for m in messages if "written again" in m]
    assert len(again) == 1, messages
    assert int((gone / "acked").read_text()) == mark.written > 0
