"""The rule index (controller/rules/index.py): every rule cited in the code or in the events is
in it, every place it names exists, every rule has a test named after it, docs/rules.md is
current."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

from controller.rules.index import INDEX, Entry, key, lookup, markdown

# The repository: wherever the tests are placed below it.
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
CODE = [*sorted((ROOT / "controller").rglob("*.py"))]
# A rule number with a part (`35A-2`, `45-B1`, `53-A`) or a recommended procedure (`RP-5A`):
# never anything else, wherever it stands in the code.
PARTED = re.compile(r"^(RP-\d{1,2}[A-H]?\d?|\d{1,2}-?[A-H](-?\d)?)$")
# Any rule number, plain ones (`23`) included: only where the code says it is a rule.
RULE = re.compile(r"^(RP-\d{1,2}[A-H]?\d?|\d{1,2}(-?[A-H](-?\d)?)?)$")
# House rules the code names (a `rule`/`house_rule` that is not a TDA number).
HOUSE = {"fixed-limit", "rake", "straddle"}
# The profiles' numbering tables and the index itself name rules without citing them.
NOT_CITING = {"controller/rules/profiles.py", "controller/rules/index.py"}
# Where a plain string is a rule: `rule=...`, `house_rule=...`, {"rule": ...},
# RuleError(message, rule), rules.append(rule), and what `raise_block` returns.
RULE_KEYWORDS = {"rule", "house_rule"}


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _rule_places(tree: ast.AST) -> list[ast.AST]:
    """The expressions of a module that hold a rule reference."""
    places: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in RULE_KEYWORDS:
            places.append(node.value)
        elif isinstance(node, ast.Dict):
            places += [
                v
                for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and k.value in RULE_KEYWORDS
            ]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = getattr(func, "value", None)
            if name == "RuleError" and len(node.args) > 1:
                places.append(node.args[1])
            elif name == "append" and getattr(owner, "attr", getattr(owner, "id", "")) == "rules":
                places += node.args
        elif isinstance(node, ast.FunctionDef) and node.name == "raise_block":
            places += [n.value for n in ast.walk(node) if isinstance(n, ast.Return) and n.value]
    return places


def _docstrings(tree: ast.AST) -> set[int]:
    return {
        id(node.body[0].value)  # type: ignore[attr-defined]
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
        and ast.get_docstring(node) is not None
    }


def cited_in_code() -> dict[str, set[str]]:
    """Rule references in the product code -> the files citing them."""
    found: dict[str, set[str]] = {}
    for path in CODE:
        rel = str(path.relative_to(ROOT))
        if rel in NOT_CITING:
            continue
        tree = ast.parse(path.read_text(), rel)
        docs = _docstrings(tree)
        strings = [
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
        ]
        cited = {s for s in strings if PARTED.match(s)}
        for place in _rule_places(tree):
            cited |= {s for s in _strings(place) if RULE.match(s) or s in HOUSE}
        for rule in cited:
            found.setdefault(rule, set()).add(rel)
    return found


def cited_in_events() -> set[str]:
    """Every `rule` and `house_rule` the scenarios' expected outputs carry."""
    rules: set[str] = set()
    for path in (ROOT / "tests" / "scenarios").glob("*.expected.jsonl"):
        for line in path.read_text().splitlines():
            payload = json.loads(line)["payload"]
            rules |= {payload[k] for k in RULE_KEYWORDS if payload.get(k)}
    return rules


def test_the_code_cites_rules_the_collector_can_see() -> None:
    cited = cited_in_code()
    # A sample of each way a rule is cited, so the collector cannot go blind unnoticed.
    for rule in ("35A-2", "RP-5A", "39", "23", "48", "45-B1", "55", "straddle", "fixed-limit"):
        assert rule in cited, rule
    assert "controller/engine/procedures/four_card_flop_39.py" in cited["39"]


def test_every_rule_cited_in_the_code_is_in_the_index() -> None:
    indexed = {e.key for e in INDEX}
    missing = {r: sorted(f) for r, f in cited_in_code().items() if key(r) not in indexed}
    assert missing == {}


def test_every_rule_cited_in_an_event_is_in_the_index() -> None:
    events = cited_in_events()
    assert {"35A-2", "39", "RP-14", "23"} <= events
    indexed = {e.key for e in INDEX}
    assert sorted(r for r in events if key(r) not in indexed) == []


def test_the_index_lists_each_rule_once() -> None:
    keys = [e.key for e in INDEX]
    assert len(keys) == len(set(keys))


def _resolve(place: str) -> object:
    module_name, _, qualname = place.partition(":")
    target: object = importlib.import_module(module_name)
    for part in qualname.split(".") if qualname else ():
        target = getattr(target, part)
    return target


@pytest.mark.parametrize("entry", INDEX, ids=[e.rule for e in INDEX])
def test_every_place_the_index_names_exists(entry: Entry) -> None:
    assert entry.where
    for place in entry.where:
        assert _resolve(place) is not None, place


def _tokens(name: str) -> list[str]:
    return re.sub(r"(?<![a-z])rp_(?=\d)", "rp", name.lower()).split("_")


RULE_TOKEN = re.compile(r"^(rp\d{1,2}[a-h]?\d?|\d{1,2}([a-h]\d?)?)$")


def named_after(rule: str, test_name: str) -> bool:
    """Whether a test (or scenario) name carries the rule: `…_rule_35A2_…`, `…_rule_43_47_…`
    (the rule numbers right after `rule`), `…_rp_5a_…`; a house rule by its name."""
    wanted = key(rule).lower()
    if rule in HOUSE:
        return wanted in test_name.lower().replace("_", "")
    tokens = _tokens(test_name)
    named = {t for t in tokens if t.startswith("rp") and RULE_TOKEN.match(t)}
    for i, token in enumerate(tokens):
        if token == "rule":
            for after in tokens[i + 1 :]:
                if not RULE_TOKEN.match(after):
                    break
                named.add(after)
    return wanted in named


def all_test_names() -> list[str]:
    """Every test function's name, and every scenario trace's (they are test ids)."""
    names = [
        node.name
        for path in (ROOT / "tests").rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test")
    ]
    scenarios = [
        p.name.split(".")[0]
        for p in (ROOT / "tests" / "scenarios").glob("*.jsonl")
        if not p.name.endswith(".expected.jsonl")
    ]
    return names + scenarios


def test_the_test_name_matcher() -> None:
    """A rule token after `rule` (or `rp`), dashes dropped; house rules by name."""
    assert named_after("35A-2", "test_rule_35A2_first_card_wrong_seat")
    assert named_after("RP-5A", "rule_RP5A_premature_flop")
    assert named_after("RP-1", "test_rp_1_all_in_button_lights_the_lamp")
    assert named_after("43", "test_rule_43_47_seeded_random_rounds")
    assert named_after("47-A", "test_rule_43_47A_short_all_in")
    assert not named_after("12", "test_every_schema_is_a_valid_draft_2020_12_schema")
    assert not named_after("35A", "test_rule_35A2_first_card_wrong_seat")
    assert not named_after("1", "test_rule_47_example_1_cumulative_all_ins")
    assert named_after("fixed-limit", "test_rule_48_fixed_limit_three_raises")


def test_every_rule_in_the_index_has_a_test_named_after_it() -> None:
    names = all_test_names()
    untested = [e.rule for e in INDEX if not any(named_after(e.rule, n) for n in names)]
    assert untested == []


def test_docs_rules_md_is_the_index() -> None:
    """Regenerate with `python -m controller.rules.index > docs/rules.md`."""
    assert (ROOT / "docs" / "rules.md").read_text() == markdown()


def test_lookup_by_number_finds_every_part() -> None:
    assert [e.rule for e in lookup("35A-2")] == ["35A-2"]
    assert [e.rule for e in lookup("35a2")] == ["35A-2"]
    assert {e.rule for e in lookup("35")} == {
        "35A", "35A-1", "35A-2", "35A-3", "35A-4", "35A-5", "35B", "35C", "35D", "35E"
    }
    assert [e.rule for e in lookup("RP-5")] == ["RP-5A", "RP-5B", "RP-5C"]
    assert next(e.rule for e in lookup("39")) == "39"
    assert lookup("3") == []
    assert lookup("72") == []
    assert any("four_card_flop_39" in place for place in lookup("39")[0].where)
