"""The monitor's views: tiles, banners, public cards only, seats read, replay steps, the
dealers' figures, the chart, and the markup (escaped)."""

from __future__ import annotations

import datetime
import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from kernel.errors import ConfigError
from room import render
from room.charts import LABEL_WIDTH, line_chart
from room.config import Shift, StatsConfig, load_room_config
from room.dealers import UNKNOWN, shift_hours
from room.monitor import (
    STALL_AFTER,
    banners,
    connection,
    open_floor_calls,
    public,
    seat_reads,
    sort_tiles,
    tile,
)
from room.replay import describe, results, steps
from tests.tv_helpers import allin_plan, engine_messages, hand_events, misdeal_events

NOW = 1_800_000_000.0


def status(state: str, age: float, heartbeat: int | None = 10) -> dict[str, Any]:
    payload: dict[str, Any] = {"state": state, "table": "t01", "t": NOW - age}
    if heartbeat is not None:
        payload["heartbeat"] = heartbeat
    return {"payload": payload, "received_at": NOW - age}


def kinds(state: dict[str, Any], **kw: Any) -> list[str]:
    args = {"link": "online", "floor_alerts": [], "last_event": None, "now": NOW} | kw
    return [b.kind for b in banners(state, **args)]


def alert(kind: str, hand: int | None, acked: str | None = None) -> dict[str, Any]:
    payload = {"type": kind, "hand": hand, "message": "floor called to seat 3"}
    return {"id": 1, "payload": payload, "acknowledged_by": acked}


def test_public_blanks_every_card_outside_the_fields_the_contract_allows() -> None:
    state = {
        "board": ["As", "Kd", "7c"],
        "seats": {"3": {"player": "Qs", "shown": ["Qh", "Jh"], "note": "Td"}},
        "procedures": [{"procedure": "four_card_flop", "cards": ["2c", "3c", "4c", "5c"]}],
        "showdown": {"3": {"cards": ["9s", "9d"], "rank": "pair"}},
        "oops": ["8h", {"deep": "2d"}],
    }
    out = public(state)
    assert out["board"] == ["As", "Kd", "7c"]
    assert out["seats"]["3"]["shown"] == ["Qh", "Jh"]
    assert out["seats"]["3"]["player"] == "??" and out["seats"]["3"]["note"] == "??"
    assert out["procedures"][0]["cards"] == ["2c", "3c", "4c", "5c"]
    assert out["showdown"]["3"]["cards"] == ["9s", "9d"]
    assert out["oops"] == ["??", {"deep": "??"}]


def test_connection_from_the_status_its_will_and_a_quiet_heartbeat() -> None:
    assert connection(None, NOW) == ("unknown", None)
    assert connection(status("online", 5), NOW) == ("online", 5)
    assert connection(status("online", 31), NOW) == ("stale", 31)  # 3 heartbeats of 10 s
    assert connection(status("online", 500, heartbeat=None), NOW) == ("online", 500)
    assert connection(status("offline", 42), NOW) == ("offline", 42)  # the last will


def test_a_banner_for_each_thing_that_needs_the_floor() -> None:
    misdeal = {"procedure": "misdeal", "rule": "35C", "instruction": "collect", "stage": "pending"}
    assert kinds({"hand": 3, "procedures": [misdeal]}) == ["misdeal"]
    why = {"type": "misdeal", "hand": 3, "reason": "boxed_cards", "rule": "35A-1"}
    (b,) = banners({"hand": 3, "procedures": [misdeal]}, "online", [], None, NOW, why)
    assert (b.title, b.text, b.severity) == (
        "MISDEAL (rule 35A-1)",
        "boxed cards. collect",
        "critical",
    )
    (old,) = banners({"hand": 4, "procedures": [misdeal]}, "online", [], None, NOW, why)
    assert old.title == "MISDEAL (rule 35C)"  # an earlier hand's misdeal says nothing
    four = {"procedure": "four_card_flop", "rule": "39", "needs_floor": True}
    premature = {"procedure": "premature_card", "rule": "RP-5B"}
    state = {"hand": 3, "procedures": [four, premature], "held": ["four_card_flop"]}
    assert kinds(state) == ["four_card_flop", "held", "premature_card", "floor"]
    assert kinds({"hand": None, "held": ["card_reader"]}) == ["reader", "held"]
    badge = banners({"held": ["badge_reader"]}, "online", [], None, NOW)
    assert [(b.kind, b.severity) for b in badge] == [("reader", "warning")]  # not held
    assert kinds({}, link="offline") == ["offline"]
    assert kinds({}, link="stale") == ["offline"]


def test_a_floor_call_shows_until_acknowledged_or_the_floor_arrives() -> None:
    calls = open_floor_calls([alert("floor_called", 7), alert("floor_needed", 6)], 7)
    assert [c["payload"]["hand"] for c in calls] == [7]  # this hand's only
    assert kinds({"hand": 7}, floor_alerts=calls) == ["floor"]
    assert open_floor_calls([alert("floor_called", 7, acked="Giulia")], 7) == []
    floor = {"uid": "04F1", "name": "Giulia Ferrari"}
    assert kinds({"hand": 7, "floor": floor}, floor_alerts=calls) == []


def test_a_hand_without_an_event_for_too_long_is_stalled() -> None:
    quiet = {"received_at": NOW - STALL_AFTER - 1, "type": "action"}
    recent = {"received_at": NOW - 5, "type": "action"}
    assert kinds({"hand": 4}, last_event=quiet) == ["stalled"]
    assert kinds({"hand": 4}, last_event=recent) == []
    assert kinds({"hand": None}, last_event=quiet) == []  # between hands: a quiet table
    assert "offline" in kinds({"hand": 4}, link="offline", last_event=quiet)
    assert "stalled" not in kinds({"hand": 4}, link="offline", last_event=quiet)


def test_offline_tables_first_then_the_ones_needing_the_floor() -> None:
    def row(table: str, state: dict[str, Any]) -> dict[str, Any]:
        return {"table": table, "status": "online", "state": state}

    tiles = [
        tile(row("t01", {}), status("online", 1), None, [], NOW),
        tile(row("t02", {"held": ["pause"]}), status("online", 1), None, [], NOW),
        tile(row("t03", {}), status("offline", 60), None, [], NOW),
        tile(row("t04", {}), status("online", 100), None, [], NOW),
    ]
    assert [t["table"] for t in sort_tiles(tiles)] == ["t03", "t04", "t02", "t01"]


def test_a_tile_carries_the_hand_the_level_the_pot_and_the_people() -> None:
    state = {
        "hand": 12,
        "street": "turn",
        "level": {"small_blind": 100, "big_blind": 200, "ante": 25},
        "pots": [{"amount": 1200, "eligible": [3, 4]}],
        "seats": {
            "1": {"player": None, "status": "empty", "bet": 0},
            "3": {"player": "Alice", "status": "allin", "bet": 0},
            "4": {"player": "Bob", "status": "active", "bet": 400},
        },
        "dealer": {"uid": "04A1", "name": "Maria Rossi"},
    }
    t = tile({"table": "t01", "status": "online", "state": state}, None, None, [], NOW)
    assert (t["hand"], t["street"], t["pot"], t["players"]) == (12, "turn", 1600, 2)
    assert (t["dealer"], t["floor"], t["link"]) == ("Maria Rossi", None, "online")
    assert render.level_text(t["level"]) == "100/200 ante 25"


def test_seats_read_show_which_reader_missed_a_card() -> None:
    state = {
        "hand": 2,
        "seats": {
            "1": {"player": "A", "status": "active", "cards": 2},
            "2": {"player": "B", "status": "active", "cards": 1},
            "3": {"player": "C", "status": "folded", "cards": 0},
            "4": {"player": "D", "status": "allin", "cards": 2, "shown": ["Ah", "Ad"]},
            "5": {"player": None, "status": "empty", "cards": 0},
        },
    }
    reads = {s["seat"]: s for s in seat_reads(state)}
    assert sorted(reads) == [1, 2, 3, 4]
    assert [n for n, s in reads.items() if s["missing"]] == [2]
    assert reads[4]["shown"] == ["Ah", "Ad"]
    dealing = {"hand": 2, "seats": {"1": {"player": "A", "status": "active", "cards": 1}}}
    assert not seat_reads(dealing)[0]["missing"]  # the deal has not gone round yet


def _hand_events(events: list[Any]) -> list[dict[str, Any]]:
    return [m.payload for m in engine_messages(events) if m.topic == "events"]


def test_replay_steps_through_a_real_hand_with_public_cards_only() -> None:
    plan = allin_plan()
    events = [e for e in _hand_events(hand_events(plan)) if e.get("hand") == 1]
    frames = steps(events)
    assert len(frames) == len(events)
    assert frames[0]["text"] == "hand 1 starts: button 4, blinds 100/200"
    tabled = next(f for f in frames if f["type"] == "hands_tabled")
    assert tabled["shown"] == {"1": ["As", "3c"], "2": ["Kd", "Ks"]}
    assert frames[-1]["board"] == plan.board
    assert frames[-1]["awarded"] == ["main pot 40,000 to seat 1"]
    every = repr(frames)
    assert not [c for s in (3, 4) for c in plan.hole[s] if c in every]
    awards = [e for e in events if e["type"] == "pot_awarded"]
    assert results(list(reversed(awards))) == {1: "main pot 40,000 to seat 1"}


def test_a_misdeal_in_words_and_the_replay_starts_the_deal_afresh() -> None:
    events = _hand_events(misdeal_events())
    misdeal = next(e for e in events if e["type"] == "misdeal")
    assert describe(misdeal) == "MISDEAL (rule 35A-2): first card wrong seat"
    assert describe({"type": "action", "seat": 4, "action": "raise", "amount": 600}) == (
        "seat 4 raises to 600"
    )
    frames = steps([*events, {"type": "board_dealt", "board": ["2c", "3c", "4c"]}])
    assert frames[-1]["board"] == ["2c", "3c", "4c"]
    after = frames[[f["type"] for f in frames].index("misdeal")]
    assert after["last"] == {} and after["board"] == []


def test_the_chart_is_svg_with_whole_hands_and_escaped_names() -> None:
    svg = line_chart({"<b>Maria</b>": [0, 3, 5]}, ["10:00", "11:00", "12:00"], title="hands")
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert "<b>" not in svg and "&lt;b&gt;Maria&lt;/b&gt;" in svg
    ticks = re.findall(r'text-anchor="end">([^<]+)<', svg)
    assert ticks == ["0", "1", "2", "3", "4", "5"]
    assert svg.count("<circle") == 3


@pytest.mark.parametrize(
    ("hands", "ticks"),
    [
        (10, ["0", "2", "4", "6", "8", "10"]),
        (100, ["0", "20", "40", "60", "80", "100"]),
        (1000, ["0", "200", "400", "600", "800", "1,000"]),
    ],
)
def test_the_chart_is_readable_at_10_100_and_1000_hands(hands: int, ticks: list[str]) -> None:
    labels = [f"{h:02d}:00" for h in range(24)]  # a whole day's shift, an hour each
    dealers = {f"Dealer {i}": [hands * ((h + i) % 3) // 2 for h in range(24)] for i in range(14)}
    svg = line_chart(dealers, labels, title="hands")
    assert re.findall(r'text-anchor="end">([^<]+)<', svg) == ticks  # round steps, no overlap
    label = r'<text x="([0-9.]+)" y="[0-9.]+" text-anchor="middle"'
    xs = [float(x) for x in re.findall(label, svg)]
    assert len(xs) >= 6 and xs[-1] > xs[0]
    assert min(b - a for a, b in itertools.pairwise(xs)) >= LABEL_WIDTH  # apart
    assert "23:00" in svg  # the last hour is labelled
    assert svg.count('class="series"') == 14 and "+4 more" in svg  # the legend fits


def test_hands_per_hour_of_the_shift_per_dealer() -> None:
    config = StatsConfig(
        timezone="UTC",
        shifts=(Shift("day", datetime.time(8)), Shift("night", datetime.time(20))),
    )
    start = datetime.datetime(2026, 11, 28, 8, tzinfo=datetime.UTC).timestamp()

    def hand(n: int, t: float, dealer: str | None, misdeals: int = 0) -> dict[str, Any]:
        return {
            "table_id": "t01",
            "hand": n,
            "started_t": t,
            "completed_t": t + 100,
            "epoch": start,
            "dealer_uid": dealer,
            "dealer_name": dealer,
            "misdeals": misdeals,
        }

    rows = [
        hand(1, -600, "Old"),  # the previous shift
        hand(2, 60, "Maria"),
        hand(3, 200, "Maria", misdeals=1),
        hand(4, 3700, "Luca"),
        hand(5, 3900, None),
    ]
    name, labels, series, summary = shift_hours(config, rows, start + 2 * 3600 + 5)
    assert name == "day" and labels == ["08:00", "09:00", "10:00"]
    assert series == {UNKNOWN: [0, 1, 0], "Luca": [0, 1, 0], "Maria": [2, 0, 0]}
    maria = next(s for s in summary if s["dealer"] == "Maria")
    assert (maria["hands"], maria["errors"], maria["errors_per_100"]) == (2, 1, 50.0)


def test_the_markup_escapes_what_the_tables_send() -> None:
    t = tile(
        {"table": "<t1>", "status": "online", "state": {"dealer": {"name": "<i>x</i>"}}},
        None,
        None,
        [],
        NOW,
    )
    html = render.room_fragment([t])
    assert "<t1>" not in html and "&lt;t1&gt;" in html and "<i>" not in html
    row = {
        "id": 5,
        "table_id": "t01",
        "received_at": NOW,
        "acknowledged_by": None,
        "acknowledged_at": None,
        "payload": {"type": "x", "severity": "warning", "message": "<script>alert(1)</script>"},
    }
    feed = render.alerts_fragment([row])
    assert "<script>" not in feed and 'data-alerts="5"' in feed
    acked = render.alerts_fragment([{**row, "acknowledged_by": "Giulia", "acknowledged_at": NOW}])
    assert "Giulia at" in acked and "button" not in acked


def test_monitor_section_sets_when_a_hand_is_stalled(tmp_path: Path) -> None:
    path = tmp_path / "room.toml"
    path.write_text('[room]\nname = "r1"\n\n[monitor]\nstalled_after = 90\n')
    config = load_room_config(path)
    assert config.monitor.stalled_after == 90.0
    quiet = {"received_at": NOW - 100, "type": "action"}
    state = {"hand": 4}
    assert [b.kind for b in banners(state, "online", [], quiet, NOW, None, 90.0)] == ["stalled"]
    assert banners(state, "online", [], quiet, NOW) == []  # 180 s by default
    path.write_text('[room]\nname = "r1"\n\n[monitor]\nstalled_after = 5\n')
    with pytest.raises(ConfigError, match=r"\[monitor\] stalled_after: must be in \[10, 86400\]"):
        load_room_config(path)
    path.write_text('[room]\nname = "r1"\n\n[monitor]\nstall = 90\n')
    with pytest.raises(ConfigError, match="stall"):
        load_room_config(path)
    path.write_text('[room]\nname = "r1"\n')
    assert load_room_config(path).monitor.stalled_after == 180.0
