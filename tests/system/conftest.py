"""Fixtures of the system tests that play a table: the rig (boards, daemon) and the room."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.broker import Mosquitto, Subscriber
from tests.table_rig import PREFIX, TableRig


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
