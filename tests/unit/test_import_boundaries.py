"""Import boundaries (docs/architecture.md): drivers stand on a small core, the controller
reaches drivers and simulators only through its device wiring, lazily, by backend name."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: What a driver may import from the controller: the errors and the input event types.
DRIVER_CORE = frozenset({"kernel.errors", "kernel.inputs"})
#: The controller modules that may import drivers or firmware_sim, and only lazily.
DEVICE_WIRING = {
    "controller/devices.py": ("drivers", "firmware_sim"),  # the backends and their drivers
}
#: The shell's modules that do I/O (devices, files, sockets, clocks, threads).
SHELL = (
    "antennas",
    "backends",
    "board_focus",
    "daemon",
    "delivery",
    "devices",
    "draws",
    "heap_trim",
    "hole_release",
    "hooks",
    "intake",
    "journal",
    "lamps",
    "localbroker",
    "notices",
    "publisher",
    "recovery",
    "register_deck",
    "room_commands",
    "rotation",
    "sdnotify",
    "simview",
    "staff_sync",
    "supervision",
)


@dataclass(frozen=True)
class Import:
    """One imported module, where, and whether it is imported only when used."""

    path: str
    line: int
    module: str
    lazy: bool  # inside a function, or under `if TYPE_CHECKING:` (never at run time)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, path: str, lazy: bool = False) -> Iterator[Import]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import):
            for alias in child.names:
                yield Import(path, child.lineno, alias.name, lazy)
        elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
            yield Import(path, child.lineno, child.module, lazy)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _imports(child, path, True)
        elif isinstance(child, ast.If) and _is_type_checking(child.test):
            for statement in child.body:
                yield from _imports(ast.Module(body=[statement], type_ignores=[]), path, True)
            for statement in child.orelse:
                yield from _imports(ast.Module(body=[statement], type_ignores=[]), path, lazy)
        else:
            yield from _imports(child, path, lazy)


@cache
def imports_of(package: str) -> list[Import]:
    """Every import statement in a package's modules, parsed (nothing is imported)."""
    found: list[Import] = []
    for file in sorted((ROOT / package).rglob("*.py")):
        path = file.relative_to(ROOT).as_posix()
        found += _imports(ast.parse(file.read_text(encoding="utf-8"), path), path)
    return found


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_the_parser_sees_lazy_and_type_checking_imports() -> None:
    """The checker itself: a module-level import is eager; one in a function or under
    TYPE_CHECKING is lazy (so the tests below can fail)."""
    source = (
        "import drivers.gpio\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from drivers.badge import BadgeReader\n"
        "else:\n"
        "    import firmware_sim\n"
        "def f():\n"
        "    from firmware_sim.reader_board import ReaderBoardSim\n"
    )
    found = [(i.module, i.lazy) for i in _imports(ast.parse(source), "x.py")]
    assert found == [
        ("drivers.gpio", False),
        ("typing", False),
        ("drivers.badge", True),
        ("firmware_sim", False),
        ("firmware_sim.reader_board", True),
    ]


def test_drivers_import_only_the_core_of_the_controller() -> None:
    """drivers/ depend on kernel.errors and kernel.inputs, never on the
    configuration, the staff registry or anything else of the controller, nor on the
    simulators (a driver takes plain parameters: no global settings read inside)."""
    wrong = [
        f"{i.path}:{i.line}: {i.module}"
        for i in imports_of("drivers")
        if (_within(i.module, "controller") and i.module not in DRIVER_CORE)
        or _within(i.module, "firmware_sim")
    ]
    assert wrong == []


@pytest.mark.parametrize("package", ["drivers", "firmware_sim"])
def test_the_controller_reaches_devices_only_through_its_device_wiring(package: str) -> None:
    """controller/ imports drivers and firmware_sim only in the device wiring, inside the
    function that needs them: a table loads the hardware library or simulator of the
    backends it names, and nothing else."""
    wrong = []
    for i in imports_of("controller"):
        if not _within(i.module, package):
            continue
        allowed = package in DEVICE_WIRING.get(i.path, ())
        if not (allowed and i.lazy):
            wrong.append(f"{i.path}:{i.line}: {i.module}" + ("" if allowed else " (not wiring)"))
    assert wrong == []


def test_backends_are_named_only_in_the_backend_table() -> None:
    """Backend modules are looked up by name in controller/backends.py: no other controller
    module spells a driver or simulator module as a string to import it."""
    wrong = []
    for file in sorted((ROOT / "controller").rglob("*.py")):
        path = file.relative_to(ROOT).as_posix()
        if path == "controller/backends.py":
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value.startswith(("drivers.", "firmware_sim."))
            ):
                wrong.append(f"{path}:{node.lineno}: {node.value!r}")
    assert wrong == []


@pytest.mark.parametrize("package", ["controller/engine", "controller/rules"])
def test_the_engine_imports_no_module_of_the_shell(package: str) -> None:
    """The engine is pure: nothing it imports reads a device, a file, a socket or a clock."""
    shell = [f"controller.{name}" for name in SHELL] + ["drivers", "firmware_sim", "sim"]
    wrong = [
        f"{i.path}:{i.line}: {i.module}"
        for i in imports_of(package)
        if any(_within(i.module, module) for module in shell)
    ]
    assert wrong == []
