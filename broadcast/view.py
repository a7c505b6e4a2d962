"""What one table looks like on TV, built from the table's MQTT messages (no I/O, no clock).

A `TableView` takes the messages the `tv` identity receives (`state`, `events`,
`holecards`, `status`) in order and makes a *frame*: the JSON object the overlay pages
draw and the feed sends (docs/tv.md, *The feed*). Two kinds:

- a **secret** view takes hole cards too: the on-air overlay, which only ever sees
  messages that went through the secure delay;
- a **public** view (the director's live preview) refuses hole cards outright, and leaves
  out whatever the rules turned face up as well (tabled hands, showdown hands and their
  names): its frames hold no hole card at all, checked once more by `assert_public`.

A hand that is over stays on screen (its board, cards, winners and hand names) until the
next hand starts: the table clears its own `state` as soon as the pot is pushed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from broadcast.equity import Equity, Situation
from controller.rules import RuleError
from controller.rules.handeval import describe, evaluate
from kernel.errors import TableError

CARD_RE = re.compile(r"^[23456789TJQKA][cdhs]$")

#: Plain words for each misdeal reason (docs/dealing-errors.md).
MISDEAL_REASONS = {
    "boxed_cards": "two or more cards were boxed in the deal",
    "first_card_wrong_seat": "the first card went to the wrong seat",
    "card_to_seat_not_entitled": "a card went to a seat not in the hand",
    "seat_dealt_out": "a seat entitled to a hand was dealt out",
    "exposed_card": "a card was exposed in the deal",
    "too_many_cards": "a seat was dealt too many cards",
    "declared": "declared by the dealer",
    "floor_ruling": "ruled by the floor",
}
#: Why the table is held (`state.held`), in plain words.
HELD_REASONS = {
    "card_reader": "card reader fault: play waits until it is back",
    "chip_reader": "chip reader fault: play waits until it is back",
    "fouled_deck": "fouled deck: the hand is void and every bet goes back",
    "four_card_flop": "four cards on the flop: the floor picks the burn card at random",
    "pause": "the table is paused",
}
#: Dealing-error procedures that stop the table (`state.procedures`).
STOP_PROCEDURES = ("misdeal", "four_card_flop", "premature_card")
IN_HAND = ("active", "allin", "folded")
LIVE = ("active", "allin")


class LeakError(TableError):
    """A public frame would carry a card that is not on the board: it is never sent."""


@dataclass(slots=True)
class _Hand:
    """What the view knows of one hand (replaced when the next hand starts)."""

    number: int | None = None
    last_state: dict[str, Any] | None = None  # the latest snapshot of this hand
    hole: dict[int, list[str]] = field(default_factory=dict)  # secret views only
    seen: set[str] = field(default_factory=set)  # every hole or board card seen
    last_action: dict[str, Any] | None = None
    seat_actions: dict[int, dict[str, Any]] = field(default_factory=dict)  # this street
    incident: dict[str, Any] | None = None  # the last dealing-error event
    showdown: bool = False
    tabled: bool = False
    won: dict[int, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)  # from pot_awarded (secret views)
    awarded: bool = False


class TableView:
    """One table as the TV shows it, from its messages in order."""

    def __init__(self, table: str, *, secret: bool) -> None:
        self.table = table
        self.secret = secret
        self.state: dict[str, Any] | None = None
        self.online: bool | None = None
        self.last_seq = 0
        self.hand = _Hand()
        self.rejected = 0  # messages that could not be used (bad shape)

    # ------------------------------------------------------------------ input

    def apply(self, kind: str, payload: dict[str, Any]) -> bool:
        """Take one message (`kind` is the topic's last level); True if anything changed.

        A message of the wrong shape changes nothing and is counted in `rejected`.
        """
        try:
            if kind == "state":
                return self._state(payload)
            if kind == "events":
                return self._event(payload)
            if kind == "holecards":
                return self._holecards(payload) if self.secret else False
            if kind == "status":
                online = payload.get("state") == "online"
                changed = online != self.online
                self.online = online
                return changed
        except (KeyError, TypeError, ValueError, AttributeError):
            self.rejected += 1
        return False

    def _new_hand(self, number: int) -> None:
        if number != self.hand.number:
            self.hand = _Hand(number=number)

    def _state(self, state: dict[str, Any]) -> bool:
        seats = state["seats"]
        if not isinstance(seats, dict) or not all(isinstance(s, dict) for s in seats.values()):
            raise ValueError("state without seats")
        if self.state is not None and int(state.get("seq", 0)) < int(self.state.get("seq", 0)):
            return False  # an older snapshot than the one shown
        hand = state.get("hand")
        if hand is not None:
            self._new_hand(int(hand))
            self.hand.last_state = state
            self.hand.seen.update(str(c) for c in state.get("board", []))
        self.state = state
        return True

    def _event(self, event: dict[str, Any]) -> bool:
        seq = int(event["seq"])
        if seq <= self.last_seq:
            return False  # a copy re-sent after a reconnection (docs/mqtt.md)
        self._take(event)
        self.last_seq = seq  # only once taken: a malformed event blocks nothing after it
        return True

    def _take(self, event: dict[str, Any]) -> None:
        kind = str(event["type"])
        number = event.get("hand")
        if isinstance(number, int) and not isinstance(number, bool):
            self._new_hand(number)
        hand = self.hand
        if kind == "action":
            seat = int(event["seat"])
            action = {"seat": seat, "action": str(event["action"]), "amount": int(event["amount"])}
            hand.last_action = action
            hand.seat_actions[seat] = action
        elif kind == "board_dealt":
            hand.seat_actions = {}
        elif kind == "misdeal":
            hand.incident = event
            hand.hole = {}  # every card is collected and the hand re-dealt (rule 35C)
            hand.seen = set()
            hand.last_action = None
            hand.seat_actions = {}
        elif kind in ("four_card_flop", "premature_card", "fouled_deck"):
            hand.incident = event
        elif kind == "hands_tabled":
            hand.tabled = True
        elif kind == "showdown":
            hand.showdown = True
        elif kind == "pot_awarded":
            hand.awarded = True
            for seat, chips in dict(event.get("shares", {})).items():
                hand.won[int(seat)] = hand.won.get(int(seat), 0) + int(chips)
            if self.secret:
                for seat, shown in dict(event.get("showdown") or {}).items():
                    if isinstance(shown, dict) and isinstance(shown.get("rank"), str):
                        hand.names[int(seat)] = shown["rank"]

    def _holecards(self, message: dict[str, Any]) -> bool:
        number = int(message["hand"])
        seat = int(message["seat"])
        cards = [str(c) for c in message["cards"]]
        if not all(CARD_RE.match(c) for c in cards):
            raise ValueError("not a card")
        if self.hand.number is not None and number < self.hand.number:
            return False  # a late copy from an earlier hand
        self._new_hand(number)
        self.hand.hole[seat] = cards
        self.hand.seen.update(cards)
        return True

    # ------------------------------------------------------------------ what is shown

    def shown_state(self) -> tuple[dict[str, Any], bool]:
        """The snapshot to draw, and whether it is a hand that is over (shown until the
        next hand starts)."""
        state = self.state or {}
        if state.get("hand") is None and self.hand.last_state is not None:
            return self.hand.last_state, True
        return state, False

    def _seats(self, shown: dict[str, Any]) -> dict[int, dict[str, Any]]:
        """The seats worth showing: during a hand those dealt in, else every player."""
        seated = {int(n): s for n, s in shown.get("seats", {}).items() if s.get("player")}
        if shown.get("hand") is None:
            return seated
        return {n: s for n, s in seated.items() if s.get("status") in IN_HAND}

    def cards_of(self, seat: int) -> list[str] | None:
        """A seat's hole cards as known (secret views only): as read, else as tabled."""
        shown, _over = self.shown_state()
        if not self.secret or shown.get("hand") is None:
            return None
        if seat in self.hand.hole:
            return list(self.hand.hole[seat])
        tabled = shown.get("seats", {}).get(str(seat), {}).get("shown")
        if isinstance(tabled, list) and tabled and all(CARD_RE.match(str(c)) for c in tabled):
            return [str(c) for c in tabled]
        return None

    def stopped(self) -> list[str]:
        """Why the table is stopped now (dealing errors, reader faults), for the banner."""
        if self.state is None:
            return []
        why = [str(p.get("procedure")) for p in self.state.get("procedures", [])]
        why = [p for p in why if p in STOP_PROCEDURES]
        why += [h for h in self.state.get("held", []) if h in HELD_REASONS and h not in why]
        return why

    def situation(self, *, true_outs: bool) -> Situation | None:
        """What the equity of this moment depends on, or None when there is none to show:
        fewer than two live hands, a live hand not fully known, the hand decided, or the
        table stopped (dealing error, reader fault)."""
        shown, over = self.shown_state()
        if not self.secret or over or shown.get("hand") is None:
            return None
        if self.hand.awarded or self.stopped():
            return None
        live = [n for n, s in self._seats(shown).items() if s.get("status") in LIVE]
        hands = {n: self.cards_of(n) for n in live}
        if len(live) < 2 or any(c is None or len(c) != 2 for c in hands.values()):
            return None
        board = [str(c) for c in shown.get("board", [])]
        if len(board) > 5:
            return None
        dead: Iterable[str] = self.hand.seen if true_outs else ()
        try:
            return Situation.of({n: c for n, c in hands.items() if c is not None}, board, dead)
        except TableError:
            return None

    def hand_name(self, seat: int) -> str | None:
        """The seat's hand in words at showdown ("two pair, aces and threes")."""
        if not self.secret:
            return None
        if seat in self.hand.names:
            return self.hand.names[seat]
        if not (self.hand.showdown or self.hand.tabled):
            return None
        shown, _over = self.shown_state()
        board = [str(c) for c in shown.get("board", [])]
        cards = self.cards_of(seat) or []
        if len(board) != 5 or len(cards) != 2:
            return None
        try:
            return describe(evaluate([*cards, *board]))
        except RuleError:
            return None

    # ------------------------------------------------------------------ the frame

    def frame(self, equity: Equity | None = None, *, delay: float | None = None) -> dict[str, Any]:
        """The frame of this moment (docs/tv.md); `equity` for the secret view's hands."""
        shown, over = self.shown_state()
        current = self.state or {}
        hand = self.hand
        in_hand = shown.get("hand") is not None
        stacks = {int(n): s.get("stack") for n, s in current.get("seats", {}).items()}
        button = shown.get("button")
        to_act = shown.get("to_act") if in_hand and not over and not hand.awarded else None
        shares = equity.rounded() if equity is not None else {}
        seats = self._seats(shown)
        seats_out: list[dict[str, Any]] = []
        for seat, s in sorted(seats.items()):
            status = str(s.get("status", "waiting"))
            stack = stacks.get(seat, s.get("stack")) if over else s.get("stack")
            seats_out.append(
                {
                    "seat": seat,
                    "player": s.get("player"),
                    "stack": int(stack or 0),
                    "bet": 0 if over else int(s.get("bet", 0)),
                    "status": status,
                    "dealer": seat == button,
                    "to_act": seat == to_act,
                    "card_count": int(s.get("cards", 0)) if in_hand and status in LIVE else 0,
                    "cards": self.cards_of(seat) if in_hand else None,
                    "action": hand.seat_actions.get(seat) if in_hand else None,
                    "equity": shares.get(seat),
                    "equity_error": (
                        round(equity.error[seat], 2)
                        if equity is not None and seat in shares
                        else None
                    ),
                    "outs": list(equity.outs[seat])
                    if equity is not None and seat in equity.outs
                    else None,
                    "hand_name": self.hand_name(seat) if in_hand and status in LIVE else None,
                    "won": hand.won.get(seat) if in_hand else None,
                }
            )
        raw_pots = shown.get("pots", []) if in_hand and not over else []
        amounts = [int(p.get("amount", 0)) for p in raw_pots]
        pots = [
            {"amount": a, "eligible": [int(e) for e in p.get("eligible", [])]}
            for a, p in zip(amounts, raw_pots, strict=True)
        ]
        bets = sum(s["bet"] for s in seats_out)
        total = sum(amounts) + bets if not over else sum(hand.won.values())
        last = dict(hand.last_action) if hand.last_action and in_hand else None
        if last is not None:
            last["player"] = seats.get(last["seat"], {}).get("player")
        frame: dict[str, Any] = {
            "type": "frame",
            "table": self.table,
            "view": "overlay" if self.secret else "preview",
            "online": self.online,
            "hand": shown.get("hand"),
            "hand_over": over or hand.awarded,
            "street": shown.get("street"),
            "button": button,
            "to_act": to_act,
            "level": shown.get("level") or current.get("level"),
            "board": [str(c) for c in shown.get("board", [])] if in_hand else [],
            "pots": pots,
            "pot_total": total,
            "last_action": last,
            "showdown": hand.showdown or hand.tabled,
            "seats": seats_out,
            "equity": (
                {
                    "method": equity.method,
                    "boards": equity.boards,
                    "max_error": round(max(equity.error.values(), default=0.0), 2),
                }
                if equity is not None
                else None
            ),
            "banner": self.banner(),
            "delay": delay,
            "seq": self.last_seq,
        }
        if not self.secret:
            assert_public(frame)
        return frame

    def banner(self) -> dict[str, Any] | None:
        """The banner telling why the table stopped (dealing error or reader fault)."""
        stopped = self.stopped()
        if not stopped:
            return None
        kind = stopped[0]
        incident = self.hand.incident if self.hand.incident is not None else {}
        rule: object = None
        for p in (self.state or {}).get("procedures", []):
            if p.get("procedure") == kind:
                rule = p.get("rule")
        if kind == "misdeal":
            reason = MISDEAL_REASONS.get(str(incident.get("reason")), "misdeal declared")
            text = f"{reason}: every card is collected and the hand is re-dealt"
            return _banner(kind, "MISDEAL", text, incident.get("rule", rule))
        if kind == "four_card_flop":
            return _banner(kind, "FOUR-CARD FLOP", HELD_REASONS[kind], "39")
        if kind == "premature_card":
            street = str(incident.get("street") or "board")
            text = f"{street} card dealt before the betting was complete: it will be re-dealt"
            return _banner(kind, "PREMATURE CARD", text, incident.get("rule", rule))
        if kind == "fouled_deck":
            return _banner(kind, "FOULED DECK", HELD_REASONS[kind], "35E")
        if kind in ("card_reader", "chip_reader"):
            return _banner(kind, "TABLE HOLD", HELD_REASONS[kind], None)
        return _banner(kind, "TABLE PAUSED", HELD_REASONS.get(kind, kind), None)


def _banner(kind: str, title: str, text: str, rule: object) -> dict[str, Any]:
    return {"kind": kind, "title": title, "text": text, "rule": str(rule) if rule else None}


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def assert_public(frame: dict[str, Any]) -> None:
    """Refuse a preview frame holding a card anywhere but on the board (LeakError).

    Every string of the frame is looked at, keys included. No text the table publishes
    can be a card name (the table refuses such names), so a card-shaped string outside
    `board` can only be a card that must not be there.
    """
    for text in _strings({k: v for k, v in frame.items() if k != "board"}):
        if CARD_RE.match(text):
            raise LeakError(f"a public frame of table {frame.get('table')} holds a card")
