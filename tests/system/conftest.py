"""Fixtures of the system tests that play a table: the rig (boards, daemon) and the room."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.broker import Mosquitto, Subscriber
from tests.table_rig import PREFIX, TableRig


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The system tests run real processes against the wall clock (a broker, boards on
    ptys, MicroPython under Node, timers, strace) on a 2-core machine, and one scheduling
    stall in a long run can miss a deadline: each gets one retry, shown as `R` in the
    summary; a failure that repeats fails the run."""
    for item in items:
        if item.get_closest_marker("system") is not None:
            item.add_marker(pytest.mark.flaky(reruns=1, reruns_delay=1))


@pytest.fixture
def table(tmp_path: Path, mosquitto: Mosquitto) -> Iterator[tuple[TableRig, Subscriber]]:
    """A table rig (simulated boards on ptys, `tablectl run` started by the test) and a
    subscriber to everything the room may read of it."""
    with TableRig(tmp_path / "rig", mosquitto) as rig:
        room = Subscriber(mosquitto, f"{PREFIX}/#")
        try:
            yield rig, room
        finally:
            rig.stop()
            room.close()
