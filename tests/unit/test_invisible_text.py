"""Names with invisible format characters (Unicode category Cf) are refused like other text
that reads as something it is not: a zero-width space inside "As" shows as a card name."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from controller.commands import CommandError, parse_room_command
from controller.staff import StaffMember, load_staff
from controller.text import text_problem
from kernel.errors import RegistryError

# Each is Cf: zero-width space, zero-width non-joiner / joiner, word joiner, soft hyphen,
# right-to-left override, byte-order mark, Arabic letter mark, invisible times.
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\u202e", "\ufeff", "\u061c",
             "\u2062"]  # fmt: skip


@pytest.mark.parametrize("char", INVISIBLE)
def test_every_invisible_format_character_is_refused(char: str) -> None:
    assert unicodedata.category(char) == "Cf"
    problem = text_problem(f"A{char}s")
    assert problem == f"has an invisible format character (U+{ord(char):04X} at position 2)"
    assert text_problem(f"Maria{char}") is not None
    assert text_problem(f"{char}Bruno") is not None


def test_visible_names_are_still_taken() -> None:
    for name in ("Maria Rossi", "Zoë", "José-María", "Ólafur", "李小龙", "O'Neil", "Ana 2"):
        assert text_problem(name) is None, name
    assert text_problem("As") is not None  # the card name itself, as before


def test_a_seat_command_with_an_invisible_card_name_is_refused() -> None:
    payload = {"name": "seat", "seat": 3, "player": "A\u200bs", "stack": 20000, "id": "z1"}
    with pytest.raises(CommandError, match=r"invisible format character \(U\+200B") as info:
        parse_room_command("seat", json.dumps(payload).encode(), t=0.0, next_id=lambda: "x")
    assert info.value.request_id == "z1"
    escaped = json.dumps(payload, ensure_ascii=True).encode()  # "\u200b" escaped in JSON
    with pytest.raises(CommandError, match="invisible format character"):
        parse_room_command("seat", escaped, t=0.0, next_id=lambda: "x")
    ok = payload | {"player": "Alice"}
    assert parse_room_command("seat", json.dumps(ok).encode(), t=0.0, next_id=lambda: "x")


def test_a_staff_name_with_a_bidi_override_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="invisible format character"):
        StaffMember("04A1B2C3", "Maria\u202eissoR", "floor")
    path = tmp_path / "staff.toml"
    path.write_text('[[staff]]\nuid = "04A1B2C3"\nname = "Eve\\u2060"\nrole = "floor"\n')
    with pytest.raises(RegistryError, match=r"entry 1 .*U\+2060"):
        load_staff(path)
