"""A stored hand as steps for the monitor's replay, and events in words (public cards only).

Each step is the table after one event: every seat (name, stack, bet in front, status,
the cards the rules turned face up and their hand's name), the pot, the board, the street,
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


def _seats_before(state: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The seats as the hand found them (the table's last state before it)."""
    seats: dict[str, dict[str, Any]] = {}
    for number, seat in ((state or {}).get("seats") or {}).items():
        if isinstance(seat, dict) and seat.get("player"):
            seats[str(number)] = {
                "player": str(seat["player"]),
                "stack": int(seat.get("stack") or 0),
                "bet": 0,
                "status": "out" if not seat.get("stack") else "waiting",
                "cards": [],
                "hand_name": None,
            }
    return seats


def _seat(seats: dict[str, dict[str, Any]], number: Any) -> dict[str, Any]:
    key = str(number)
    if key not in seats:
        seats[key] = {
            "player": None,
            "stack": 0,
            "bet": 0,
            "status": "active",
            "cards": [],
            "hand_name": None,
        }
    return seats[key]


def _collect(seats: dict[str, dict[str, Any]]) -> int:
    """The bets in front of the seats gathered into the pot: how much."""
    total = 0
    for seat in seats.values():
        total += int(seat["bet"])
        seat["bet"] = 0
    return total


def steps(
    events: list[dict[str, Any]], before: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The table after each event of a hand (`before`: the table's state before the hand,
    for the players' names and stacks)."""
    board: list[str] = []
    shown: dict[str, list[str]] = {}
    last: dict[str, str] = {}
    awarded: list[str] = []
    seats = _seats_before(before)
    opening = {k: int(v["stack"]) for k, v in seats.items()}
    pot = 0
    street = "preflop"
    button: Any = None
    out = []
    for raw in events:
        e = public(raw)
        kind = e.get("type")
        if kind == "hand_started":
            button = e.get("button")
            names = e.get("players") if isinstance(e.get("players"), dict) else {}
            for n in e.get("seats") or []:
                seat = _seat(seats, n)
                seat["status"] = "active"
                if isinstance(names.get(str(n)), str):  # the hand's own record of who sat
                    seat["player"] = names[str(n)]
        elif kind == "posted" and e.get("seat") is not None:
            seat = _seat(seats, e["seat"])
            amount = int(e.get("amount") or e.get("ante") or 0)
            seat["stack"] -= amount
            if e.get("blind"):
                seat["bet"] += amount
            else:
                pot += amount
        elif kind == "action" and e.get("seat") is not None:
            seat = _seat(seats, e["seat"])
            action = e.get("action")
            if action == "fold":
                seat["status"] = "folded"
            elif action != "check":
                total = int(e.get("amount") or 0)
                seat["stack"] -= max(0, total - int(seat["bet"]))
                seat["bet"] = max(total, int(seat["bet"]))
                if action == "allin" or seat["stack"] <= 0:
                    seat["status"] = "allin"
        elif kind == "board_dealt":
            pot += _collect(seats)
            street = str(e.get("street") or street)
            board = list(e.get("board") or [*board, *(e.get("cards") or [])])
        elif kind == "uncalled_bet_returned" and e.get("seat") is not None:
            seat = _seat(seats, e["seat"])
            back = int(e.get("amount") or 0)
            taken = min(back, int(seat["bet"]))
            seat["bet"] -= taken
            pot -= back - taken
            seat["stack"] += back
        elif kind == "misdeal":
            board, last, pot, street = [], {}, 0, "preflop"
            for key, seat in seats.items():
                seat["bet"] = 0
                seat["stack"] = opening.get(key, seat["stack"])
        elif kind in ("hands_tabled", "pot_awarded", "showdown"):
            if kind != "hands_tabled":
                pot += _collect(seats)
                street = "showdown" if e.get("showdown") or kind == "showdown" else street
            for s, value in (e.get("showdown") or {}).items():
                cards = value.get("cards") if isinstance(value, dict) else value
                if cards:
                    shown[str(s)] = list(cards)
                    _seat(seats, s)["cards"] = list(cards)
                if isinstance(value, dict) and value.get("rank"):
                    _seat(seats, s)["hand_name"] = str(value["rank"])
        if kind == "pot_awarded":
            awarded.append(describe(e))
            for s, share in (e.get("shares") or {}).items():
                _seat(seats, s)["stack"] += int(share)
            pot = max(0, pot - int(e.get("amount") or 0))
        if kind == "hand_completed":
            for s, stack in (e.get("stacks") or {}).items():
                _seat(seats, s)["stack"] = int(stack)
            _collect(seats)
            pot = 0
        if kind in ("action", "posted") and e.get("seat") is not None:
            last[str(e["seat"])] = describe(e)
        out.append(
            {
                "seq": e.get("seq"),
                "type": kind,
                "text": describe(e),
                "street": street,
                "button": button,
                "pot": pot,
                "board": list(board),
                "shown": {k: list(v) for k, v in shown.items()},
                "last": dict(last),
                "awarded": list(awarded),
                "seats": {k: dict(v, cards=list(v["cards"])) for k, v in seats.items()},
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
