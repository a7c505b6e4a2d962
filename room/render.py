"""The monitor's HTML, rendered on the server: page shells and the fragments the pages
reload when the room's live stream says something changed (room/static/monitor.js)."""

from __future__ import annotations

import datetime
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from room.monitor import Banner, ago

SUITS = {"s": ("♠", "black"), "h": ("♥", "red"), "d": ("♦", "red"), "c": ("♣", "black")}
NONE = "-"
NAV = (("/", "Room"), ("/alerts", "Alerts"), ("/dealers", "Dealers"), ("/tournament", "Tournament"))


def e(value: Any) -> str:
    """Escaped text (NONE for nothing)."""
    return NONE if value is None or value == "" else escape(str(value))


def money(value: Any) -> str:
    return f"{int(value):,}" if isinstance(value, int | float) else NONE


def card(code: str) -> str:
    """A face-up card (only ever called with public cards)."""
    rank, suit = code[:-1], code[-1:]
    symbol, colour = SUITS.get(suit, ("?", "black"))
    rank = "10" if rank == "T" else rank
    return f'<span class="card {colour}" data-card="{e(code)}">{e(rank)}{symbol}</span>'


def cards(codes: list[str]) -> str:
    return "".join(card(c) for c in codes) or '<span class="none">no card</span>'


def clock(t: Any) -> str:
    """A unix time as UTC HH:MM:SS."""
    if not isinstance(t, int | float):
        return NONE
    return datetime.datetime.fromtimestamp(t, datetime.UTC).strftime("%H:%M:%S")


def layout(title: str, room: str, body: str, *, active: str, fragment: str | None) -> str:
    """A whole page: the navigation and `body` (reloaded from `fragment` when live)."""
    nav = "".join(
        f'<a href="{href}"{" class=active" if href == active else ""}>{label}</a>'
        for href, label in NAV
    )
    live = f' data-fragment="{escape(fragment)}"' if fragment else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)} · room {e(room)}</title>"
        '<link rel="stylesheet" href="/static/monitor.css">'
        '<script src="/static/monitor.js" defer></script></head><body>'
        f'<header><span class="brand">room {e(room)}</span><nav>{nav}</nav>'
        '<span id="live" class="live off" title="live updates">live</span></header>'
        f'<main id="content"{live}>{body}</main></body></html>'
    )


def banner(b: Banner) -> str:
    return (
        f'<div class="banner {b.severity}" data-kind="{e(b.kind)}">'
        f'<b class="banner-title">{e(b.title)}</b> <span class="banner-text">{e(b.text)}</span>'
        "</div>"
    )


def link_text(t: dict[str, Any]) -> str:
    since = t["since"]
    if t["link"] == "online":
        return "online" + (f" · seen {ago(since)} ago" if since is not None else "")
    if t["link"] in ("offline", "stale"):
        why = "offline" if t["link"] == "offline" else "no heartbeat"
        return f"{why} for {ago(since)}" if since is not None else why
    return "status unknown"


def level_text(level: dict[str, Any]) -> str:
    if not level or not (level.get("small_blind") or level.get("big_blind")):
        return NONE
    text = f"{money(level.get('small_blind'))}/{money(level.get('big_blind'))}"
    return text + (f" ante {money(level['ante'])}" if level.get("ante") else "")


def tile(t: dict[str, Any]) -> str:
    """One table at a glance."""
    table = str(t["table"])
    facts = (
        ("hand", e(t["hand"])),
        ("blinds", level_text(t["level"])),
        ("street", e(t["street"])),
        ("pot", money(t["pot"])),
        ("players", str(t["players"])),
        ("dealer", e(t["dealer"])),
    )
    rows = "".join(f"<dt>{k}</dt><dd data-field={k}>{v}</dd>" for k, v in facts)
    return (
        f'<a class="tile {t["link"]}" href="/tables/{quote(table)}" data-table="{e(table)}" '
        f'data-link="{t["link"]}"><div class="tile-head"><b>{e(table)}</b>'
        f'<span class="link">{link_text(t)}</span></div>'
        f"{''.join(banner(b) for b in t['banners'])}<dl>{rows}</dl></a>"
    )


def room_fragment(tiles: list[dict[str, Any]]) -> str:
    if not tiles:
        return '<p class="empty">no table seen yet</p>'
    calls = sum(1 for t in tiles if t["banners"])
    head = f'<p class="summary">{len(tiles)} tables · {calls} need the floor</p>'
    return head + '<div class="tiles">' + "".join(tile(t) for t in tiles) + "</div>"


def _options(values: list[str], chosen: str | None, everything: str) -> str:
    out = [f'<option value="">{everything}</option>']
    for v in values:
        selected = " selected" if v == chosen else ""
        out.append(f'<option value="{e(v)}"{selected}>{e(v)}</option>')
    return "".join(out)


def alerts_filter(tables: list[str], kinds: list[str], table: str | None, kind: str | None) -> str:
    """The feed's filter form and the acknowledger's name and token (kept in the browser)."""
    return (
        '<form class="filters" method="get" action="/alerts">'
        f'<label>table <select name="table">{_options(tables, table, "every table")}</select>'
        f'</label><label>kind <select name="kind">{_options(kinds, kind, "every kind")}</select>'
        '</label><button type="submit">filter</button></form>'
        '<form class="ack-as" onsubmit="return false"><label>acknowledge as '
        '<input id="ack-name" autocomplete="name" placeholder="your name"></label>'
        '<label>token <input id="ack-token" type="password" autocomplete="off"></label>'
        '<span id="ack-error" class="error"></span></form>'
    )


def alerts_fragment(alerts: list[dict[str, Any]]) -> str:
    """Every alert, newest first, with its acknowledgement (or the button to give one)."""
    if not alerts:
        return '<p class="empty">no alert</p>'
    rows = []
    for a in alerts:
        p = a["payload"]
        if a.get("acknowledged_by") is not None:
            ack = (
                f'<span class="acked">{e(a["acknowledged_by"])} at '
                f"{clock(a['acknowledged_at'])}</span>"
            )
        else:
            ack = f'<button class="ack" data-alert="{int(a["id"])}">acknowledge</button>'
        rows.append(
            f'<tr class="alert {e(p.get("severity"))}" data-alert-id="{int(a["id"])}" '
            f'data-table="{e(a["table_id"])}" data-kind="{e(p.get("type"))}">'
            f"<td>{clock(a['received_at'])}</td><td>{e(a['table_id'])}</td>"
            f"<td>{e(p.get('hand'))}</td><td>{e(p.get('severity'))}</td>"
            f"<td>{e(p.get('type'))}</td><td>{e(p.get('message'))}</td><td>{ack}</td></tr>"
        )
    return (
        '<table class="feed"><thead><tr><th>time (UTC)</th><th>table</th><th>hand</th>'
        "<th>severity</th><th>kind</th><th>message</th><th>acknowledged</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def seat_row(s: dict[str, Any]) -> str:
    read = "".join(
        '<span class="read yes"></span>' if i < s["cards"] else '<span class="read no"></span>'
        for i in range(2)
    )
    return (
        f'<tr class="seat{" missing" if s["missing"] else ""}" data-seat="{s["seat"]}" '
        f'data-cards="{s["cards"]}"><td>{s["seat"]}</td><td>{e(s["player"])}</td>'
        f"<td>{money(s['stack'])}</td><td>{money(s['bet'])}</td><td>{e(s['status'])}</td>"
        f'<td class="reads">{read} {s["cards"]} read</td>'
        f"<td>{cards(s['shown']) if s['shown'] else ''}</td></tr>"
    )


def hands_table(table: str, hands: list[dict[str, Any]], results: dict[int, str]) -> str:
    if not hands:
        return '<p class="empty">no hand stored yet</p>'
    rows = []
    for h in hands:
        errors = int(h.get("misdeals") or 0) + int(h.get("four_card_flops") or 0)
        errors += int(h.get("premature_cards") or 0)
        done = "completed" if h.get("completed_t") is not None else "in play"
        rows.append(
            f'<tr data-hand="{int(h["hand"])}"><td><a href="/tables/{quote(table)}/hands/'
            f'{int(h["hand"])}">{int(h["hand"])}</a></td><td>{done}</td>'
            f"<td>{e(h.get('dealer_name'))}</td><td>{int(h.get('players') or 0)}</td>"
            f"<td>{money(h.get('pot')) if h.get('completed_t') is not None else NONE}</td>"
            f"<td>{errors}</td>"
            f"<td>{e(results.get(int(h['hand'])))}</td></tr>"
        )
    return (
        '<table class="hands"><thead><tr><th>hand</th><th></th><th>dealer</th>'
        "<th>players</th><th>pot</th><th>dealing errors</th><th>result</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def table_fragment(
    t: dict[str, Any],
    state: dict[str, Any],
    seats: list[dict[str, Any]],
    hands: list[dict[str, Any]],
    results: dict[int, str],
) -> str:
    """The hand in progress (public cards only), each seat's cards read, the last hands."""
    table = str(t["table"])
    pots = " · ".join(
        f"{'main' if i == 0 else f'side {i}'} {money(p.get('amount'))}"
        for i, p in enumerate(state.get("pots") or [])
    )
    head = (
        f'<h1>Table {e(table)} <span class="link {t["link"]}">{link_text(t)}</span></h1>'
        f"{''.join(banner(b) for b in t['banners'])}"
        f'<p class="facts">hand <b data-field="hand">{e(t["hand"])}</b> · street '
        f'<b data-field="street">{e(t["street"])}</b> · blinds <b>{level_text(t["level"])}</b>'
        f' · pot <b data-field="pot">{money(t["pot"])}</b> · dealer <b>{e(t["dealer"])}</b>'
        f" · floor <b>{e(t['floor'])}</b></p>"
        f'<div class="board" id="board">{cards(list(state.get("board") or []))}</div>'
        f'<p class="pots">{pots}</p>'
    )
    seat_rows = "".join(seat_row(s) for s in seats) or '<tr><td colspan="7">no player</td></tr>'
    return (
        head + '<h2>Seats</h2><table class="seats"><thead><tr><th>seat</th><th>player</th>'
        "<th>stack</th><th>bet</th><th>status</th><th>cards read</th><th>shown</th></tr>"
        f"</thead><tbody>{seat_rows}</tbody></table>"
        f"<h2>Last hands</h2>{hands_table(table, hands, results)}"
        f'<p><a href="/alerts?{urlencode({"table": table})}">this table\'s alerts</a></p>'
    )


def replay_fragment(table: str, hand: int, frames: list[dict[str, Any]]) -> str:
    """Every step of a hand; the page shows one at a time (prev / next / slider)."""
    if not frames:
        return f'<p class="empty">no event stored for hand {hand}</p>'
    steps = []
    for i, f in enumerate(frames):
        shown = "".join(f"<li>seat {e(s)} {cards(c)}</li>" for s, c in sorted(f["shown"].items()))
        last = "".join(f"<li>{e(text)}</li>" for _, text in sorted(f["last"].items()))
        awarded = "".join(f"<li>{e(text)}</li>" for text in f["awarded"])
        steps.append(
            f'<section class="step" data-step="{i}"{"" if i == 0 else " hidden"}>'
            f'<p class="what">#{e(f["seq"])} <b>{e(f["text"])}</b></p>'
            f'<div class="board">{cards(f["board"])}</div>'
            f"<h3>Shown</h3><ul>{shown or '<li>none</li>'}</ul>"
            f"<h3>Seats' last action</h3><ul>{last or '<li>none</li>'}</ul>"
            f"<h3>Pots awarded</h3><ul>{awarded or '<li>none</li>'}</ul></section>"
        )
    return (
        f'<h1>Table <a href="/tables/{quote(table)}">{e(table)}</a>, hand {hand}</h1>'
        f'<div class="replay" data-steps="{len(frames)}"><div class="controls">'
        '<button data-go="-1">◀ previous</button>'
        f'<input type="range" min="0" max="{len(frames) - 1}" value="0" class="slider">'
        '<button data-go="1">next ▶</button> <span class="position"></span></div>'
        f"{''.join(steps)}</div>"
        f'<p><a href="/api/hands/{quote(table)}.{hand}.phh">hand history (PHH)</a></p>'
    )


def dealers_fragment(
    shift: str,
    chart: str,
    summary: list[dict[str, Any]],
    assignments: list[tuple[str, str | None, str]],
) -> str:
    """The shift's chart, each dealer's rates, and who deals where now."""
    rows = (
        "".join(
            f'<tr data-dealer="{e(d["dealer"])}"><td>{e(d["dealer"])}</td><td>{d["hands"]}</td>'
            f"<td>{e(d['hands_per_hour'])}</td><td>{d['errors']}</td>"
            f"<td>{d['errors_per_100']}</td></tr>"
            for d in summary
        )
        or '<tr><td colspan="5">no completed hand this shift</td></tr>'
    )
    assigned = (
        "".join(
            f'<tr data-table="{e(table)}"><td><a href="/tables/{quote(table)}">{e(table)}</a></td>'
            f"<td>{e(dealer)}</td><td>{e(link)}</td></tr>"
            for table, dealer, link in assignments
        )
        or '<tr><td colspan="3">no table</td></tr>'
    )
    return (
        f"<h1>Dealers · shift {e(shift)}</h1>{chart}"
        '<h2>This shift</h2><table class="dealers"><thead><tr><th>dealer</th><th>hands</th>'
        "<th>hands per hour</th><th>dealing errors</th><th>errors per 100 hands</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>"
        '<h2>Now dealing</h2><table class="assignments"><thead><tr><th>table</th>'
        f"<th>dealer</th><th>table status</th></tr></thead><tbody>{assigned}</tbody></table>"
    )
