"""A stored hand as steps for the monitor's replay, and events in words (public cards only).

Each step is the table after one event: the board, the hands the rules turned face up,
each seat's last action, the pots awarded so far, and the event described for people.
"""

from __future__ import annotations

from typing import Any

from room.monitor import PROCEDURE_TITLES, public

ACTION_WORDS = {
    "check": "checks",
    "call": "calls",
    "bet": "bets",
    "raise": "raises to",
    "fold": "folds",
    "allin": "is all in for",
}


def _cards(value: Any) -> str:
    return " ".join(str(c) for c in value or [])


def _money(value: Any) -> str:
    return f"{int(value):,}" if isinstance(value, int | float) else "?"


def describe(event: dict[str, Any]) -> str:
    """One event in words."""
    e = public(event)
    kind = str(e.get("type"))
    seat = f"seat {e.get('seat')}"
    rule = f" (rule {e['rule']})" if e.get("rule") else ""
    if kind == "hand_started":
        return (
            f"hand {e.get('hand')} starts: button {e.get('button')}, blinds "
            f"{_money(e.get('small_blind'))}/{_money(e.get('big_blind'))}"
            + (f", ante {_money(e.get('ante'))}" if e.get("ante") else "")
        )
    if kind == "posted":
        what = f"{e['blind']} blind" if e.get("blind") else "ante"
        return f"{seat} posts {what} {_money(e.get('amount') or e.get('ante'))}"
    if kind == "action":
        verb = ACTION_WORDS.get(str(e.get("action")), str(e.get("action")))
        amount = "" if e.get("action") in ("check", "fold") else f" {_money(e.get('amount'))}"
        return f"{seat} {verb}{amount}{rule}"
    if kind == "board_dealt":
        return f"{e.get('street')}: {_cards(e.get('cards'))}"
    if kind == "misdeal":
        return f"MISDEAL{rule}: {str(e.get('reason', '')).replace('_', ' ')}"
    if kind in ("four_card_flop", "premature_card"):
        return f"{PROCEDURE_TITLES[kind]}{rule}: {_cards(e.get('cards'))}"
    if kind == "hands_tabled":
        shown = e.get("showdown") or {}
        return "hands tabled (rule 16): " + "; ".join(
            f"seat {s} {_cards(c)}" for s, c in shown.items()
        )
    if kind == "pot_awarded":
        winners = ", ".join(str(w) for w in e.get("winners") or [])
        name = "main pot" if not e.get("pot") else f"side pot {e.get('pot')}"
        return f"{name} {_money(e.get('amount'))} to seat {winners}"
    if kind == "uncalled_bet_returned":
        return f"{seat} gets back {_money(e.get('amount'))} uncalled{rule}"
    if kind == "hand_completed":
        return "hand completed"
    if kind == "dealer_changed":
        dealer = e.get("dealer") or {}
        return f"dealer: {dealer.get('name') or dealer.get('uid')}"
    words = kind.replace("_", " ")
    detail = e.get("reason") or e.get("procedure") or ""
    return f"{words}{rule}" + (f": {str(detail).replace('_', ' ')}" if detail else "")


def steps(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The table after each event of a hand."""
    board: list[str] = []
    shown: dict[str, list[str]] = {}
    last: dict[str, str] = {}
    awarded: list[str] = []
    out = []
    for raw in events:
        e = public(raw)
        kind = e.get("type")
        if kind == "board_dealt":
            board = list(e.get("board") or [*board, *(e.get("cards") or [])])
        elif kind == "misdeal":
            board, last = [], {}
        elif kind in ("hands_tabled", "pot_awarded"):
            for s, value in (e.get("showdown") or {}).items():
                cards = value.get("cards") if isinstance(value, dict) else value
                if cards:
                    shown[str(s)] = list(cards)
        if kind == "pot_awarded":
            awarded.append(describe(e))
        if kind in ("action", "posted") and e.get("seat") is not None:
            last[str(e["seat"])] = describe(e)
        out.append(
            {
                "seq": e.get("seq"),
                "type": kind,
                "text": describe(e),
                "board": list(board),
                "shown": {k: list(v) for k, v in shown.items()},
                "last": dict(last),
                "awarded": list(awarded),
            }
        )
    return out


def results(awards: list[dict[str, Any]]) -> dict[int, str]:
    """Per hand, its `pot_awarded` events in words (`awards` newest first)."""
    out: dict[int, list[str]] = {}
    for event in reversed(awards):
        if isinstance(event.get("hand"), int):
            out.setdefault(event["hand"], []).append(describe(event))
    return {hand: "; ".join(texts) for hand, texts in out.items()}
