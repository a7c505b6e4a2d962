"""Journal segments through a started daemon and a real mosquitto: recovery from the last
checkpoint alone, then the rest of the session."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.daemon import Daemon
from controller.journal import list_segments
from tests.broker import Mosquitto
from tests.journal_session import EPOCH, full_run_snapshot, make_config, run_daemon, session


@pytest.mark.timeout(60)
def test_daemon_recovers_from_the_last_checkpoint_alone(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    config = make_config(tmp_path, "keep_segments = 1\nkeep_days = 0\n")
    events = session(config, hands=5)
    cut = len(events) - 40  # the daemon stops in the middle of the last hand
    first, _ = run_daemon(config, events[:cut])
    assert first.journal is not None
    first.journal.close()
    assert len(list_segments(tmp_path / "journal")) == 1  # older segments were deleted
    second = Daemon(config, broker=mosquitto.broker_config(), clock=lambda: EPOCH)
    second.start()  # the real start: recovery from the checkpoint, devices, loop
    try:
        assert second.journal is not None and second.journal.checkpoint is not None
        assert second.engine.snapshot() == first.engine.snapshot()
        for event in events[cut:]:
            second.submit(event)
        assert wait_for(lambda: second.applied == len(events) - cut)
        assert second.engine.snapshot() == full_run_snapshot(config, events)
    finally:
        second.stop()


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()
