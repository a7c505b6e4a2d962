"""The room server's HTTP API (FastAPI; OpenAPI docs at /docs and /redoc, served offline),
read-only without a token.

`create_app` builds the application from a `RoomContext`. The routes live on routers
(`api_router` for JSON under /api; the monitor's pages and assets come from
`room.pages.install_monitor`), so pages, static files and more push channels can be added
by including further routers (`extra_routers`) or mounting static directories on the
returned app. `/api/live` is a Server-Sent Events
stream of what each committed batch added.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import PlainTextResponse, StreamingResponse
from fastapi_offline import FastAPIOffline

from controller import __version__
from room.deps import Ctx, RoomContext, context, require_token
from room.ingest import CommandError
from room.limits import LiveLimits, LiveSlots, SecurityHeaders, command_payload, table_path_ids
from room.live import live_response
from room.pages import install_monitor
from room.privacy import has_token
from room.stats import GROUPINGS, dealer_stats, table_stats
from room.summary import hand_phh

#: Room commands the API may send (the table refuses anything else all the same).
COMMAND_RE = r"^[a-z][a-z0-9_-]{0,63}$"


def _hand_key(hand_id: str) -> tuple[str, int]:
    table, _, number = hand_id.rpartition(".")
    if not table or not number.isdigit():
        raise HTTPException(404, f"no hand {hand_id!r}: a hand id is <table>.<hand number>")
    return table, int(number)


def _hand_json(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"{row['table_id']}.{row['hand']}",
        **{k: v for k, v in row.items() if k != "room"},
    }


api_router = APIRouter(prefix="/api")
__all__ = ["RoomContext", "api_router", "create_app"]


@api_router.get("/health")
def health(ctx: Ctx) -> dict[str, Any]:
    """The server: broker connection, schema version, ingest counters."""
    ingest = ctx.ingest
    return {
        "room": ctx.config.name,
        "version": __version__,
        "schema_version": ctx.store.schema_version(),
        "database": "postgresql" if ctx.store.postgres else "sqlite",
        "connected": bool(ingest and ingest.connected.is_set()),
        "counters": dict(ingest.counters) if ingest else {},
        "open_gaps": len(ingest.tracker.open_holes()) if ingest else None,
    }


@api_router.get("/tables")
def tables(ctx: Ctx) -> list[dict[str, Any]]:
    """Every table of the room: status, last state, events stored, open gaps."""
    out = []
    for row in ctx.store.tables():
        state = json.loads(row["state"]) if row.get("state") else None
        out.append(
            {
                "table": row["table_id"],
                "status": row["status"],
                "status_at": row["status_at"],
                "first_seen": row["first_seen"],
                "last_seen": row["last_seen"],
                "max_seq": row["max_seq"],
                "open_gaps": row["open_gaps"],
                "state": state,
            }
        )
    return out


@api_router.get("/tables/{table}/hands")
def table_hands(
    ctx: Ctx,
    table: str,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    before: int | None = None,
) -> list[dict[str, Any]]:
    """A table's hands, newest first (`before`: hand numbers below it)."""
    return [_hand_json(r) for r in ctx.store.hands(table, limit, before)]


@api_router.get("/tables/{table}/{topic}")
def table_messages(
    ctx: Ctx, table: str, topic: str, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> list[dict[str, Any]]:
    """A table's stored `alerts`, `replies`, `status` or `state` messages, newest first."""
    if topic not in ("alerts", "replies", "status", "state"):
        raise HTTPException(404, f"no topic {topic!r} (alerts, replies, status, state)")
    return [
        {"received_at": r["received_at"], "payload": json.loads(r["payload"])}
        for r in ctx.store.messages(table, topic, limit)
    ]


@api_router.get("/hands")
def all_hands(ctx: Ctx, limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> list[dict[str, Any]]:
    """The room's latest hands, every table."""
    return [_hand_json(r) for r in ctx.store.hands(None, limit)]


@api_router.get("/hands/{hand_id}.phh", response_class=PlainTextResponse)
def hand_phh_file(ctx: Ctx, hand_id: str) -> PlainTextResponse:
    """The hand as a Poker Hand History file (only the cards that were shown)."""
    table, number = _hand_key(hand_id)
    if ctx.store.hand(table, number) is None:
        raise HTTPException(404, f"no hand {hand_id!r}")
    phh = hand_phh(ctx.store, table, number)
    if phh is None:
        raise HTTPException(409, f"hand {hand_id} is not completed (or its start is missing)")
    if phh.text is None:
        raise HTTPException(409, f"hand {hand_id} cannot be written as PHH: {phh.problem}")
    return PlainTextResponse(
        phh.text,
        media_type="application/toml",
        headers={"Content-Disposition": f'attachment; filename="{phh.filename}"'},
    )


@api_router.get("/hands/{hand_id}")
def hand_events(ctx: Ctx, hand_id: str) -> dict[str, Any]:
    """A hand: its summary and every event of it, in seq order."""
    table, number = _hand_key(hand_id)
    row = ctx.store.hand(table, number)
    events = ctx.store.hand_events(table, number)
    if row is None and not events:
        raise HTTPException(404, f"no hand {hand_id!r}")
    return {
        "hand": _hand_json(row) if row else None,
        "events": [json.loads(e["payload"]) for e in events],
    }


def _grouping(by: str) -> str:
    if by not in GROUPINGS:
        raise HTTPException(422, f"by must be one of {', '.join(GROUPINGS)}")
    return by


@api_router.get("/stats/dealers")
def stats_dealers(
    ctx: Ctx, by: str = "all", since: str | None = None, until: str | None = None
) -> dict[str, Any]:
    """Per dealer: hands per hour, average hand, misdeals / four-card flops / premature cards
    per 100 hands; `by` all, day or shift; `since`/`until` local days (YYYY-MM-DD)."""
    rows = ctx.store.completed_hands()
    stats = ctx.config.stats
    return {
        "timezone": stats.timezone,
        "shifts": {s.name: s.start.isoformat("minutes") for s in stats.shifts},
        "by": _grouping(by),
        "dealers": dealer_stats(stats, rows, by, since, until),
    }


@api_router.get("/stats/tables")
def stats_tables(
    ctx: Ctx, by: str = "day", since: str | None = None, until: str | None = None
) -> dict[str, Any]:
    """Per table: hands per hour, average hand, dealing errors, rake; by all, day or shift."""
    rows = ctx.store.completed_hands()
    stats = ctx.config.stats
    return {
        "timezone": stats.timezone,
        "by": _grouping(by),
        "tables": table_stats(stats, rows, by, since, until),
    }


@api_router.get("/gaps")
def gaps(ctx: Ctx, table: str | None = None) -> list[dict[str, Any]]:
    """Every hole found in a table's seq: open, asked, healed or lost."""
    return [{k: v for k, v in g.items() if k != "room"} for g in ctx.store.gaps(table)]


@api_router.get("/alerts")
def room_alerts(
    ctx: Ctx, limit: Annotated[int, Query(ge=1, le=1000)] = 100
) -> list[dict[str, Any]]:
    """What the room server itself noticed (gaps, lost events, reused seqs), newest first."""
    return ctx.store.room_alerts(limit)


@api_router.post("/tables/{table}/commands/{name}", dependencies=[Depends(require_token)])
def send_command(ctx: Ctx, table: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
    """Send a room command (docs/mqtt.md, Room commands) and return the table's reply.

    The body is the command's payload; an `id` is added when it has none. 504 when the
    table does not answer within [http] command_timeout (send it again with the same id:
    the table applies an id once). Checked before anything is published (room/limits.py):
    404 for a table the room has never heard from, 413 for a body a table would refuse
    for its size, 400 for one that is not JSON text.
    """
    if not re.match(COMMAND_RE, name):
        raise HTTPException(404, "not a command name")
    if ctx.ingest is None:
        raise HTTPException(503, "this server does not talk to the broker")
    command_payload(table, name, body)  # CommandRefused: nothing is published
    if table not in {str(row["table_id"]) for row in ctx.store.tables()}:
        raise HTTPException(404, f"no table {table!r} in this room (it has published nothing)")
    try:
        return ctx.ingest.command(table, name, body, ctx.config.http.command_timeout)
    except CommandError as exc:
        raise HTTPException(504, str(exc)) from exc


@api_router.get("/live")
async def live(request: Request) -> StreamingResponse:
    """Server-Sent Events, one `batch` event per committed batch: with the bearer token its
    new events and messages and `committed_at`; without it `committed_at` only (a notice
    that something changed). Streams are capped per client and in all (429), and cut when
    the client stops reading (room/live.py)."""
    ctx = context(request)
    if ctx.ingest is None:
        raise HTTPException(503, "this server does not ingest")
    slots: LiveSlots = request.app.state.live_slots
    client = request.client.host if request.client else "?"
    slots.take(client)
    full = has_token(request, ctx.config.http.token)
    return live_response(ctx.ingest, slots, client, full, request.is_disconnected)


def create_app(ctx: RoomContext, *, extra_routers: Iterable[APIRouter] = ()) -> FastAPI:
    """The application: the JSON API, the monitor's pages and assets, further routers."""
    # Swagger UI (/docs) and ReDoc (/redoc) from fastapi-offline's copies: no CDN
    app = FastAPIOffline(
        favicon_url="/static/favicon.svg",
        docs_url=None,  # /docs and /redoc: room/pages.py, each under its own page policy
        redoc_url=None,
        title=f"tablectl room server ({ctx.config.name})",
        version=__version__,
        description="Every table's events, hands, PHH hand histories and statistics.",
        # a `{table}` that cannot be a table id (a wildcard, a NUL) is a 404, on every route
        dependencies=[Depends(table_path_ids)],
    )
    app.state.ctx = ctx
    app.state.live_slots = LiveSlots(LiveLimits())
    app.include_router(api_router)
    install_monitor(app)
    for router in extra_routers:
        app.include_router(router)
    app.add_middleware(SecurityHeaders)
    return app
