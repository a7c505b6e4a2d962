"""Staff registry: loading, writing (atomic, round trip) and every refusal."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from controller.staff import StaffMember, StaffRegistry, load_staff, write_staff
from kernel.errors import RegistryError, TableError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "staff" / "sim-staff.toml"

GOOD = """\
# two dealers and the floor
[[staff]]
uid = "04b2c3d4e5f607"
name = "Luca Bianchi"
role = "dealer"

[[staff]]
uid = "04A1B2C3D4E5F6"
name = "Maria Rossi"
role = "dealer"

[[staff]]
uid = "0A0B0C0D"
name = "Giulia \\"la Rossa\\" Ferrari"
role = "floor"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "staff.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_upper_cases_uids_sorts_and_looks_up_case_insensitively(tmp_path: Path) -> None:
    staff = load_staff(write(tmp_path, GOOD))
    assert len(staff) == 3
    assert [m.uid for m in staff.members()] == ["04A1B2C3D4E5F6", "04B2C3D4E5F607", "0A0B0C0D"]
    luca = staff.get("04B2C3D4E5F607")
    assert luca == StaffMember("04B2C3D4E5F607", "Luca Bianchi", "dealer")
    assert staff.get("04a1b2c3d4e5f6") is not None
    assert staff.get("04a1b2c3d4e5f6").name == "Maria Rossi"  # type: ignore[union-attr]
    assert staff.get("0a0b0c0d").role == "floor"  # type: ignore[union-attr]
    assert staff.get("FFFFFFFF") is None
    assert "0a0b0c0d" in staff and "FF" not in staff


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    staff = load_staff(write(tmp_path, GOOD))
    out = tmp_path / "out" / "staff.toml"
    out.parent.mkdir()
    write_staff(out, staff)
    again = load_staff(out)
    assert again == staff
    assert again.members() == staff.members()
    assert again.get("0A0B0C0D").name == 'Giulia "la Rossa" Ferrari'  # type: ignore[union-attr]
    # written sorted by uid, and nothing left behind but the file itself
    text = out.read_text()
    assert text.index("04A1B2C3D4E5F6") < text.index("04B2C3D4E5F607") < text.index("0A0B0C0D")
    assert os.listdir(out.parent) == ["staff.toml"]


def test_write_replaces_an_existing_file_atomically(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    inode = path.stat().st_ino
    one = StaffRegistry([StaffMember("0102", "Ada", "floor")])
    write_staff(path, one)
    assert load_staff(path) == one
    assert path.stat().st_ino != inode  # a new file renamed over the old one
    assert sorted(os.listdir(tmp_path)) == ["staff.toml"]


def test_an_empty_registry_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "empty.toml"
    write_staff(path, StaffRegistry())
    assert len(load_staff(path)) == 0
    assert len(load_staff(write(tmp_path, "# nobody yet\n"))) == 0


def test_the_shipped_example() -> None:
    staff = load_staff(EXAMPLE)
    roles = sorted(m.role for m in staff.members())
    assert roles == ["dealer", "dealer", "floor"]


def test_members_are_validated_when_built() -> None:
    member = StaffMember("04a1", "Maria", "dealer")
    assert member.uid == "04A1"
    with pytest.raises(RegistryError, match="bad role 'boss'"):
        StaffMember("04A1", "Maria", "boss")
    with pytest.raises(RegistryError, match="name must be a non-empty string"):
        StaffMember("04A1", "  ", "dealer")
    with pytest.raises(RegistryError, match="bad uid"):
        StaffMember("XYZ", "Maria", "dealer")
    # The name is published (dealer_changed, floor_arrived): it must be publishable text.
    with pytest.raises(RegistryError, match=r"name 'Ma\\ud800ria' is not Unicode text"):
        StaffMember("04A1", "Ma\ud800ria", "dealer")
    with pytest.raises(RegistryError, match=r"control character \(U\+000A at position 6\)"):
        StaffMember("04A1", "Maria\nRossi", "dealer")
    with pytest.raises(RegistryError, match="reads as a card name"):
        StaffMember("04A1", "Qh", "floor")
    with pytest.raises(RegistryError, match="duplicate uid 04A1"):
        StaffRegistry([StaffMember("04A1", "A", "dealer"), StaffMember("04a1", "B", "floor")])
    assert issubclass(RegistryError, TableError)


ENTRY = '[[staff]]\nuid = "04A1B2C3"\nname = "Maria"\nrole = "dealer"\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[[staff]\nuid = 1\n", r"line 1, column \d+: TOML syntax error"),
        ('[[staff]]\nuid = "04A1"\nuid = "04A2"\n', "TOML syntax error"),
        ('title = "x"\n', "unknown key 'title' \\(only \\[\\[staff\\]\\] entries\\)"),
        ("[staff]\nuid = '04A1'\n", r"staff must be an array of tables"),
        (
            ENTRY + "\n" + ENTRY.replace('role = "dealer"', 'role = "dealer"\nbadge = 3'),
            r"\[\[staff\]\] entry 2 \(uid '04A1B2C3'\): unknown key 'badge'",
        ),
        (ENTRY.replace('"04A1B2C3"', '"04A1B2C"'), r"entry 1 \(uid '04A1B2C'\): bad uid"),
        (ENTRY.replace('"04A1B2C3"', '"GG"'), r"entry 1 \(uid 'GG'\): bad uid"),
        (ENTRY.replace('"04A1B2C3"', '"' + "AB" * 21 + '"'), r"entry 1 .*bad uid"),
        (ENTRY.replace('"04A1B2C3"', '""'), r"entry 1 .*bad uid"),
        (ENTRY.replace('"04A1B2C3"', "0x04A1"), r"entry 1: uid: expected a string"),
        (ENTRY.replace('"dealer"', '"boss"'), r"entry 1 \(uid '04A1B2C3'\): .*bad role 'boss'"),
        (ENTRY.replace('"Maria"', '""'), r"entry 1 .*name must be a non-empty string"),
        (
            ENTRY.replace('"Maria"', '"Maria\\u0007"'),
            r"entry 1 \(uid '04A1B2C3'\): uid 04A1B2C3: name 'Maria\\x07' has a control character",
        ),
        (ENTRY.replace('"Maria"', '"Td"'), r"entry 1 .*name 'Td' reads as a card name"),
        (ENTRY.replace('name = "Maria"\n', ""), r"entry 1 \(uid '04A1B2C3'\): name: missing"),
        (
            ENTRY + "\n" + ENTRY.replace('"04A1B2C3"', '"04a1b2c3"').replace("Maria", "Luca"),
            r"entry 2 \(uid '04A1B2C3'\): duplicate uid \(already entry 1\)",
        ),
    ],
)
def test_refusals_name_the_file_and_the_entry(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(RegistryError, match=expected) as info:
        load_staff(path)
    assert str(info.value).startswith(f"{path}: ")


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="file not found"):
        load_staff(tmp_path / "nope.toml")
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'[[staff]]\nname = "Jos\xe9"\n')
    with pytest.raises(RegistryError, match=re.escape(f"{bad}: cannot read")):
        load_staff(bad)
