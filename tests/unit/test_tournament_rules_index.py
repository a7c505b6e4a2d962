"""The tournament's rule index (room/tournament/rules.py): every rule the tournament cites is
in it, every place it names exists, every rule has a test named after it, and the table in
docs/tournament.md is the index's."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from room.tournament.house import HOUSES
from room.tournament.rules import RULES, Rule, markdown

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())


def cited() -> set[str]:
    """Rules the tournament cites: the houses' `*_rule` fields and every `rule` argument or
    literal passed to `note`, `_propose` and `send` in room/tournament."""
    found: set[str] = set()
    for house in HOUSES.values():
        for name in house.__dataclass_fields__:
            value = getattr(house, name)
            if name.endswith("_rule") and value:
                found.add(value)
    for path in (ROOT / "room" / "tournament").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            args: list[ast.expr] = []
            if name == "note" and len(node.args) >= 3:
                args.append(node.args[2])
            if name == "_propose" and len(node.args) >= 4:
                args.append(node.args[3])
            args += [k.value for k in node.keywords if k.arg == "rule"]
            while args:
                arg = args.pop()
                if isinstance(arg, ast.IfExp):
                    args += [arg.body, arg.orelse]
                elif isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value:
                    found.add(arg.value)
    return found


def test_every_rule_the_tournament_cites_is_in_the_index() -> None:
    indexed = {r.rule for r in RULES}
    assert sorted(cited() - indexed) == []
    assert {"11-A", "RP-8A", "Venezia art. 5", "Casinos Austria art. 40"} <= cited()


def test_the_index_lists_each_rule_once() -> None:
    rules = [r.rule for r in RULES]
    assert len(rules) == len(set(rules))


@pytest.mark.parametrize("rule", RULES, ids=[r.rule for r in RULES])
def test_every_place_the_index_names_exists(rule: Rule) -> None:
    for place in rule.where:
        module, _, qualname = place.partition(":")
        target: object = importlib.import_module(module)
        for part in qualname.split(".") if qualname else ():
            target = getattr(target, part)
        assert target is not None, place


def _test_names() -> list[str]:
    return [
        node.name.lower()
        for path in (ROOT / "tests").rglob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
    ]


def test_every_rule_has_a_test_named_after_it() -> None:
    names = _test_names()
    missing = []
    for rule in RULES:
        key = rule.key.lower()
        if not any(
            f"_{key}_" in f"_{n.removeprefix('test_')}_" or n.startswith(f"test_{key}_")
            for n in names
        ):
            missing.append(rule.rule)
    assert missing == []


def test_docs_carry_the_index() -> None:
    doc = (ROOT / "docs" / "tournament.md").read_text(encoding="utf-8")
    assert markdown() in doc
