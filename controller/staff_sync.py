"""The staff file and the engine's staff registry kept in step, in both directions."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from controller.engine import Engine
from controller.hooks import Effect, Table
from controller.staff import StaffMember, StaffRegistry, load_staff, write_staff
from kernel.errors import TableError
from kernel.inputs import Command, Event

log = logging.getLogger("tablectl.daemon")

Roster = Mapping[str, tuple[str, str]]
"""Badge uid -> (name, role): the staff registry as data."""


def roster(engine: Engine) -> dict[str, tuple[str, str]]:
    """The staff registry as room commands and the journal have left it in the engine."""
    return {m.uid: (m.name, m.role) for m in engine.staff_members()}


def file_changes(path: Path, have: Roster, t: float) -> list[Command]:
    """What the staff file says that the registry (`have`) does not, as `staff` commands.

    The file may have been edited while the daemon was stopped: the differences become
    journaled inputs like the room's, so a replay still gives what was published. Raises
    TableError when the file cannot be read.
    """
    wanted = {m.uid: m for m in load_staff(path)}
    out: list[Command] = []
    for uid, member in sorted(wanted.items()):
        if have.get(uid) != (member.name, member.role):
            args = {"uid": uid, "person": member.name, "role": member.role}
            out.append(Command(t=t, name="staff", args=args))
    for uid in sorted(have.keys() - wanted.keys()):
        out.append(Command(t=t, name="staff", args={"uid": uid, "remove": True}))
    return out


def save(path: Path, have: Roster) -> None:
    """Write the registry to the staff file (atomic); raises OSError or TableError."""
    members = [StaffMember(uid, name, role) for uid, (name, role) in have.items()]
    write_staff(path, StaffRegistry(members))


class StaffFile:
    """The staff file ([badge] staff) beside a running table: what was edited while the
    daemon was stopped enters as `staff` commands at start; a `staff` command the engine
    accepted rewrites the file once the batch is committed."""

    def __init__(self, table: Table) -> None:
        self.table = table
        table.register_event_handler("table:recovered", self.adopt)
        table.register_event_handler("table:applied", self.applied)

    def adopt(self) -> None:
        """The staff file may have been edited while the daemon was stopped: what differs
        from the registry the journal left becomes `staff` commands (journaled inputs)."""
        table = self.table
        path = table.config.badge.staff
        if path is None:
            return
        try:
            commands = file_changes(path, roster(table.engine), table.now())
        except TableError as exc:
            log.error("staff file %s not taken: %s", path, exc)
            return
        for command in commands:
            table.submit(command)

    def applied(self, item: Event) -> Effect | None:
        """A room command changed the staff registry: the file follows, after the commit."""
        staff = isinstance(item, Command) and item.name == "staff"
        if staff and self.table.engine.command_accepted:
            return self.write
        return None

    def write(self) -> None:
        """The registry to the staff file (atomic write); an alert when it cannot be."""
        table = self.table
        path = table.config.badge.staff
        if path is None:
            return
        try:
            save(path, roster(table.engine))
        except (OSError, TableError) as exc:
            text, details = f"{path}: {exc}", {"path": str(path)}
            # journaled before it is published, like every message
            table.emit(table.notices.alert("staff_registry_not_saved", text, details))
