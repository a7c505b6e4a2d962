"""The configuration kit the table, the room and TV share: one strict loader, public names."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kernel.configkit import read_sections, section
from kernel.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("controller", "drivers", "firmware", "firmware_sim", "sim", "room", "broadcast")
PACKAGES += ("bench",)


def test_an_unknown_section_is_refused_with_the_nearest_name(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text("[broker]\nhost = 'h'\n[tabels]\nid = 1\n")
    with pytest.raises(
        ConfigError, match=r"unknown section \[tabels\] \(did you mean \[tables\]\?\)"
    ):
        read_sections(path, ("broker", "tables"))


def test_an_unknown_key_is_refused_with_the_nearest_name(tmp_path: Path) -> None:
    path = tmp_path / "x.toml"
    path.write_text("[broker]\nhots = 'h'\n")
    data = read_sections(path, ("broker",))
    with pytest.raises(
        ConfigError, match=r"unknown key 'hots' in \[broker\] \(did you mean 'host'\?\)"
    ):
        section(path, data, "broker", ("host", "port"))


def test_the_three_loaders_read_through_the_kit() -> None:
    """The table's, the room's and TV's files are read by the kit's strict loader."""
    for path in ("controller/config.py", "room/config.py", "broadcast/config.py"):
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        kit = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "kernel.configkit"
            for alias in node.names
        ]
        assert "read_sections" in kit and "section" in kit, path


def test_no_private_name_is_imported_from_another_package() -> None:
    """A name with a leading underscore stays in its package: what another package needs
    is public (the config kit, for one)."""
    wrong = []
    for package in PACKAGES:
        for file in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(file.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
                    continue
                top = node.module.split(".")[0]
                if top == package or top not in PACKAGES:
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.endswith("__"):
                        where = file.relative_to(ROOT).as_posix()
                        wrong.append(f"{where}:{node.lineno}: {node.module}.{alias.name}")
    assert wrong == []
