"""The import contract (pyproject.toml, [tool.importlinter]; docs/architecture.md, "Layers"):
the shared kernel under the drivers, the table under the room and TV, one command line
wiring them, and no cycle among the modules of a program. grimp sees every import, those
inside functions and under TYPE_CHECKING too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = (
    "tablectl", "kernel", "controller", "drivers", "firmware", "firmware_sim", "sim", "room",
    "broadcast",
)


def test_the_import_contract_holds() -> None:
    """`lint-imports` on the contract of pyproject.toml: every contract kept."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
         "lint_imports_command(['--no-cache', '--no-logo'])"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_no_new_cycle_between_top_level_packages() -> None:
    """Each pair of top-level packages imports one way only."""
    graph = grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False, cache_dir=None)
    edges: set[tuple[str, str]] = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = module.split(".")[0], imported.split(".")[0]
            if a != b:
                edges.add((a, b))
    cycles = {tuple(sorted(pair)) for pair in edges if pair[::-1] in edges}
    assert cycles == set(), sorted(cycles)


def test_the_contract_sees_imports_inside_functions() -> None:
    """A lazy import (the room's file read by `tablectl verify`) counts like any other."""
    graph = grimp.build_graph("tablectl", "room", cache_dir=None)
    details = graph.get_import_details(importer="tablectl.cli", imported="room.config")
    assert details, "tablectl/cli.py reads a room file through room.config, inside a function"


def test_the_command_line_is_named_by_its_one_home() -> None:
    """`tablectl.cli` (console script `tablectl`); the table's package has no command line."""
    stale = []
    for folder in ("tablectl", "kernel", "controller", "room", "broadcast", "firmware_sim", "sim",
                   "bench", "tests", "scripts", "docs", "systemd"):  # fmt: skip
        for file in sorted((ROOT / folder).rglob("*")):
            if file.suffix not in (".py", ".md", ".sh", ".toml", ".service") or not file.is_file():
                continue
            text = file.read_text(encoding="utf-8", errors="replace")
            for old in ("controller.cli", "controller/cli.py"):
                if old in text and file.name != "test_import_contract.py":
                    stale.append(f"{file.relative_to(ROOT).as_posix()}: {old}")
    assert not (ROOT / "controller" / "cli.py").exists()
    assert stale == []
