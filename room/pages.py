"""The monitor's routes: the room view, the alerts feed (with acknowledgement), a table's
page, a hand's replay, the dealers page, their live fragments, and the static assets."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from room import render
from room.chain import readable
from room.charts import line_chart
from room.dealers import shift_hours
from room.deps import Ctx, RoomContext, require_token
from room.monitor import public, seat_reads, sort_tiles, tile
from room.replay import results, steps

STATIC = Path(__file__).with_name("static")
#: The font is the TV pages' (shipped once, with its licence, in broadcast/static/fonts).
FONTS = Path(__file__).resolve().parent.parent / "broadcast" / "static" / "fonts"
router = APIRouter()


class Acknowledgement(BaseModel):
    """Who acknowledges an alert."""

    by: str = Field(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$")


class BulkAcknowledgement(Acknowledgement):
    """Who acknowledges which alerts: every open one of a table and kind, or `ids`."""

    table: str | None = Field(default=None, max_length=64)
    kind: str | None = Field(default=None, max_length=64)
    ids: list[int] | None = Field(default=None, max_length=1000)


def tiles(ctx: RoomContext, now: float, only: str | None = None) -> list[dict[str, Any]]:
    """Every table's tile (or table `only`'s), offline tables first."""
    store = ctx.store
    statuses = store.latest_statuses()
    last = store.last_events()
    alerts: dict[str, list[dict[str, Any]]] = {}
    for alert in store.table_alerts(limit=500):
        alerts.setdefault(str(alert["table_id"]), []).append(alert)
    out = []
    for row in store.tables():
        table = str(row["table_id"])
        if only is not None and table != only:
            continue
        state = json.loads(row["state"]) if row.get("state") else {}
        misdeal = None
        if any(p.get("procedure") == "misdeal" for p in state.get("procedures") or []):
            latest = store.events_of_type(table, "misdeal")
            misdeal = json.loads(latest[0]["payload"]) if latest else None
        out.append(
            tile(
                {"table": table, "status": row["status"], "state": state, "misdeal": misdeal},
                statuses.get(table),
                last.get(table),
                alerts.get(table, []),
                now,
                ctx.config.monitor.stalled_after,
            )
        )
    return sort_tiles(out)


def _page(ctx: RoomContext, title: str, body: str, active: str, fragment: str | None) -> str:
    return render.layout(title, ctx.config.name, body, active=active, fragment=fragment)


def _room(ctx: RoomContext) -> str:
    return render.room_fragment(tiles(ctx, time.time()))


def _alerts(
    ctx: RoomContext,
    table: str | None,
    kind: str | None,
    limit: int,
    group: bool = True,
    open_only: bool = False,
) -> str:
    alerts = ctx.store.table_alerts(table or None, kind or None, limit)
    if open_only:
        alerts = [a for a in alerts if a.get("acknowledged_by") is None]
    return render.alerts_fragment(alerts, group=group)


def _table(ctx: RoomContext, table: str) -> str:
    row = next((r for r in ctx.store.tables() if r["table_id"] == table), None)
    if row is None:
        raise HTTPException(404, f"no table {table!r} seen in this room")
    state = json.loads(row["state"]) if row.get("state") else {}
    (view,) = tiles(ctx, time.time(), only=table)
    hands = ctx.store.hands(table, 10)
    awarded = ctx.store.events_of_type(table, "pot_awarded", None, 60)
    awards = [json.loads(a["payload"]) for a in awarded]
    return render.table_fragment(view, view_state(state), seat_reads(state), hands, results(awards))


def view_state(state: dict[str, Any]) -> dict[str, Any]:
    """The board and the pots of a state, public cards only."""
    return {"board": public(state.get("board") or [], "board"), "pots": state.get("pots") or []}


def _dealers(ctx: RoomContext) -> str:
    now = time.time()
    shift, labels, series, summary = shift_hours(ctx.config.stats, ctx.store.completed_hands(), now)
    chart = line_chart(series, labels, title=f"Hands started per hour, shift {shift}")
    assignments = [(t["table"], t["dealer"], render.link_text(t)) for t in tiles(ctx, now)]
    return render.dealers_fragment(shift, chart, summary, assignments)


Name = Annotated[str | None, Query(max_length=64)]
Limit = Annotated[int, Query(ge=1, le=1000)]


@router.get("/", response_class=HTMLResponse)
def room_page(ctx: Ctx) -> str:
    """The room view: every table as a tile, offline ones first, banners for the floor."""
    return _page(ctx, "Room", _room(ctx), "/", "/fragments/room")


Flags = Annotated[list[str] | None, Query(max_length=2)]


def _flag(values: list[str] | None, default: bool) -> bool:
    """A checkbox in the URL: its last value (a hidden 0 comes before a ticked 1)."""
    return default if not values else values[-1] in ("1", "true", "on")


@router.get("/alerts", response_class=HTMLResponse)
def alerts_page(
    ctx: Ctx,
    table: Name = None,
    kind: Name = None,
    limit: Limit = 200,
    group: Flags = None,
    open: Flags = None,
) -> str:
    """Every table's alerts, newest first (the latest `limit`), by table and kind, repeats
    grouped (`group=0`: one row each), `open=1`: only those not acknowledged. Every filter
    is in the URL."""
    grouped, open_only = _flag(group, True), _flag(open, False)
    known = [str(r["table_id"]) for r in ctx.store.tables()]
    kinds = sorted({str(a["payload"].get("type")) for a in ctx.store.table_alerts(limit=1000)})
    query = urlencode(
        {k: v for k, v in (("table", table), ("kind", kind)) if v}
        | {"limit": limit, "group": int(grouped), "open": int(open_only)}
    )
    form = render.alerts_filter(known, kinds, table, kind, group=grouped, open_only=open_only)
    body = f'<h1>Alerts</h1>{form}<div id="feed" data-fragment="/fragments/alerts?{query}">'
    body += _alerts(ctx, table, kind, limit, grouped, open_only) + "</div>"
    return _page(ctx, "Alerts", body, "/alerts", None)


@router.get("/tables/{table}", response_class=HTMLResponse)
def table_page(ctx: Ctx, table: str) -> str:
    """A table: the hand in progress, each seat's cards read, the last hands."""
    fragment = f"/fragments/tables/{quote(table)}"
    return _page(ctx, f"Table {table}", _table(ctx, table), "", fragment)


@router.get("/tables/{table}/hands/{hand}", response_class=HTMLResponse)
def replay_page(ctx: Ctx, table: str, hand: int) -> str:
    """A stored hand, step by step."""
    events = [json.loads(r["payload"]) for r in ctx.store.hand_events(table, hand)]
    if not events:
        raise HTTPException(404, f"no hand {table}.{hand}")
    before = ctx.store.latest_state_before(table, int(events[0].get("seq") or 0))
    body = render.replay_fragment(table, hand, steps(events, before))
    body += render.readable_fragment(readable(ctx.store, table, hand))  # room/chain.py
    return _page(ctx, f"{table} hand {hand}", body, "", None)


@router.get("/dealers", response_class=HTMLResponse)
def dealers_page(ctx: Ctx) -> str:
    """Hands per hour per dealer over the shift, dealing errors, who deals where."""
    return _page(ctx, "Dealers", _dealers(ctx), "/dealers", "/fragments/dealers")


@router.get("/fragments/room", response_class=HTMLResponse, include_in_schema=False)
def room_fragment(ctx: Ctx) -> str:
    return _room(ctx)


@router.get("/fragments/alerts", response_class=HTMLResponse, include_in_schema=False)
def alerts_fragment(
    ctx: Ctx,
    table: Name = None,
    kind: Name = None,
    limit: Limit = 200,
    group: Flags = None,
    open: Flags = None,
) -> str:
    return _alerts(ctx, table, kind, limit, _flag(group, True), _flag(open, False))


@router.get("/fragments/tables/{table}", response_class=HTMLResponse, include_in_schema=False)
def table_fragment(ctx: Ctx, table: str) -> str:
    return _table(ctx, table)


@router.get("/fragments/dealers", response_class=HTMLResponse, include_in_schema=False)
def dealers_fragment(ctx: Ctx) -> str:
    return _dealers(ctx)


@router.get("/api/monitor/tiles")
def tiles_json(ctx: Ctx) -> list[dict[str, Any]]:
    """What the room view shows, as JSON (banners: kind, title, text, severity)."""
    return [{**t, "banners": [asdict(b) for b in t["banners"]]} for t in tiles(ctx, time.time())]


@router.get("/api/table-alerts")
def table_alerts(
    ctx: Ctx,
    table: Name = None,
    kind: Name = None,
    limit: Limit = 200,
) -> list[dict[str, Any]]:
    """The tables' alerts, newest first, with who acknowledged each and when."""
    return ctx.store.table_alerts(table, kind, limit)


@router.post("/api/table-alerts/{alert_id}/ack", dependencies=[Depends(require_token)])
def acknowledge(ctx: Ctx, alert_id: int, body: Acknowledgement) -> dict[str, Any]:
    """Acknowledge a table's alert (the bearer token; `by`: who). The first one stands."""
    who = body.by.strip()
    if not who:
        raise HTTPException(422, "by: who acknowledges (a name, not only spaces)")
    done = ctx.store.acknowledge(alert_id, who)
    if done is None:
        raise HTTPException(404, f"no table alert {alert_id}")
    return done


#: Swagger UI's page starts itself with an inline script; it loads nothing from elsewhere.
SWAGGER_POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"
)


@router.get("/docs", include_in_schema=False)
def swagger(request: Request) -> HTMLResponse:
    """Swagger UI from fastapi-offline's copy, under a policy that keeps the browser home."""
    from fastapi.openapi.docs import get_swagger_ui_html

    page = get_swagger_ui_html(
        openapi_url="/openapi.json",
        title=f"{request.app.title} - Swagger UI",
        swagger_js_url="/static-offline-docs/swagger-ui-bundle.js",
        swagger_css_url="/static-offline-docs/swagger-ui.css",
        swagger_favicon_url="/static/favicon.svg",
    )
    return HTMLResponse(
        bytes(page.body).decode(), headers={"Content-Security-Policy": SWAGGER_POLICY}
    )


#: ReDoc's page may load nothing from elsewhere (its sidebar links a logo on a CDN).
REDOC_POLICY = (
    "default-src 'self' blob: data:; script-src 'self' 'unsafe-inline' blob:; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; worker-src 'self' blob:"
)


@router.get("/redoc", include_in_schema=False)
def redoc(request: Request) -> HTMLResponse:
    """ReDoc from fastapi-offline's copy, under a policy that keeps the browser off CDNs."""
    from fastapi.openapi.docs import get_redoc_html
    from fastapi_offline.core import _STATIC_PATH  # noqa: F401  (the copy served below)

    page = get_redoc_html(
        openapi_url="/openapi.json",
        title=f"{request.app.title} - ReDoc",
        redoc_js_url="/static-offline-docs/redoc.standalone.js",
        redoc_favicon_url="/static/favicon.svg",
        with_google_fonts=False,
    )
    return HTMLResponse(
        bytes(page.body).decode(), headers={"Content-Security-Policy": REDOC_POLICY}
    )


@router.get("/favicon.ico", include_in_schema=False)
def favicon() -> FileResponse:
    """The room's icon (browsers ask for /favicon.ico; the pages name the SVG)."""
    return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")


async def not_found(request: Request, exc: Exception) -> Response:
    """404 and the other HTTP errors: JSON for the API (`detail`), a page for people."""
    assert isinstance(exc, StarletteHTTPException)
    path = request.url.path
    wants_json = path.startswith(("/api/", "/fragments/", "/static/", "/openapi"))
    if wants_json or "text/html" not in request.headers.get("accept", "text/html"):
        return JSONResponse(
            {"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers
        )
    ctx: RoomContext = request.app.state.ctx
    title = "Not found" if exc.status_code == 404 else f"Error {exc.status_code}"
    body = render.error_page(exc.status_code, str(exc.detail), path)
    html = render.layout(title, ctx.config.name, body, active="", fragment=None)
    return HTMLResponse(html, status_code=exc.status_code, headers=exc.headers)


@router.post("/api/table-alerts/ack", dependencies=[Depends(require_token)])
def acknowledge_many(ctx: Ctx, body: BulkAcknowledgement) -> dict[str, Any]:
    """Acknowledge at once every alert not yet acknowledged of a `table` and `kind` (both
    needed), or the alerts `ids` (the bearer token; `by`: who). The count acknowledged."""
    who = body.by.strip()
    if not who:
        raise HTTPException(422, "by: who acknowledges (a name, not only spaces)")
    if body.ids is not None:
        ids = body.ids
    elif body.table and body.kind:
        ids = []
        for alert in ctx.store.table_alerts(body.table, body.kind, limit=100_000):
            if alert.get("acknowledged_by") is None:
                ids.append(int(alert["id"]))
    else:
        raise HTTPException(422, "give table and kind (every open alert of them), or ids")
    done = [d for d in (ctx.store.acknowledge(i, who) for i in ids) if d is not None]
    return {"acknowledged": len(done), "by": who}


def install_monitor(app: FastAPI) -> None:
    """Add the monitor's pages, fragments and static assets (script, style) to `app`, and
    its error pages (HTML for people, JSON under /api)."""
    app.add_exception_handler(StarletteHTTPException, not_found)
    app.include_router(router)
    app.mount("/static/fonts", StaticFiles(directory=FONTS), name="fonts")
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
