"""The engine's modules: each imports on its own, the import graph has no cycle (not even
for typing), procedures see the table only through the ports, and antenna names parse once."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from controller.engine.antennas import Antenna, antenna

# The repository: wherever the tests are placed below it.
ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
PACKAGES = ("controller.engine", "controller.rules")


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {
    module_name(p): p
    for package in PACKAGES
    for p in sorted((ROOT / package.replace(".", "/")).rglob("*.py"))
}


def imports_of(path: Path) -> set[str]:
    """Every module of ours a file imports, anywhere in it (`if TYPE_CHECKING:` included)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in MODULES else node.module)
    return {name for name in found if name in MODULES}


GRAPH = {name: imports_of(path) - {name} for name, path in MODULES.items()}


def cycle_in(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for dep in sorted(graph.get(name, ())):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (found := visit(dep)) is not None:
                return found
        path.pop()
        state[name] = 2
        return None

    for name in sorted(graph):
        if name not in state and (found := visit(name)) is not None:
            return found
    return None


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_engine_and_rules_module_imports_on_its_own(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__, f"{name} has no module docstring"


def test_engine_import_graph_has_no_cycle_not_even_for_typing() -> None:
    assert len(GRAPH) > 20
    assert cycle_in(GRAPH) is None, f"import cycle: {' -> '.join(cycle_in(GRAPH) or [])}"


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycle_in({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle_in({"a": {"b"}, "b": set()}) is None


def test_rules_know_nothing_of_the_engine() -> None:
    for name, deps in GRAPH.items():
        if name.startswith("controller.rules"):
            assert not {d for d in deps if d.startswith("controller.engine")}, name


def test_procedures_see_the_table_only_through_the_ports() -> None:
    allowed = (
        "controller.engine.procedures",
        "controller.engine.ports",
        "controller.engine.effects",
        "controller.rules",
    )
    for name, deps in GRAPH.items():
        if name.startswith("controller.engine.procedures"):
            outside = sorted(d for d in deps if not d.startswith(allowed))
            assert outside == [], f"{name} imports {outside}"


def test_betting_rules_see_the_hand_only_through_its_chips() -> None:
    allowed = (
        "controller.engine.betting",
        "controller.engine.state",
        "controller.engine.effects",
        "controller.engine.ports",
        "controller.engine.positions",
        "controller.engine.procedures.stage",
        "controller.rules",
    )
    rules = [n for n in GRAPH if n.startswith("controller.engine.betting.")]
    assert len(rules) >= 10
    for name in rules:
        outside = sorted(d for d in GRAPH[name] if not d.startswith(allowed))
        assert outside == [], f"{name} imports {outside}"
        assert "controller.engine.betting_flow" not in GRAPH[name]


#: Methods that change a set, dict, list or betting round in place.
MUTATORS = {
    "add",
    "discard",
    "remove",
    "pop",
    "popitem",
    "append",
    "extend",
    "insert",
    "clear",
    "update",
    "setdefault",
    "check",
    "call",
    "fold",
    "apply",
    "all_in",
    "bet_or_raise_to",
}
#: The betting modules that are records and wiring, not rules.
NOT_RULES = {"changes", "records", "hand_chips", "__init__"}


def _rooted_at(node: ast.expr, names: set[str]) -> bool:
    """Whether an attribute / subscript chain starts at one of `names` (`hb.live[3].x`)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return isinstance(node, ast.Name) and node.id in names


def _taken_from(node: ast.expr, names: set[str]) -> bool:
    """Whether a value is a part of `names`: `hb.round`, `a if c else hb.x`, `next(p for p
    in procedures ...)`."""
    if isinstance(node, ast.IfExp):
        return _taken_from(node.body, names) or _taken_from(node.orelse, names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "next":
        return any(
            isinstance(a, ast.GeneratorExp) and any(_rooted_at(g.iter, names) for g in a.generators)
            for a in node.args
        )
    return _rooted_at(node, names)


def writes_to_the_hand(source: str) -> list[str]:
    """Every place a function writes through what it was given (its parameters, `self`
    included) or through a name taken from them (`rnd = hb.round`, `for p in procedures`):
    assignments, augmented assignments, deletions and mutating calls. Names it made itself
    (`out = []`) are its own."""
    found = []
    for fn in ast.walk(ast.parse(source)):
        if not isinstance(fn, ast.FunctionDef):
            continue
        given = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
        for node in ast.walk(fn):  # names bound to a part of what it was given
            if isinstance(node, ast.Assign) and _taken_from(node.value, given):
                given |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.For | ast.comprehension) and _rooted_at(node.iter, given):
                given |= {t.id for t in ast.walk(node.target) if isinstance(t, ast.Name)}
        for node in ast.walk(fn):
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets = [
                    t
                    for tt in node.targets
                    for t in (tt.elts if isinstance(tt, ast.Tuple | ast.List) else [tt])
                ]
            elif isinstance(node, ast.AugAssign | ast.AnnAssign):
                targets = [node.target]
            elif isinstance(node, ast.Delete):
                targets = node.targets
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS
                and _rooted_at(node.func.value, given)
            ):
                found.append(f"{fn.name}: {ast.unparse(node)}")
            found += [
                f"{fn.name}: {ast.unparse(t)} written"
                for t in targets
                if isinstance(t, ast.Attribute | ast.Subscript) and _rooted_at(t, given)
            ]
    return found


def test_betting_rules_return_their_changes_and_never_write_the_hand() -> None:
    """The hand's one writer is the engine (`HandBetting.make`): a betting rule reads the
    hand (`HandChips`, read only) and returns its changes as data."""
    rules = sorted(
        p for p in (ROOT / "controller/engine/betting").glob("*.py") if p.stem not in NOT_RULES
    )
    assert len(rules) >= 12
    for path in rules:
        assert writes_to_the_hand(path.read_text()) == [], path.name


def test_the_write_finder_finds_writes() -> None:
    """The check above can fail: every way a rule used to write the hand is found."""
    source = """
def rule(hb: HandChips, t: float) -> None:
    rnd = hb.round
    hb.live.discard(3)
    hb.contrib[3] += 5
    hb.seats[3].stack -= 5
    rnd.bets[3] = 0
    hb.rake = 2
    del hb.held[3]
    rnd.check(3)
"""
    assert len(writes_to_the_hand(source)) == 7
    procedure = """
class P:
    def step(self, procs: list[P], seat: int) -> list[Effect]:
        self.stage = Stage.DONE
        kept = self.pushes if seat else self.folds
        kept.append(seat)
        for p in procs:
            p.left.clear()
        call = next((p for p in procs if p.kind == "floor_call"), None)
        call.cards.append("As")
        out = [say("x")]
        out.append(say("y"))
        return out
"""
    assert len(writes_to_the_hand(procedure)) == 4


def test_procedures_return_their_changes_and_never_write_their_state() -> None:
    """A dealing procedure reads its own fields and returns its changes (`Update`) with its
    other effects; `HandDealing._do` carries them out. The four-card flop's hold and the
    premature flop's announcement are shaped the same."""
    modules = sorted((ROOT / "controller/engine/procedures").glob("*.py"))
    assert len(modules) >= 10
    for path in modules:
        assert writes_to_the_hand(path.read_text()) == [], path.name


def test_betting_rule_modules_are_named_for_their_rule() -> None:
    names = {n.rsplit(".", 1)[1] for n in MODULES if n.startswith("controller.engine.betting.")}
    assert {
        "out_of_turn_53",
        "fold_58",
        "check_55",
        "undercall_51b",
        "uncalled_15b_65a",
        "tabled_16",
        "mucked_winner_13c",
        "award_12_20",
        "forced_bets_rp11",
    } <= names


def test_procedure_modules_are_named_for_their_rule() -> None:
    names = {n.rsplit(".", 1)[1] for n in MODULES if n.startswith("controller.engine.procedures.")}
    assert {
        "misdeal_35",
        "exposed_card_35a5",
        "fouled_deck_35e",
        "button_short_37",
        "dead_hand_38",
        "four_card_flop_39",
        "premature_card_rp5",
        "away_30_penalty_71c",
    } <= names


@pytest.mark.parametrize(
    ("name", "kind", "seat"),
    [
        ("seat1", "seat", 1),
        ("seat10", "seat", 10),
        ("bet4", "bet", 4),
        ("board", "board", None),
        ("burn", "burn", None),
        ("muck", "muck", None),
        ("pot", "pot", None),
        ("register", "register", None),
        ("seatX", "other", None),
    ],
)
def test_antenna_names_parse_into_kind_and_seat(name: str, kind: str, seat: int | None) -> None:
    parsed = antenna(name)
    assert parsed == Antenna(name, kind, seat)  # type: ignore[arg-type]
    assert antenna(name) is parsed  # parsed once, then cached
    assert parsed.reads_chips == (kind in ("bet", "pot"))
    assert parsed.on_table == (kind in ("seat", "board"))


def _returns_effects() -> set[str]:
    """Names of the betting rules' and procedures' functions that return changes or effects,
    less any name a function elsewhere in the engine also has (`HandBetting.check`)."""
    effects: set[str] = set()
    others: set[str] = set()
    for path in (ROOT / "controller/engine").rglob("*.py"):
        mine = path.parent.name in ("betting", "procedures")
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, ast.FunctionDef):
                continue
            returns = ast.unparse(fn.returns) if fn.returns is not None else ""
            if mine and ("Effect" in returns or "Change" in returns):
                effects.add(fn.name)
            else:
                others.add(fn.name)
    return effects - others


def dropped_effects(source: str, names: set[str]) -> list[str]:
    """Calls of `names` whose result is thrown away (a statement of its own)."""
    return [
        ast.unparse(node)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute | ast.Name)
        and (
            node.value.func.attr
            if isinstance(node.value.func, ast.Attribute)
            else node.value.func.id
        )
        in names
    ]


def test_no_returned_change_or_effect_is_dropped() -> None:
    """A rule or procedure changes nothing itself: a call whose returned changes are not
    carried out loses them (a premature card never forgotten, RP-5B)."""
    names = _returns_effects()
    assert {"forget_left", "return_uncalled", "complete", "maybe_table"} <= names
    for path in sorted((ROOT / "controller/engine").rglob("*.py")):
        assert dropped_effects(path.read_text(), names) == [], path.name
    assert dropped_effects("def f(p):\n    forget_left(p)\n    x = complete()\n", names) == [
        "forget_left(p)"
    ]
