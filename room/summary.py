"""One hand's summary row (listing, statistics) and PHH file, from its stored events."""

from __future__ import annotations

import json
from typing import Any

from controller.phh import HandMessages, PhhHand, build_phh
from controller.phh_chain import per_card, with_chain
from controller.phh_verdict import judge_phh, state_stacks
from room import chain
from room.store import Store

#: Event types that change a hand's summary.
SUMMARY_TYPES = frozenset(
    {"hand_started", "hand_completed", "misdeal", "four_card_flop", "premature_card"}
)


def hand_messages(store: Store, table: str, hand: int) -> HandMessages | None:
    """A hand's events as the PHH builder takes them (None before its hand_started)."""
    events = [json.loads(row["payload"]) for row in store.hand_events(table, hand)]
    if not events or events[0].get("type") != "hand_started":
        return None
    state = store.latest_state_before(table, int(events[0]["seq"]))
    players: dict[int, str] = {}
    if state is not None:
        for key, seat in (state.get("seats") or {}).items():
            if isinstance(seat, dict) and isinstance(seat.get("player"), str):
                players[int(key)] = seat["player"]
    started_at = None
    tables = [t for t in store.tables() if t["table_id"] == table]
    if tables and tables[0]["epoch"] is not None:
        started_at = float(tables[0]["epoch"]) + float(events[0]["t"])
    return HandMessages(table, hand, events, {}, players, started_at)


def hand_phh(store: Store, table: str, hand: int) -> PhhHand | None:
    """The PHH export of a completed hand (only the cards shown), None if not completed;
    with the hand's signed chain and when each hole card became readable, and by whom
    (controller/phh_chain.py)."""
    messages = hand_messages(store, table, hand)
    if messages is None or messages.events[-1].get("type") != "hand_completed":
        return None
    phh = build_phh(messages)
    first, last = phh.first_seq, phh.last_seq
    rows = store.query(
        "SELECT seq, payload FROM events WHERE room = ? AND table_id = ? AND seq BETWEEN ? "
        "AND ? ORDER BY seq",
        (store.room, table, first - 1, last),
    )
    by_seq = {int(r["seq"]): json.loads(r["payload"]) for r in rows}
    prev = bytes(32).hex() if first == 1 else by_seq.get(first - 1, {}).get("chain")
    run = [by_seq[s] for s in range(first, last + 1) if s in by_seq]
    readable = per_card(chain.readable(store, table, hand), hand)
    return with_chain(phh, run, prev=prev, readable=readable)


def _dealer(
    store: Store, table: str, started: dict[str, Any], events: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """Who dealt the hand: the dealer at its start, the last one badged in before it, or
    the one who badged in as it started (the first `dealer_changed` of the hand)."""
    dealer = started.get("dealer")
    if isinstance(dealer, dict):
        return dealer
    rows = store.events_of_type(table, "dealer_changed", before_seq=int(started["seq"]))
    if rows:
        found = json.loads(rows[0]["payload"]).get("dealer")
        if isinstance(found, dict):
            return found
    for event in events:
        if event.get("type") == "dealer_changed" and isinstance(event.get("dealer"), dict):
            return dict(event["dealer"])
    return None


def _starting(store: Store, table: str, started: dict[str, Any]) -> dict[int, int] | None:
    """Each seat's stack as the hand began: the `state` published just before its
    `hand_started` (None when the room does not have that very state)."""
    seq = int(started["seq"])
    state = store.latest_state_before(table, seq - 1)
    if state is None or state.get("seq") != seq - 1:
        return None
    return state_stacks(state)


def summarize(store: Store, table: str, hand: int) -> dict[str, Any] | None:
    """Recompute and store a hand's summary row from its events; the row (None: no start)."""
    rows = store.hand_events(table, hand)
    events = [json.loads(row["payload"]) for row in rows]
    started = next((e for e in events if e.get("type") == "hand_started"), None)
    if started is None:
        return None
    completed = next((e for e in events if e.get("type") == "hand_completed"), None)
    dealer = _dealer(store, table, started, events)
    counts = {kind: sum(1 for e in events if e.get("type") == kind) for kind in SUMMARY_TYPES}
    row: dict[str, Any] = {
        "table_id": table,
        "hand": hand,
        "first_seq": int(started["seq"]),
        "last_seq": int(events[-1]["seq"]),
        "started_t": float(started["t"]),
        "completed_t": float(completed["t"]) if completed else None,
        "dealer_uid": dealer.get("uid") if dealer else None,
        "dealer_name": dealer.get("name") if dealer else None,
        "players": len(started.get("seats") or []),
        "misdeals": counts["misdeal"],
        "four_card_flops": counts["four_card_flop"],
        "premature_cards": counts["premature_card"],
        "pot": 0,
        "rake": 0,
        "phh_problem": None,
    }
    if completed is not None and events[0] is started:
        phh = build_phh(HandMessages(table, hand, events))
        problem = phh.problem or judge_phh(phh, events, _starting(store, table, started))
        row |= {"pot": phh.awarded, "rake": phh.rake, "phh_problem": problem}
    elif completed is not None:
        row["phh_problem"] = "events before hand_started are missing"
    if completed is not None and isinstance(completed.get("rake"), int):
        row["rake"] = completed["rake"]  # the engine's own figure, under a raking profile
    store.put_hand(row)
    return row
