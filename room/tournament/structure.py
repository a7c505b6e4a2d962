"""A tournament file (TOML): the event, its blind structure with breaks, tables and payouts.

Validated like every other file of the project: an unknown key or an impossible value stops
the room server with a message that names the file and the key (docs/tournament.md lists
every key).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernel.configkit import Section, Where, read_sections, section
from kernel.errors import ConfigError
from room.tournament.house import HouseRules, final_table_size, house

SECTIONS = ("tournament", "level", "break", "payouts", "payout", "player")
TABLE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: Seats on a table (controller/commands.py: seats 1..10 on every table).
MAX_SEATS = 10


@dataclass(frozen=True, slots=True)
class Level:
    """One level of the blind structure; `number` counts levels only (breaks are not levels)."""

    number: int
    small_blind: int
    big_blind: int
    ante: int
    bb_ante: bool
    seconds: float


@dataclass(frozen=True, slots=True)
class Break:
    """A break after a level (`after_level`), `seconds` long."""

    after_level: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Step:
    """One step of the clock: a level, or a break (level None)."""

    level: Level | None
    seconds: float
    after_level: int  # for a break: the level it follows; for a level: its own number

    @property
    def is_break(self) -> bool:
        return self.level is None


@dataclass(frozen=True, slots=True)
class PayoutBracket:
    """The percentages paid (place 1 first) once the event has at least `entries` entries."""

    entries: int
    percent: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Payouts:
    """[payouts] and [[payout]]: what each entry adds to the prize pool and how it is paid."""

    buy_in: int = 0  # to the prize pool, per entry (re-entries included)
    guarantee: int = 0  # the least prize pool
    unit: int = 1  # prizes are rounded down to this
    currency: str = ""
    brackets: tuple[PayoutBracket, ...] = ()

    def bracket(self, entries: int) -> PayoutBracket | None:
        """The bracket for `entries` entries: the last whose `entries` is reached."""
        chosen = None
        for b in self.brackets:
            if entries >= b.entries:
                chosen = b
        return chosen


@dataclass(frozen=True, slots=True)
class Registration:
    """A player registered in the file (before the event)."""

    name: str
    player_id: str


@dataclass(frozen=True, slots=True)
class Structure:
    """A whole tournament file."""

    path: Path
    name: str
    house: HouseRules
    starting_stack: int
    seats_per_table: int
    tables: tuple[str, ...]  # the room's tables the event may use, in the order they open
    break_order: tuple[str, ...]  # the order tables break (11-C; Casinos Austria art. 39)
    final_table: str  # where the final table is played
    final_table_size: int
    steps: tuple[Step, ...]
    late_registration_levels: int  # late registration is open until the end of this level
    reentries: int  # re-entries per player (0: freezeout)
    balance_difference: int  # tables are balanced once they differ by this many players
    hand_for_hand_seconds: float  # RP-8 B: the clock runs this much off per hand
    hand_for_hand_at: int = 1  # hand-for-hand is proposed this many players from the money
    payouts: Payouts = field(default_factory=Payouts)
    players: tuple[Registration, ...] = ()

    @property
    def levels(self) -> list[Level]:
        return [s.level for s in self.steps if s.level is not None]

    def level(self, number: int) -> Level:
        """Level `number` (1-based); past the last one, the last one."""
        levels = self.levels
        return levels[min(max(number, 1), len(levels)) - 1]


def _positive_minutes(s: Section, key: str, default: float | None) -> float:
    if not s.has(key):
        if default is None:
            raise s.error(key, "missing (required)")
        return default
    value = s.float_(key, 0.0)
    if not 0 < value <= 24 * 60:
        raise s.error(key, f"must be in (0, 1440] minutes, got {value:g}")
    return value * 60.0


def _levels(path: Path, data: dict[str, Any]) -> list[Level]:
    raw = data.get("level")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{path}: [[level]]: give at least one level of the blind structure")
    levels: list[Level] = []
    for i, item in enumerate(raw):
        where = f"level.{i + 1}"
        if not isinstance(item, dict):
            raise ConfigError(f"{path}: [[level]] #{i + 1} must be a table")
        s = Section(
            Where(path, where), item, ("small_blind", "big_blind", "ante", "bb_ante", "minutes")
        )
        sb = s.required_int("small_blind", lo=0)
        bb = s.required_int("big_blind", lo=1)
        if sb > bb:
            raise s.error("small_blind", f"{sb} is above the big blind {bb}")
        ante = s.int_("ante", 0, lo=0)
        levels.append(
            Level(
                number=i + 1,
                small_blind=sb,
                big_blind=bb,
                ante=ante,
                bb_ante=s.bool_("bb_ante", False),
                seconds=_positive_minutes(s, "minutes", None),
            )
        )
    return levels


def _breaks(path: Path, data: dict[str, Any], levels: int) -> list[Break]:
    raw = data.get("break", [])
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: [[break]] must be an array of tables")
    breaks: list[Break] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ConfigError(f"{path}: [[break]] #{i + 1} must be a table")
        s = Section(Where(path, f"break.{i + 1}"), item, ("after_level", "minutes"))
        after = s.required_int("after_level", lo=1, hi=levels)
        if any(b.after_level == after for b in breaks):
            raise s.error("after_level", f"a break after level {after} is given twice")
        breaks.append(Break(after, _positive_minutes(s, "minutes", None)))
    return sorted(breaks, key=lambda b: b.after_level)


def _steps(levels: list[Level], breaks: list[Break]) -> tuple[Step, ...]:
    steps: list[Step] = []
    after = {b.after_level: b for b in breaks}
    for level in levels:
        steps.append(Step(level, level.seconds, level.number))
        b = after.get(level.number)
        if b is not None:
            steps.append(Step(None, b.seconds, level.number))
    return tuple(steps)


def _payouts(path: Path, data: dict[str, Any]) -> Payouts:
    s = section(path, data, "payouts", ("buy_in", "guarantee", "unit", "currency", "percent"))
    brackets: list[PayoutBracket] = []
    percent = s.data.get("percent")
    if percent is not None:
        brackets.append(PayoutBracket(1, _percentages(s, "percent", percent)))
    raw = data.get("payout", [])
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: [[payout]] must be an array of tables")
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ConfigError(f"{path}: [[payout]] #{i + 1} must be a table")
        b = Section(Where(path, f"payout.{i + 1}"), item, ("entries", "percent"))
        entries = b.required_int("entries", lo=1)
        if brackets and entries <= brackets[-1].entries:
            raise b.error("entries", "brackets must be given by growing number of entries")
        if "percent" not in item:
            raise b.error("percent", "missing (required)")
        brackets.append(PayoutBracket(entries, _percentages(b, "percent", item["percent"])))
    return Payouts(
        buy_in=s.int_("buy_in", 0, lo=0),
        guarantee=s.int_("guarantee", 0, lo=0),
        unit=s.int_("unit", 1, lo=1),
        currency=s.str_("currency") or "",
        brackets=tuple(brackets),
    )


def _percentages(s: Section, key: str, value: Any) -> tuple[float, ...]:
    if not isinstance(value, list) or not value:
        raise s.error(key, "expected a non-empty array of percentages, place 1 first")
    out: list[float] = []
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, int | float) or not 0 < item <= 100:
            raise s.error(f"{key}[{i}]", f"expected a percentage in (0, 100], got {item!r}")
        if out and item > out[-1]:
            raise s.error(f"{key}[{i}]", "a place is never paid more than the one above it")
        out.append(float(item))
    if abs(sum(out) - 100.0) > 0.01:
        raise s.error(key, f"the percentages add up to {sum(out):g}, not 100")
    return tuple(out)


def _players(path: Path, data: dict[str, Any]) -> tuple[Registration, ...]:
    raw = data.get("player", [])
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: [[player]] must be an array of tables")
    players: list[Registration] = []
    seen: set[str] = set()
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ConfigError(f"{path}: [[player]] #{i + 1} must be a table")
        s = Section(Where(path, f"player.{i + 1}"), item, ("name", "id"))
        name = s.str_("name", required=True)
        assert name is not None
        pid = s.name("id") or f"P{i + 1:04d}"
        if pid in seen:
            raise s.error("id", f"{pid!r} is given twice")
        seen.add(pid)
        players.append(Registration(name, pid))
    return tuple(players)


def _tables(s: Section) -> tuple[str, ...]:
    tables = s.str_list("tables")
    if not tables:
        raise s.error("tables", 'give the room\'s tables the event may use, e.g. ["t01", "t02"]')
    for t in tables:
        if not TABLE_RE.match(t):
            raise s.error("tables", f"{t!r} is not a table id (letters, digits, '_', '-')")
    if len(set(tables)) != len(tables):
        raise s.error("tables", "a table is listed twice")
    return tuple(tables)


def load_structure(path: Path, text: str | None = None) -> Structure:
    """Read and validate a tournament file (or its `text`, as a journal kept it);
    ConfigError naming the file and key."""
    path = Path(path)
    if text is None:
        data = read_sections(path, SECTIONS)
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: TOML syntax error: {exc}") from None
        unknown = sorted(set(data) - set(SECTIONS))
        if unknown:
            raise ConfigError(f"{path}: unknown section [{unknown[0]}]")
    s = section(
        path,
        data,
        "tournament",
        (
            "name",
            "profile",
            "starting_stack",
            "seats_per_table",
            "tables",
            "break_order",
            "final_table",
            "final_table_size",
            "late_registration_levels",
            "reentries",
            "balance_difference",
            "hand_for_hand_minutes",
            "hand_for_hand_at",
        ),
    )
    name = s.str_("name", required=True)
    assert name is not None
    rules = house(s.choice("profile", ("tda-2019", "venezia", "casinos-austria"), "tda-2019"))
    seats = s.int_("seats_per_table", 9, lo=2, hi=MAX_SEATS)
    tables = _tables(s)
    order = s.str_list("break_order")
    if order is None:
        # Tables break from the last one opened (Casinos Austria art. 3 and 39: the highest
        # number, tables added later first); TDA 11-C leaves it to a predetermined order.
        order = list(reversed(tables))
    if sorted(order) != sorted(tables):
        raise s.error("break_order", "must list exactly the tables of `tables`, once each")
    final = s.str_("final_table") or tables[0]
    if final not in tables:
        raise s.error("final_table", f"{final!r} is not one of `tables`")
    configured = s.int_("final_table_size", 0, lo=0, hi=MAX_SEATS) or None
    if configured is not None and configured < 2:
        raise s.error("final_table_size", "a final table has at least 2 players")
    if rules.final_table == "table_size" and configured is not None and configured < 7:
        raise s.error(
            "final_table_size", f"{rules.document}, art. 6: a final table of 7, 8, 9 or 10"
        )
    levels = _levels(path, data)
    breaks = _breaks(path, data, len(levels))
    late = s.int_("late_registration_levels", 0, lo=0, hi=len(levels))
    hfh = s.float_("hand_for_hand_minutes", 2.0)
    if not 0 < hfh <= 30:
        raise s.error("hand_for_hand_minutes", f"must be in (0, 30] minutes, got {hfh:g}")
    structure = Structure(
        path=path,
        name=name,
        house=rules,
        starting_stack=s.int_("starting_stack", 20_000, lo=1),
        seats_per_table=seats,
        tables=tables,
        break_order=tuple(order),
        final_table=final,
        final_table_size=final_table_size(rules, seats, configured),
        steps=_steps(levels, breaks),
        late_registration_levels=late,
        reentries=s.int_("reentries", 0, lo=0, hi=100),
        balance_difference=s.int_("balance_difference", 2, lo=2, hi=MAX_SEATS),
        hand_for_hand_seconds=hfh * 60.0,
        hand_for_hand_at=s.int_("hand_for_hand_at", 1, lo=1, hi=100),
        payouts=_payouts(path, data),
        players=_players(path, data),
    )
    return structure
