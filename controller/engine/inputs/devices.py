"""Devices going away and coming back: a reader board offline holds the table; without the
badge reader no badge can be read, but the hand is not at risk."""

from __future__ import annotations

from controller.engine.table import Table
from kernel.inputs import Device


def device(table: Table, report: Device) -> None:
    """A device went away or came back (journaled `device` events)."""
    offline = report.state == "offline"
    was = report.name in table.offline
    if offline:
        table.offline.add(report.name)
    else:
        table.offline.discard(report.name)
    if report.name == "badge_reader":
        if was != offline:
            table.alert(
                f"badge_reader_{report.state}",
                "warning" if offline else "info",
                "the badge reader is offline: badges cannot be read"
                if offline
                else "the badge reader is back",
                device=report.name,
            )
        return
    if offline:
        table.holds[report.name] = "offline"
        if not was:
            table.alert(
                "reader_offline",
                "critical",
                f"{report.name} is offline: the table is held, nothing is guessed",
                device=report.name,
            )
    else:
        table.holds.pop(report.name, None)
        if was:
            table.alert(
                "reader_online",
                "info",
                f"{report.name} is back; its antennas were read again",
                device=report.name,
            )
    table.mark_dirty()
