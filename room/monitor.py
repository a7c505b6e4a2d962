"""What the monitor pages show, worked out from stored rows (pure: the time is passed in).

A table's tile: online/offline (the retained `status`, its last will, a heartbeat gone
quiet), hand, level, street, pot, players, dealer, and a banner for each thing that needs
the floor. Only public cards ever leave this module: `public` blanks any card-shaped string
outside the fields the MQTT contract allows a card in (docs/mqtt.md, *No hole card on
public topics*), a second guard behind the broker ACL that keeps hole cards from the room.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

CARD = re.compile(r"^[23456789TJQKA][cdhs]$")
#: Keys under which the contract allows a card: the board, shown hands, the cards of
#: board_dealt / four_card_flop / premature_card / burn_drawn, and `showdown` fields.
PUBLIC_CARD_KEYS = frozenset({"board", "shown", "cards", "showdown", "card", "flop", "burn"})
#: A hand with no event for this long (seconds) while the table is online is stalled
#: (the default of [monitor] stalled_after).
STALL_AFTER = 180.0
#: An `online` status older than this many heartbeats means the table went quiet.
STALE_HEARTBEATS = 3
FLOOR_ALERTS = frozenset({"floor_called", "floor_needed"})
PROCEDURE_TITLES = {
    "misdeal": "MISDEAL",
    "four_card_flop": "FOUR-CARD FLOP",
    "premature_card": "PREMATURE CARD",
    "button_short": "BUTTON SHORT",
    "dead_hand": "DEAD HAND",
    "exposed_card": "EXPOSED CARD",
    "floor_call": "FLOOR CALL",
}
READERS = {
    "card_reader": "card reader",
    "chip_reader": "chip reader",
    "badge_reader": "badge reader",
}


@dataclass(frozen=True, slots=True)
class Banner:
    """Something the floor must see: `kind` names it (a CSS class and a test hook)."""

    kind: str
    title: str
    text: str
    severity: str  # info, warning, critical


def public(value: Any, key: str | None = None) -> Any:
    """`value` with every card-shaped string outside a public field replaced by `"??"`."""
    if isinstance(value, dict):
        inherited = key in PUBLIC_CARD_KEYS
        return {k: public(v, key if inherited else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [public(v, key) for v in value]
    if isinstance(value, str) and CARD.match(value) and key not in PUBLIC_CARD_KEYS:
        return "??"
    return value


def ago(seconds: float) -> str:
    """A duration for people: `12 s`, `4 min`, `2 h 05 min`."""
    s = max(0, int(seconds))
    if s < 90:
        return f"{s} s"
    if s < 5400:
        return f"{round(s / 60)} min"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def connection(status: dict[str, Any] | None, now: float) -> tuple[str, float | None]:
    """(`online`, `offline` or `stale`; seconds since that began or was last confirmed)
    from the latest stored status message (`payload`, `received_at`)."""
    if status is None:
        return "unknown", None
    payload, received = status["payload"], float(status["received_at"])
    if payload.get("state") != "online":
        return "offline", now - received
    heartbeat = payload.get("heartbeat")
    if isinstance(heartbeat, int | float) and 0 < heartbeat * STALE_HEARTBEATS < now - received:
        return "stale", now - received
    return "online", now - received


def pot(state: dict[str, Any]) -> int:
    """Chips in the middle: every pot plus what is in front of the seats."""
    pots = sum(int(p.get("amount") or 0) for p in state.get("pots") or [])
    bets = sum(int(s.get("bet") or 0) for s in (state.get("seats") or {}).values())
    return pots + bets


def seated(state: dict[str, Any]) -> int:
    """Players in a seat with chips: a busted player (status `out`, no chips) is not
    counted, nor is an empty seat."""
    return sum(
        1
        for s in (state.get("seats") or {}).values()
        if s.get("player") and s.get("status") not in ("empty", "out")
    )


def staff_name(staff: Any) -> str | None:
    """The name of a staff object (`{"uid", "name"}`), or None."""
    if isinstance(staff, dict):
        return str(staff.get("name") or staff.get("uid") or "") or None
    return None


def banners(
    state: dict[str, Any],
    link: str,
    floor_alerts: list[dict[str, Any]],
    last_event: dict[str, Any] | None,
    now: float,
    misdeal: dict[str, Any] | None = None,
    stall_after: float = STALL_AFTER,
) -> list[Banner]:
    """Everything at a table that needs the floor, most urgent first (`misdeal`: the
    table's latest `misdeal` event, which says why)."""
    out: list[Banner] = []
    if link in ("offline", "stale"):
        out.append(Banner("offline", "TABLE OFFLINE", "no connection to the table", "critical"))
    for proc in state.get("procedures") or []:
        name = str(proc.get("procedure"))
        title = PROCEDURE_TITLES.get(name, name.replace("_", " ").upper())
        rule, text = proc.get("rule"), str(proc.get("instruction") or "")
        if name == "misdeal" and misdeal is not None and misdeal.get("hand") == state.get("hand"):
            rule = misdeal.get("rule") or rule  # the cause's rule (35A-2 ...), not the remedy's
            text = f"{str(misdeal.get('reason', '')).replace('_', ' ')}. {text}"
        title += f" (rule {rule})" if rule else ""
        severity = "critical" if name in ("misdeal", "four_card_flop") else "warning"
        out.append(Banner(name, title, text, severity))
    held = [str(h) for h in state.get("held") or []]
    for device in (h for h in held if h in READERS):
        severity = "warning" if device == "badge_reader" else "critical"
        out.append(Banner("reader", "READER OFFLINE", f"{READERS[device]} board offline", severity))
    reasons = [h.replace("_", " ") for h in held if h != "badge_reader"]
    if reasons:
        out.append(Banner("held", "TABLE HELD", "held: " + ", ".join(reasons), "critical"))
    needs_floor = any(p.get("needs_floor") for p in state.get("procedures") or [])
    if state.get("floor") is None and (floor_alerts or needs_floor):
        text = str(floor_alerts[0]["payload"].get("message")) if floor_alerts else "a procedure"
        out.append(Banner("floor", "FLOOR CALLED", text, "warning"))
    if state.get("hand") is not None and link == "online" and last_event is not None:
        quiet = now - float(last_event["received_at"])
        if quiet > stall_after:
            text = f"hand {state['hand']}: no event for {ago(quiet)}"
            out.append(Banner("stalled", "STALLED HAND", text, "warning"))
    order = {"critical": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda b: order.get(b.severity, 3))


def open_floor_calls(alerts: list[dict[str, Any]], hand: Any) -> list[dict[str, Any]]:
    """A table's floor calls (newest first) not acknowledged, for the hand in play."""
    return [
        a
        for a in alerts
        if a["payload"].get("type") in FLOOR_ALERTS
        and a.get("acknowledged_by") is None
        and a["payload"].get("hand") == hand
    ]


def tile(
    row: dict[str, Any],
    status: dict[str, Any] | None,
    last_event: dict[str, Any] | None,
    alerts: list[dict[str, Any]],
    now: float,
    stall_after: float = STALL_AFTER,
) -> dict[str, Any]:
    """One table's tile (a `tables` row with its state decoded as `state`, and its latest
    `misdeal` event when a misdeal procedure is open). A tile shows
    no card and no player, so the state is not walked by `public` (a third of the time)."""
    state = row.get("state") or {}
    link, since = connection(status, now)
    if link == "unknown" and row.get("status"):
        link = "online" if row["status"] == "online" else "offline"
    level = state.get("level") or {}
    return {
        "table": row["table"],
        "link": link,
        "since": since,
        "hand": state.get("hand"),
        "street": state.get("street"),
        "level": level,
        "pot": pot(state),
        "players": seated(state),
        "dealer": staff_name(state.get("dealer")),
        "floor": staff_name(state.get("floor")),
        "banners": banners(
            state,
            link,
            open_floor_calls(alerts, state.get("hand")),
            last_event,
            now,
            row.get("misdeal"),
            stall_after,
        ),
    }


def sort_tiles(tiles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Offline (and quiet) tables first, then the ones needing the floor, then by id."""

    def key(t: dict[str, Any]) -> tuple[int, int, str]:
        down = 0 if t["link"] in ("offline", "stale") else 1
        return (down, 0 if t["banners"] else 1, str(t["table"]))

    return sorted(tiles, key=key)


def seat_reads(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Per occupied seat: player, stack, bet, status, cards read (face down) and whether a
    card is missing (a seat in the hand reading fewer than two), and its shown cards."""
    state = public(state)
    seats = (state.get("seats") or {}).values()
    # a seat is short once another one has its two cards (the deal went round)
    dealt = state.get("hand") is not None and any(int(s.get("cards") or 0) >= 2 for s in seats)
    out = []
    for number, seat in sorted((state.get("seats") or {}).items(), key=lambda kv: int(kv[0])):
        if seat.get("status") == "empty" or not seat.get("player"):
            continue
        cards = int(seat.get("cards") or 0)
        live = seat.get("status") in ("active", "allin")
        out.append(
            {
                "seat": int(number),
                "player": seat.get("player"),
                "stack": seat.get("stack"),
                "bet": seat.get("bet"),
                "status": seat.get("status"),
                "cards": cards,
                "missing": dealt and live and cards < 2,
                "shown": list(seat.get("shown") or []),
            }
        )
    return out
