"""The dealers page's figures: the current shift, hands per dealer per hour of it, errors."""

from __future__ import annotations

import datetime
import zoneinfo
from collections.abc import Iterable
from typing import Any

from room.config import StatsConfig
from room.stats import HandFacts, facts, shift_of

UNKNOWN = "(no dealer badge)"


def shift_start(config: StatsConfig, now: float) -> tuple[datetime.datetime, str]:
    """When the shift in progress at `now` began (local, aware) and its name."""
    tz = zoneinfo.ZoneInfo(config.timezone)
    local = datetime.datetime.fromtimestamp(now, tz)
    day, name = shift_of(config.shifts, local)
    start = next(s.start for s in config.shifts if s.name == name)
    return datetime.datetime.combine(day, start, tz), name


def _name(fact: HandFacts) -> str:
    return fact.dealer_name or fact.dealer_uid or UNKNOWN


def shift_hours(
    config: StatsConfig, rows: Iterable[dict[str, Any]], now: float
) -> tuple[str, list[str], dict[str, list[int]], list[dict[str, Any]]]:
    """(shift name, hour labels, hands started per dealer per hour of the shift, per
    dealer: hands, hands per hour and dealing errors per 100 hands over the shift)."""
    start, name = shift_start(config, now)
    first = start.timestamp()
    hours = max(1, min(24, int((now - first) // 3600) + 1))
    labels = [(start + datetime.timedelta(hours=h)).strftime("%H:%M") for h in range(hours)]
    counts: dict[str, list[int]] = {}
    groups: dict[str, list[HandFacts]] = {}
    for fact in facts(rows):
        if not first <= fact.start <= now:
            continue
        hour = min(hours - 1, int((fact.start - first) // 3600))
        counts.setdefault(_name(fact), [0] * hours)[hour] += 1
        groups.setdefault(_name(fact), []).append(fact)
    summary = []
    for dealer, group in sorted(groups.items()):
        table_time = sum(f.table_time for f in group)
        errors = sum(f.misdeals + f.four_card_flops + f.premature_cards for f in group)
        summary.append(
            {
                "dealer": dealer,
                "hands": len(group),
                "hands_per_hour": round(3600 * len(group) / table_time, 1) if table_time else None,
                "errors": errors,
                "errors_per_100": round(100 * errors / len(group), 1),
            }
        )
    return name, labels, dict(sorted(counts.items())), summary
