"""The panel's lamps follow the engine once a batch is committed."""

from __future__ import annotations

from collections.abc import Sequence

from controller.hooks import Table
from kernel.messages import Message


def install_lamps(table: Table) -> None:
    """After each committed batch the lamps show what the engine says (engine.lamps() is
    not free: only when there are real lamps)."""

    def show(out: Sequence[Message]) -> None:
        if table.devices.lamps is not None:
            table.devices.show(table.engine.lamps())

    table.register_event_handler("table:committed", show)
