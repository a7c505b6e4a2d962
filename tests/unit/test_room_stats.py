"""Statistics as docs/room.md defines them, on hand rows whose figures are worked by hand."""

from __future__ import annotations

import datetime
from typing import Any

from room.config import Shift, StatsConfig
from room.stats import BREAK, dealer_stats, shift_of, table_stats

EPOCH = datetime.datetime(2026, 3, 1, 9, 0, tzinfo=datetime.UTC).timestamp()  # 10:00 in Rome
CONFIG = StatsConfig(
    timezone="Europe/Rome",
    shifts=(
        Shift("night", datetime.time(2, 0)),
        Shift("day", datetime.time(10, 0)),
        Shift("evening", datetime.time(18, 0)),
    ),
)


def _hand(
    table: str, n: int, start: float, length: float, dealer: str, **extra: Any
) -> dict[str, Any]:
    return {
        "table_id": table,
        "hand": n,
        "started_t": start,
        "completed_t": start + length,
        "epoch": EPOCH,
        "dealer_uid": dealer,
        "dealer_name": dealer.title(),
        "misdeals": 0,
        "four_card_flops": 0,
        "premature_cards": 0,
        "rake": 0,
        **extra,
    }


def test_hands_per_hour_counts_table_time_and_leaves_out_breaks() -> None:
    # Maria deals 3 hands 120 s apart (each 100 s long); then a 30-minute break; Luca deals
    # 2 hands 90 s apart (each 60 s long, the last one's table time is its own 60 s).
    rows = [
        _hand("t01", 1, 0, 100, "maria", misdeals=1),
        _hand("t01", 2, 120, 100, "maria"),
        _hand("t01", 3, 240, 100, "maria", four_card_flops=1),
        _hand("t01", 4, 240 + 100 + BREAK + 1200, 60, "luca"),
        _hand("t01", 5, 240 + 100 + BREAK + 1290, 60, "luca", premature_cards=1, rake=25),
    ]
    dealers = {d["dealer"]["uid"]: d for d in dealer_stats(CONFIG, rows)}
    maria, luca = dealers["maria"], dealers["luca"]
    # Maria: table time 120 + 120 + 100 (the break after her last hand is not hers) = 340 s
    assert maria["hands"] == 3 and maria["hands_per_hour"] == round(3 * 3600 / 340, 2)
    assert maria["average_hand_seconds"] == 100.0
    assert maria["misdeals_per_100"] == 33.33 and maria["four_card_flops_per_100"] == 33.33
    assert luca["hands_per_hour"] == round(2 * 3600 / 150, 2)  # 90 + 60 s
    assert luca["premature_cards_per_100"] == 50.0
    tables = table_stats(CONFIG, rows, by="all")
    assert tables == [
        {
            "table": "t01",
            "day": None,
            "shift": None,
            "hands": 5,
            "hands_per_hour": round(5 * 3600 / 490, 2),
            "average_hand_seconds": 84.0,
            "misdeals_per_100": 20.0,
            "four_card_flops_per_100": 20.0,
            "premature_cards_per_100": 20.0,
            "rake": 25,
        }
    ]


def test_a_night_shift_belongs_to_the_day_it_started() -> None:
    tz = datetime.timezone(datetime.timedelta(hours=1))
    assert shift_of(CONFIG.shifts, datetime.datetime(2026, 3, 2, 1, 30, tzinfo=tz)) == (
        datetime.date(2026, 3, 1),
        "evening",
    )
    assert shift_of(CONFIG.shifts, datetime.datetime(2026, 3, 2, 2, 0, tzinfo=tz)) == (
        datetime.date(2026, 3, 2),
        "night",
    )


def test_grouping_by_day_and_shift_uses_the_rooms_time_zone() -> None:
    late = 14 * 3600 + 1800  # 00:30 the next day in Rome: still the evening shift of 1 March
    rows = [_hand("t01", 1, 0, 60, "maria"), _hand("t02", 1, late, 60, "maria", rake=7)]
    by_shift = dealer_stats(CONFIG, rows, by="shift")
    assert [(d["day"], d["shift"], d["hands"]) for d in by_shift] == [
        ("2026-03-01", "day", 1),
        ("2026-03-01", "evening", 1),
    ]
    by_day = table_stats(CONFIG, rows, by="day")
    assert [(t["table"], t["day"], t["rake"]) for t in by_day] == [
        ("t01", "2026-03-01", 0),
        ("t02", "2026-03-02", 7),
    ]
    assert dealer_stats(CONFIG, rows, since="2026-03-02")[0]["hands"] == 1
