"""Staff registry: which badge uid is which dealer or floor person (TOML, `[[staff]]` entries)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from controller.registry import _read_toml, _toml_string, atomic_write_text
from controller.text import text_problem
from kernel.errors import RegistryError
from kernel.inputs import is_badge_uid

ROLES = ("dealer", "floor")
ENTRY_KEYS = ("uid", "name", "role")


@dataclass(frozen=True, slots=True)
class StaffMember:
    """One badge: its uid (upper-case hex), the person's name and role ("dealer"/"floor")."""

    uid: str
    name: str
    role: str

    def __post_init__(self) -> None:
        if not is_badge_uid(self.uid):
            raise RegistryError(
                f"bad uid {self.uid!r}: expected 2..40 hex digits (whole bytes, e.g. 04A1B2C3)"
            )
        if not isinstance(self.name, str) or not self.name.strip():
            raise RegistryError(f"uid {self.uid}: name must be a non-empty string")
        problem = text_problem(self.name)
        if problem is not None:  # the name is published (dealer_changed, floor_arrived...)
            raise RegistryError(f"uid {self.uid}: name {self.name!a} {problem}")
        if self.role not in ROLES:
            raise RegistryError(
                f"uid {self.uid}: bad role {self.role!r}: expected one of {', '.join(ROLES)}"
            )
        object.__setattr__(self, "uid", self.uid.upper())


class StaffRegistry:
    """The registered badges: uid -> StaffMember, looked up case-insensitively."""

    __slots__ = ("_by_uid",)

    def __init__(self, members: Iterable[StaffMember] = ()) -> None:
        """Index `members` by uid; RegistryError for a uid registered twice."""
        by_uid: dict[str, StaffMember] = {}
        for member in members:
            if not isinstance(member, StaffMember):
                raise RegistryError(f"expected a StaffMember, got {type(member).__name__}")
            if member.uid in by_uid:
                raise RegistryError(
                    f"duplicate uid {member.uid}: {by_uid[member.uid].name!r} and {member.name!r}"
                )
            by_uid[member.uid] = member
        self._by_uid = dict(sorted(by_uid.items()))

    def get(self, uid: str) -> StaffMember | None:
        """The staff member a badge belongs to, or None for an unknown badge."""
        return self._by_uid.get(uid.upper()) if isinstance(uid, str) else None

    def members(self) -> list[StaffMember]:
        """Every member, sorted by uid."""
        return list(self._by_uid.values())

    def __contains__(self, uid: object) -> bool:
        return isinstance(uid, str) and uid.upper() in self._by_uid

    def __iter__(self) -> Iterator[StaffMember]:
        return iter(self.members())

    def __len__(self) -> int:
        return len(self._by_uid)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StaffRegistry):
            return NotImplemented
        return self._by_uid == other._by_uid

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"StaffRegistry(members={len(self)})"


# ---------------------------------------------------------------------------- reading


def _entry(path: Path, index: int, entry: object) -> StaffMember:
    where = f"{path}: [[staff]] entry {index}"
    if not isinstance(entry, dict):
        raise RegistryError(f"{where}: must be a table")
    uid = entry.get("uid")
    if isinstance(uid, str):
        where += f" (uid {uid!r})"
    for key in entry:
        if key not in ENTRY_KEYS:
            raise RegistryError(
                f"{where}: unknown key {key!r} (allowed keys: {', '.join(ENTRY_KEYS)})"
            )
    for key in ENTRY_KEYS:
        if key not in entry:
            raise RegistryError(f"{where}: {key}: missing (required)")
        if not isinstance(entry[key], str):
            raise RegistryError(f"{where}: {key}: expected a string, got {entry[key]!r}")
    try:
        return StaffMember(uid=entry["uid"], name=entry["name"], role=entry["role"])
    except RegistryError as exc:
        raise RegistryError(f"{where}: {exc}") from None


def load_staff(path: Path) -> StaffRegistry:
    """Read a staff registry file; RegistryError names the file, the entry and the problem."""
    path = Path(path)
    data = _read_toml(path)
    for key in data:
        if key != "staff":
            raise RegistryError(f"{path}: unknown key {key!r} (only [[staff]] entries)")
    entries = data.get("staff", [])
    if not isinstance(entries, list):
        raise RegistryError(f"{path}: staff must be an array of tables ([[staff]])")
    members: list[StaffMember] = []
    first: dict[str, int] = {}
    for index, raw in enumerate(entries, start=1):
        member = _entry(path, index, raw)
        if member.uid in first:
            raise RegistryError(
                f"{path}: [[staff]] entry {index} (uid {member.uid!r}): duplicate uid "
                f"(already entry {first[member.uid]})"
            )
        first[member.uid] = index
        members.append(member)
    return StaffRegistry(members)


# ---------------------------------------------------------------------------- writing


def format_staff(registry: StaffRegistry) -> str:
    """The registry file text: one [[staff]] entry per member, sorted by uid."""
    lines = ["# Staff registry: badge uid -> name and role (see docs/badge-reader.md)."]
    for member in registry.members():
        lines += [
            "",
            "[[staff]]",
            f"uid = {_toml_string(member.uid)}",
            f"name = {_toml_string(member.name)}",
            f"role = {_toml_string(member.role)}",
        ]
    return "\n".join(lines) + "\n"


#: The modes a staff file may keep (badge uids let a thief clone a floor badge): 0600, or
#: 0640 for a file the operator made readable by the daemon's group.
STAFF_MODE = 0o600
STAFF_GROUP_MODE = 0o640


def write_staff(path: Path, registry: StaffRegistry) -> None:
    """Write a staff registry file atomically (temporary file, fsync, rename), mode 0600,
    or 0640 if the file it replaces was group-readable: never readable by others."""
    path = Path(path)
    try:
        group = path.stat().st_mode & 0o040
    except FileNotFoundError:
        group = 0
    atomic_write_text(path, format_staff(registry), STAFF_GROUP_MODE if group else STAFF_MODE)
