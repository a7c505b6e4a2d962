"""A stored hand as steps for the monitor's replay, and events in words (public cards only).

Each step is the table after one event: every seat (name, stack, bet in front, status,
the cards the rules turned face up and their hand's name), the pot, the board, the street,
each seat's last action, the pots awarded so far, and the event described for people.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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


@dataclass
class _Table:
    """The table as a hand's events rebuild it, step by step."""

    seats: dict[str, dict[str, Any]]
    opening: dict[str, int]  # each seat's stack before the hand (a misdeal goes back to it)
    board: list[str] = field(default_factory=list)
    shown: dict[str, list[str]] = field(default_factory=dict)
    last: dict[str, str] = field(default_factory=dict)
    awarded: list[str] = field(default_factory=list)
    pot: int = 0
    street: str = "preflop"
    button: Any = None

    def apply(self, e: dict[str, Any]) -> None:
        """Take one (public) event."""
        handler = _HANDLERS.get(str(e.get("type")))
        if handler is not None:
            handler(self, e)

    def hand_started(self, e: dict[str, Any]) -> None:
        self.button = e.get("button")
        players = e.get("players")
        names: dict[str, Any] = players if isinstance(players, dict) else {}
        for n in e.get("seats") or []:
            seat = _seat(self.seats, n)
            seat["status"] = "active"
            if isinstance(names.get(str(n)), str):  # the hand's own record of who sat
                seat["player"] = names[str(n)]

    def posted(self, e: dict[str, Any]) -> None:
        if e.get("seat") is None:
            return
        seat = _seat(self.seats, e["seat"])
        amount = int(e.get("amount") or e.get("ante") or 0)
        seat["stack"] -= amount
        if e.get("blind"):
            seat["bet"] += amount
        else:
            self.pot += amount
        self.last[str(e["seat"])] = describe(e)

    def action(self, e: dict[str, Any]) -> None:
        if e.get("seat") is None:
            return
        seat = _seat(self.seats, e["seat"])
        action = e.get("action")
        if action == "fold":
            seat["status"] = "folded"
        elif action != "check":
            total = int(e.get("amount") or 0)
            seat["stack"] -= max(0, total - int(seat["bet"]))
            seat["bet"] = max(total, int(seat["bet"]))
            if action == "allin" or seat["stack"] <= 0:
                seat["status"] = "allin"
        self.last[str(e["seat"])] = describe(e)

    def board_dealt(self, e: dict[str, Any]) -> None:
        self.pot += _collect(self.seats)
        self.street = str(e.get("street") or self.street)
        self.board = list(e.get("board") or [*self.board, *(e.get("cards") or [])])

    def uncalled_bet_returned(self, e: dict[str, Any]) -> None:
        if e.get("seat") is None:
            return
        seat = _seat(self.seats, e["seat"])
        back = int(e.get("amount") or 0)
        taken = min(back, int(seat["bet"]))
        seat["bet"] -= taken
        self.pot -= back - taken
        seat["stack"] += back

    def misdeal(self, _e: dict[str, Any]) -> None:
        self.board, self.last, self.pot, self.street = [], {}, 0, "preflop"
        for key, seat in self.seats.items():
            seat["bet"] = 0
            seat["stack"] = self.opening.get(key, seat["stack"])

    def showdown(self, e: dict[str, Any]) -> None:
        """`hands_tabled`, `showdown` and `pot_awarded`: the cards shown (and the bets in)."""
        if e.get("type") != "hands_tabled":
            self.pot += _collect(self.seats)
            if e.get("showdown") or e.get("type") == "showdown":
                self.street = "showdown"
        for s, value in (e.get("showdown") or {}).items():
            cards = value.get("cards") if isinstance(value, dict) else value
            if cards:
                self.shown[str(s)] = list(cards)
                _seat(self.seats, s)["cards"] = list(cards)
            if isinstance(value, dict) and value.get("rank"):
                _seat(self.seats, s)["hand_name"] = str(value["rank"])

    def pot_awarded(self, e: dict[str, Any]) -> None:
        self.showdown(e)
        self.awarded.append(describe(e))
        for s, share in (e.get("shares") or {}).items():
            _seat(self.seats, s)["stack"] += int(share)
        self.pot = max(0, self.pot - int(e.get("amount") or 0))

    def hand_completed(self, e: dict[str, Any]) -> None:
        for s, stack in (e.get("stacks") or {}).items():
            _seat(self.seats, s)["stack"] = int(stack)
        _collect(self.seats)
        self.pot = 0

    def step(self, e: dict[str, Any]) -> dict[str, Any]:
        """The table after the event `e`, as the replay page shows it."""
        return {
            "seq": e.get("seq"),
            "type": e.get("type"),
            "text": describe(e),
            "street": self.street,
            "button": self.button,
            "pot": self.pot,
            "board": list(self.board),
            "shown": {k: list(v) for k, v in self.shown.items()},
            "last": dict(self.last),
            "awarded": list(self.awarded),
            "seats": {k: dict(v, cards=list(v["cards"])) for k, v in self.seats.items()},
        }


_HANDLERS: dict[str, Callable[[_Table, dict[str, Any]], None]] = {
    "hand_started": _Table.hand_started,
    "posted": _Table.posted,
    "action": _Table.action,
    "board_dealt": _Table.board_dealt,
    "uncalled_bet_returned": _Table.uncalled_bet_returned,
    "misdeal": _Table.misdeal,
    "hands_tabled": _Table.showdown,
    "showdown": _Table.showdown,
    "pot_awarded": _Table.pot_awarded,
    "hand_completed": _Table.hand_completed,
}


def steps(
    events: list[dict[str, Any]], before: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The table after each event of a hand (`before`: the table's state before the hand,
    for the players' names and stacks)."""
    seats = _seats_before(before)
    table = _Table(seats, {k: int(v["stack"]) for k, v in seats.items()})
    out = []
    for raw in events:
        e = public(raw)
        table.apply(e)
        out.append(table.step(e))
    return out


def results(awards: list[dict[str, Any]]) -> dict[int, str]:
    """Per hand, its `pot_awarded` events in words (`awards` newest first)."""
    out: dict[int, list[str]] = {}
    for event in reversed(awards):
        if isinstance(event.get("hand"), int):
            out.setdefault(event["hand"], []).append(describe(event))
    return {hand: "; ".join(texts) for hand, texts in out.items()}
