"""The staff file and the engine's staff registry kept in step, in both directions."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from controller.engine import Engine
from controller.inputs import Command
from controller.staff import StaffMember, StaffRegistry, load_staff, write_staff

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
