"""Dealer and table statistics from the hands' summary rows (docs/room.md, *Statistics*).

A hand counts where and when it started: its table, its dealer (`hand_started.dealer`, else
the last `dealer_changed` before it), the local day and shift of its start (the room's time
zone; a shift runs from its start to the next one's, past midnight included, and belongs to
the day it started). Wall time is the table's epoch (estimated by the room as the earliest
arrival time minus trace time `t`) plus `t`.

- hand duration: `hand_completed.t - hand_started.t`;
- table time of a hand: from its start to the next hand's start at that table, or its own
  duration when the next one starts more than `BREAK` seconds after it completed (a break,
  a table change) or there is none;
- hands per hour: 3600 x hands / their table time;
- misdeals, four-card flops, premature cards per 100 hands: 100 x events / hands;
- rake: the hand's `hand_completed.rake` (under a raking profile such as `campione`), else
  the chips put in that no pot paid back; summed by table and day or shift.
"""

from __future__ import annotations

import datetime
import zoneinfo
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from room.config import Shift, StatsConfig

#: A pause between hands longer than this (seconds) is a break, not dealing time.
BREAK = 600.0
GROUPINGS = ("all", "day", "shift")


@dataclass(frozen=True, slots=True)
class HandFacts:
    """What statistics need of one completed hand."""

    table: str
    hand: int
    dealer_uid: str | None
    dealer_name: str | None
    start: float  # unix time
    duration: float
    table_time: float
    misdeals: int
    four_card_flops: int
    premature_cards: int
    rake: int


def shift_of(shifts: tuple[Shift, ...], local: datetime.datetime) -> tuple[datetime.date, str]:
    """(the day the shift started, its name) for a local time."""
    ordered = sorted(shifts, key=lambda s: s.start)
    current = [s for s in ordered if s.start <= local.time()]
    if current:
        return local.date(), current[-1].name
    return local.date() - datetime.timedelta(days=1), ordered[-1].name


def facts(rows: Iterable[dict[str, Any]]) -> list[HandFacts]:
    """Completed hands (summary rows with their table's epoch) as statistics facts."""
    by_table: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        if row.get("completed_t") is None or row.get("epoch") is None:
            continue
        by_table.setdefault(str(row["table_id"]), []).append(row)
    out: list[HandFacts] = []
    for table, hands in by_table.items():
        hands.sort(key=lambda r: (float(r["started_t"]), int(r["hand"])))
        for i, row in enumerate(hands):
            start_t, end_t = float(row["started_t"]), float(row["completed_t"])
            duration = max(0.0, end_t - start_t)
            table_time = duration
            if i + 1 < len(hands):
                nxt = float(hands[i + 1]["started_t"])
                if nxt - end_t <= BREAK:
                    table_time = max(duration, nxt - start_t)
            out.append(
                HandFacts(
                    table=table,
                    hand=int(row["hand"]),
                    dealer_uid=row.get("dealer_uid"),
                    dealer_name=row.get("dealer_name"),
                    start=float(row["epoch"]) + start_t,
                    duration=duration,
                    table_time=table_time,
                    misdeals=int(row.get("misdeals") or 0),
                    four_card_flops=int(row.get("four_card_flops") or 0),
                    premature_cards=int(row.get("premature_cards") or 0),
                    rake=int(row.get("rake") or 0),
                )
            )
    return out


def _period(config: StatsConfig, fact: HandFacts, by: str) -> dict[str, str | None]:
    local = datetime.datetime.fromtimestamp(fact.start, zoneinfo.ZoneInfo(config.timezone))
    if by == "all":
        return {"day": None, "shift": None}
    if by == "day":
        return {"day": local.date().isoformat(), "shift": None}
    day, shift = shift_of(config.shifts, local)
    return {"day": day.isoformat(), "shift": shift}


def _figures(group: list[HandFacts]) -> dict[str, Any]:
    hands = len(group)
    table_time = sum(f.table_time for f in group)
    return {
        "hands": hands,
        "hands_per_hour": round(3600.0 * hands / table_time, 2) if table_time > 0 else None,
        "average_hand_seconds": round(sum(f.duration for f in group) / hands, 1),
        "misdeals_per_100": round(100.0 * sum(f.misdeals for f in group) / hands, 2),
        "four_card_flops_per_100": round(100.0 * sum(f.four_card_flops for f in group) / hands, 2),
        "premature_cards_per_100": round(100.0 * sum(f.premature_cards for f in group) / hands, 2),
    }


def _in_range(config: StatsConfig, fact: HandFacts, since: str | None, until: str | None) -> bool:
    day = datetime.datetime.fromtimestamp(fact.start, zoneinfo.ZoneInfo(config.timezone)).date()
    return (since is None or day.isoformat() >= since) and (
        until is None or day.isoformat() <= until
    )


def dealer_stats(
    config: StatsConfig,
    rows: Iterable[dict[str, Any]],
    by: str = "all",
    since: str | None = None,
    until: str | None = None,
) -> list[dict[str, Any]]:
    """Per dealer (and per day or shift): hands per hour, hand duration, dealing errors."""
    groups: dict[tuple[Any, ...], list[HandFacts]] = {}
    names: dict[str | None, str | None] = {}
    for fact in facts(rows):
        if not _in_range(config, fact, since, until):
            continue
        period = _period(config, fact, by)
        names[fact.dealer_uid] = fact.dealer_name or names.get(fact.dealer_uid)
        key = (fact.dealer_uid, period["day"], period["shift"])
        groups.setdefault(key, []).append(fact)
    out = []
    for (uid, day, shift), group in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        dealer = {"uid": uid, "name": names.get(uid)} if uid is not None else None
        out.append({"dealer": dealer, "day": day, "shift": shift, **_figures(group)})
    return out


def table_stats(
    config: StatsConfig,
    rows: Iterable[dict[str, Any]],
    by: str = "day",
    since: str | None = None,
    until: str | None = None,
) -> list[dict[str, Any]]:
    """Per table (and per day or shift): hands per hour, hand duration, errors, rake."""
    groups: dict[tuple[Any, ...], list[HandFacts]] = {}
    for fact in facts(rows):
        if not _in_range(config, fact, since, until):
            continue
        period = _period(config, fact, by)
        groups.setdefault((fact.table, period["day"], period["shift"]), []).append(fact)
    out = []
    for (table, day, shift), group in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        figures = _figures(group)
        out.append(
            {
                "table": table,
                "day": day,
                "shift": shift,
                **figures,
                "rake": sum(f.rake for f in group),
            }
        )
    return out
