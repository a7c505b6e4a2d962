"""The tournament's pages: shells the browser fills from the JSON API, live on the
tournament's event stream (room/tournament/static/tournament.js). The clock and the
leaderboard are made for the room's screens; the floor page for the floor's tablet."""

from __future__ import annotations

from html import escape

#: The monitor's navigation, and the tournament's pages.
NAV = (
    ("/", "Room"),
    ("/alerts", "Alerts"),
    ("/dealers", "Dealers"),
    ("/tournament/floor", "Tournament"),
    ("/tournament/clock", "Clock"),
    ("/tournament/leaderboard", "Chip counts"),
)

BODIES = {
    "clock": """
<div id="clock" class="clock">
  <div class="clock-event" data-field="name"></div>
  <div class="clock-level" data-field="level"></div>
  <div class="clock-time" data-field="time">--:--</div>
  <div class="clock-blinds" data-field="blinds"></div>
  <div class="clock-banner" data-field="banner" hidden></div>
  <div class="clock-next" data-field="next"></div>
  <dl class="clock-facts">
    <div><dt>players</dt><dd data-field="players"></dd></div>
    <div><dt>average stack</dt><dd data-field="average"></dd></div>
    <div><dt>prize pool</dt><dd data-field="pool"></dd></div>
    <div><dt>next break</dt><dd data-field="break"></dd></div>
  </dl>
</div>""",
    "leaderboard": """
<div class="board-head">
  <h1 data-field="name">Chip counts</h1>
  <div class="board-facts">
    <span>level <b data-field="level"></b></span>
    <span>players <b data-field="players"></b></span>
    <span>average <b data-field="average"></b></span>
  </div>
</div>
<table id="leaderboard" class="leaderboard">
  <thead><tr><th>#</th><th>player</th><th class="num">chips</th><th class="num">big blinds</th>
  <th>table</th><th>seat</th><th class="num">since the level began</th></tr></thead>
  <tbody></tbody>
</table>
<h2>Out</h2>
<table id="results" class="results">
  <thead><tr><th>place</th><th>player</th><th class="num">prize</th></tr></thead>
  <tbody></tbody>
</table>""",
    "floor": """
<div class="floor-head">
  <h1 data-field="name">Tournament</h1>
  <div class="who">
    <label>name <input id="floor-name" size="14" autocomplete="name"></label>
    <label>floor token <input id="floor-token" type="password" size="18"></label>
    <span id="floor-error" class="error" role="alert"></span>
  </div>
</div>
<div class="floor-grid">
  <section>
    <h2>To confirm</h2>
    <div id="proposals" class="proposals"></div>
    <h2>Clock</h2>
    <div class="clock-line"><b data-field="level"></b> <span data-field="time"></span>
      <span data-field="state"></span></div>
    <div class="controls">
      <button data-act="draw">draw seats</button>
      <button data-act="start">start</button>
      <button data-clock="pause">pause</button>
      <button data-clock="resume">resume</button>
      <button data-clock="add" data-seconds="60">+1 min</button>
      <button data-clock="add" data-seconds="-60">-1 min</button>
      <button data-h4h="true">hand-for-hand</button>
      <button data-h4h="false">end hand-for-hand</button>
    </div>
    <h2>Register</h2>
    <form id="register"><input name="name" placeholder="player name" required>
      <input name="player_id" placeholder="id (optional)" size="8">
      <button type="submit">register</button></form>
    <h2>Operations</h2>
    <div id="ops"></div>
  </section>
  <section>
    <h2>Tables</h2>
    <div id="tables" class="tables"></div>
    <h2>Log</h2>
    <table id="log" class="log"><tbody></tbody></table>
  </section>
</div>""",
}

TITLES = {"clock": "Clock", "leaderboard": "Chip counts", "floor": "Tournament floor"}


def page(which: str, room: str, event: str | None) -> str:
    """A whole page: `clock`, `leaderboard` or `floor`."""
    title = TITLES[which]
    if event is None:
        body = '<p class="empty">no tournament on this room server ([tournament] in its file)</p>'
    else:
        body = BODIES[which]
    active = f"/tournament/{which}"
    nav = "".join(
        f'<a href="{href}"{" class=active" if href == active else ""}>{label}</a>'
        for href, label in NAV
    )
    screen = " screen" if which in ("clock", "leaderboard") else ""
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · {escape(event or 'no tournament')} · room {escape(room)}</title>"
        '<link rel="stylesheet" href="/static/monitor.css">'
        '<link rel="stylesheet" href="/tournament/static/tournament.css">'
        '<script src="/tournament/static/tournament.js" defer></script></head>'
        f'<body class="tournament page-{which}{screen}" data-page="{which}">'
        f'<header><span class="brand">room {escape(room)}</span><nav>{nav}</nav>'
        '<span id="live" class="live off" title="live updates">live</span></header>'
        f"<main>{body}</main></body></html>"
    )
