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
        '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
        '<link rel="stylesheet" href="/static/monitor.css">'
        '<script src="/static/monitor.js" defer></script></head><body>'
        f'<header><span class="brand">room {e(room)}</span><nav>{nav}</nav>'
        '<span id="live" class="live off" title="live updates">live</span></header>'
        f'<main id="content"{live}>{body}</main></body></html>'
    )


def error_page(status: int, detail: str, path: str) -> str:
    """The body of an error page: what was not found, and where to go from here."""
    head = "Not found" if status == 404 else f"Error {status}"
    return (
        f'<h1 class="error-head" data-status="{status}">{e(head)}</h1>'
        f'<p class="error-detail">{e(detail)}</p><p class="none">{e(path)}</p>'
        '<p><a href="/">the room</a> · <a href="/alerts">alerts</a> · '
        '<a href="/dealers">dealers</a> · <a href="/docs">API docs</a></p>'
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


def alerts_filter(
    tables: list[str],
    kinds: list[str],
    table: str | None,
    kind: str | None,
    *,
    group: bool = True,
    open_only: bool = False,
) -> str:
    """The feed's filter form (a GET form: every filter is in the page's URL, a link to it
    shows the same feed) and the acknowledger's name and token (kept in the browser)."""
    grouped = " checked" if group else ""
    only = " checked" if open_only else ""
    return (
        '<form class="filters" method="get" action="/alerts">'
        f'<label>table <select name="table">{_options(tables, table, "every table")}</select>'
        f'</label><label>kind <select name="kind">{_options(kinds, kind, "every kind")}</select>'
        '</label><input type="hidden" name="group" value="0">'
        f'<label><input type="checkbox" name="group" value="1"{grouped}> group repeats</label>'
        f'<label><input type="checkbox" name="open" value="1"{only}> only not acknowledged'
        '</label><button type="submit">filter</button></form>'
        '<form class="ack-as" onsubmit="return false"><label>acknowledge as '
        '<input id="ack-name" autocomplete="name" placeholder="your name"></label>'
        '<label>token <input id="ack-token" type="password" autocomplete="off"></label>'
        '<span id="ack-error" class="error"></span></form>'
    )


def span(first: Any, last: Any) -> str:
    """The time span of a group of alerts: `12:01:03` or `12:01:03-12:04:10 (3 min)`."""
    if not isinstance(first, int | float) or not isinstance(last, int | float):
        return NONE
    if last - first < 1:
        return clock(last)
    return f"{clock(first)}&ndash;{clock(last)} ({ago(last - first)})"


def group_alerts(alerts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Repeats grouped: the alerts of one table, kind and hand in one row (newest first),
    with their count, time span, newest message and how many are not acknowledged."""
    groups: dict[tuple[str, str, Any], dict[str, Any]] = {}
    for a in alerts:  # newest first
        p = a["payload"]
        key = (str(a["table_id"]), str(p.get("type")), p.get("hand"))
        g = groups.get(key)
        if g is None:
            g = groups[key] = {
                "table": key[0],
                "kind": key[1],
                "hand": key[2],
                "severity": p.get("severity"),
                "message": p.get("message"),
                "messages": set(),
                "last": a["received_at"],
                "first": a["received_at"],
                "ids": [],
                "open": [],
                "acked_by": a.get("acknowledged_by"),
                "acked_at": a.get("acknowledged_at"),
            }
        g["first"] = a["received_at"]
        g["messages"].add(str(p.get("message")))
        g["ids"].append(int(a["id"]))
        if a.get("acknowledged_by") is None:
            g["open"].append(int(a["id"]))
        elif g["acked_by"] is None:
            g["acked_by"], g["acked_at"] = a["acknowledged_by"], a["acknowledged_at"]
    return list(groups.values())


def open_by_kind(alerts: list[dict[str, Any]]) -> str:
    """The alerts not acknowledged, by table and kind, each with its acknowledge-all."""
    counts: dict[tuple[str, str], int] = {}
    for a in alerts:
        if a.get("acknowledged_by") is None:
            key = (str(a["table_id"]), str(a["payload"].get("type")))
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return ""
    rows = "".join(
        f'<tr data-table="{e(t)}" data-kind="{e(k)}"><td>{e(t)}</td><td>{e(k)}</td>'
        f'<td class="count">{n}</td><td><button class="ack-all" data-table="{e(t)}" '
        f'data-kind="{e(k)}">acknowledge all {n}</button></td></tr>'
        for (t, k), n in sorted(counts.items())
    )
    return (
        '<h2>Not acknowledged</h2><table class="open-alerts"><thead><tr><th>table</th>'
        f"<th>kind</th><th>open</th><th></th></tr></thead><tbody>{rows}</tbody></table>"
        "<h2>Feed</h2>"
    )


def alerts_fragment(alerts: list[dict[str, Any]], *, group: bool = True) -> str:
    """Every alert, newest first, repeats grouped (a count and the time span), with its
    acknowledgement (or the button to give one), after the acknowledge-all per table and
    kind."""
    if not alerts:
        return '<p class="empty">no alert</p>'
    rows = []
    if group:
        for g in group_alerts(alerts):
            count = len(g["ids"])
            others = len(g["messages"]) - 1
            message = e(g["message"]) + (
                f' <span class="none">(and {others} other message{"s" if others > 1 else ""})'
                "</span>"
                if others > 0
                else ""
            )
            if not g["open"]:
                ack = f'<span class="acked">{e(g["acked_by"])} at {clock(g["acked_at"])}</span>'
            else:
                label = "acknowledge" + (f" {len(g['open'])}" if len(g["open"]) > 1 else "")
                ids = ",".join(str(i) for i in g["open"])
                ack = f'<button class="ack" data-alerts="{ids}">{label}</button>'
            repeat = f'<span class="repeat">&times;{count}</span>' if count > 1 else ""
            rows.append(
                f'<tr class="alert {e(g["severity"])}" data-alert-id="{g["ids"][0]}" '
                f'data-count="{count}" data-table="{e(g["table"])}" data-kind="{e(g["kind"])}">'
                f"<td>{span(g['first'], g['last'])}</td><td>{e(g['table'])}</td>"
                f"<td>{e(g['hand'])}</td><td>{e(g['severity'])}</td>"
                f"<td>{e(g['kind'])} {repeat}</td><td>{message}</td><td>{ack}</td></tr>"
            )
    else:
        for a in alerts:
            p = a["payload"]
            if a.get("acknowledged_by") is not None:
                ack = (
                    f'<span class="acked">{e(a["acknowledged_by"])} at '
                    f"{clock(a['acknowledged_at'])}</span>"
                )
            else:
                ack = f'<button class="ack" data-alerts="{int(a["id"])}">acknowledge</button>'
            rows.append(
                f'<tr class="alert {e(p.get("severity"))}" data-alert-id="{int(a["id"])}" '
                f'data-count="1" data-table="{e(a["table_id"])}" data-kind="{e(p.get("type"))}">'
                f"<td>{clock(a['received_at'])}</td><td>{e(a['table_id'])}</td>"
                f"<td>{e(p.get('hand'))}</td><td>{e(p.get('severity'))}</td>"
                f"<td>{e(p.get('type'))}</td><td>{e(p.get('message'))}</td><td>{ack}</td></tr>"
            )
    return (
        open_by_kind(alerts) + '<table class="feed"><thead><tr><th>time (UTC)</th><th>table</th>'
        "<th>hand</th><th>severity</th><th>kind</th><th>message</th><th>acknowledged</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
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


def seat_place(k: int, n: int) -> tuple[float, float]:
    """Where seat k (from 0) of n sits round the oval table, in percent of the felt's box:
    the first at the bottom, going round clockwise."""
    import math

    angle = math.pi / 2 - 2 * math.pi * (k + 0.5) / max(n, 1)
    return 50 + 44 * math.cos(angle), 50 + 40 * math.sin(angle)


STREETS = ("preflop", "flop", "turn", "river", "showdown")


def replay_seat(number: str, seat: dict[str, Any], index: int, count: int, button: Any) -> str:
    """One seat at the replay's table: name, stack, bet in front, cards shown, hand name."""
    x, y = seat_place(index, count)
    status = str(seat.get("status") or "")
    dealer = '<span class="dealer-button">D</span>' if str(button) == number else ""
    shown = cards(seat["cards"]) if seat.get("cards") else ""
    name = f'<span class="hand-name">{e(seat["hand_name"])}</span>' if seat.get("hand_name") else ""
    bet = f'<span class="chips">{money(seat["bet"])}</span>' if seat.get("bet") else ""
    return (
        f'<div class="pseat {e(status)}" data-seat="{e(number)}" data-stack="{seat["stack"]}" '
        f'style="left:{x:.1f}%;top:{y:.1f}%">{dealer}'
        f'<b class="pname">{e(seat.get("player") or f"seat {number}")}</b>'
        f'<span class="pstack">{money(seat["stack"])}</span>'
        f'<span class="pstatus">{e(status) if status in ("folded", "allin") else ""}</span>'
        f'<div class="pcards">{shown}</div>{name}<div class="pbet">{bet}</div></div>'
    )


def replay_fragment(table: str, hand: int, frames: list[dict[str, Any]]) -> str:
    """Every step of a hand at a table-shaped view; the page shows one at a time
    (previous / next / slider / a street's first step), the PHH file beside it."""
    if not frames:
        return f'<p class="empty">no event stored for hand {hand}</p>'
    steps = []
    for i, f in enumerate(frames):
        seats = sorted((f.get("seats") or {}).items(), key=lambda kv: int(kv[0]))
        count = max([9, *(int(n) for n, _ in seats)])
        places = "".join(
            replay_seat(n, seat, int(n) - 1, count, f.get("button")) for n, seat in seats
        )
        shown = "".join(f"<li>seat {e(s)} {cards(c)}</li>" for s, c in sorted(f["shown"].items()))
        last = "".join(f"<li>{e(text)}</li>" for _, text in sorted(f["last"].items()))
        awarded = "".join(f"<li>{e(text)}</li>" for text in f["awarded"])
        steps.append(
            f'<section class="step" data-step="{i}" data-street="{e(f.get("street"))}"'
            f"{'' if i == 0 else ' hidden'}>"
            f'<p class="what">#{e(f["seq"])} <b>{e(f["text"])}</b></p>'
            f'<div class="felt"><div class="felt-middle"><div class="board">'
            f"{cards(f['board'])}</div>"
            f'<div class="pot">pot <b data-pot="{int(f.get("pot") or 0)}">'
            f"{money(f.get('pot') or 0)}</b> · {e(f.get('street'))}</div></div>{places}</div>"
            '<div class="step-lists">'
            f"<div><h3>Shown</h3><ul>{shown or '<li>none</li>'}</ul></div>"
            f"<div><h3>Seats' last action</h3><ul>{last or '<li>none</li>'}</ul></div>"
            f"<div><h3>Pots awarded</h3><ul>{awarded or '<li>none</li>'}</ul></div></div>"
            "</section>"
        )
    present = [s for s in STREETS if any(f.get("street") == s for f in frames)]
    jumps = "".join(f'<button class="jump" data-jump="{s}">{s}</button>' for s in present)
    phh = f"/api/hands/{quote(table)}.{hand}.phh"
    return (
        f'<h1>Table <a href="/tables/{quote(table)}">{e(table)}</a>, hand {hand}</h1>'
        f'<div class="replay" data-steps="{len(frames)}"><div class="controls">'
        '<button data-go="-1">◀ previous</button>'
        f'<input type="range" min="0" max="{len(frames) - 1}" value="0" class="slider">'
        '<button data-go="1">next ▶</button> <span class="position"></span>'
        f'<span class="jumps">{jumps}</span>'
        f'<a class="phh" href="{phh}">hand history (PHH)</a></div>'
        f"{''.join(steps)}</div>"
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



def _why_then(notice: dict[str, Any]) -> str:
    if notice.get("rule") == "hand_end":
        return "hand end"
    return f"{notice.get('delay')} s delay"


def readable_fragment(notices: list[dict[str, Any]]) -> str:
    """When each seat's hole cards became readable, and to whom (the table's key releases:
    room/chain.py); the cards themselves never reach the room."""
    if not notices:
        return ""
    rows = "".join(
        f'<tr data-seat="{e(n.get("seat"))}"><td>{e(n.get("seat"))}</td>'
        f"<td>{e(n.get('seq'))}</td><td>{float(n.get('read_t', 0)):.1f} s</td>"
        f"<td>{float(n.get('t', 0)):.1f} s</td><td>{e(n.get('to'))}</td>"
        f"<td>{e(_why_then(n))}</td></tr>"
        for n in notices
    )
    return (
        '<h2>Hole cards readable</h2><table class="readable"><thead><tr><th>seat</th>'
        "<th>hole-card seq</th><th>read at</th><th>readable from</th><th>by</th>"
        f"<th>why then</th></tr></thead><tbody>{rows}</tbody></table>"
    )
