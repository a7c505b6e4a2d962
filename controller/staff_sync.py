"""The staff file and the engine's staff registry kept in step, in both directions."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from controller.inputs import Command
from controller.staff import StaffMember, StaffRegistry, load_staff, write_staff


class Member(Protocol):
    """A staff registry entry as the engine lists it."""

    @property
    def uid(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def role(self) -> str: ...


def file_changes(path: Path, members: Iterable[Member], t: float) -> list[Command]:
    """What the staff file says that the registry (`members`) does not, as `staff` commands.

    The file may have been edited while the daemon was stopped: the differences become
    journaled inputs like the room's, so a replay still gives what was published. Raises
    TableError when the file cannot be read.
    """
    wanted = {m.uid: m for m in load_staff(path)}
    have = {m.uid: (m.name, m.role) for m in members}
    out: list[Command] = []
    for uid, member in sorted(wanted.items()):
        if have.get(uid) != (member.name, member.role):
            args = {"uid": uid, "person": member.name, "role": member.role}
            out.append(Command(t=t, name="staff", args=args))
    for uid in sorted(have.keys() - wanted.keys()):
        out.append(Command(t=t, name="staff", args={"uid": uid, "remove": True}))
    return out


def save(path: Path, members: Iterable[Member]) -> None:
    """Write the registry to the staff file (atomic); raises OSError or TableError."""
    write_staff(path, StaffRegistry([StaffMember(m.uid, m.name, m.role) for m in members]))
