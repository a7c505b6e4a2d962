"""The web side of the TV service (FastAPI): overlay and preview pages, feed, assets.

| Path | What |
|---|---|
| `GET /` | the list of tables with their page links |
| `GET /overlay/{table}` | the on-air page (OBS Browser Source, 1920x1080, transparent) |
| `GET /preview/{table}` | the director's live page: the same graphics, cards face down |
| `WS /feed/{table}` | the delayed frames as JSON (the overlay page draws these) |
| `GET /feed/{table}.json` | the latest delayed frame (for graphics systems that poll) |
| `GET /lower-third?room=URL` | the room's tournament chip counts, behind the delay |
| `WS /preview/{table}/ws` | the live preview frames (no hole card, no equity) |
| `GET /api/status` | tables, delay, messages received and held (no card) |
| `POST /api/delay` | `{"seconds": D}` with `Authorization: Bearer <token>` |
| `GET /static/...` | the page's script, style sheet and fonts |

The pages themselves hold no data: the browser gets every frame over its WebSocket, so
the page source never holds a card. Every asset is served from here (no network at the
venue).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from broadcast.delay import DelayError
from broadcast.desk import Channel, Desk, TableDesk

STATIC = Path(str(resources.files("broadcast") / "static"))
#: On every response (the pages load nothing inline and nothing from elsewhere).
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; frame-ancestors 'self'",
    "x-frame-options": "SAMEORIGIN",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}
PAGE = "page.html"


def create_app(
    desk: Desk,
    *,
    control_token: str | None = None,
    connected: Callable[[], bool | None] = lambda: None,
) -> FastAPI:
    """The FastAPI application serving `desk` (`connected`: is the MQTT client up)."""

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        desk.bind(asyncio.get_running_loop())
        task = asyncio.create_task(desk.run(), name="tv-delay-pump")
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    app = FastAPI(
        title="tablectl tv", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_exception_handler(StarletteHTTPException, _error_page(desk))
    _add_pages(app, desk)
    _add_feeds(app, desk)
    _add_api(app, desk, control_token, connected)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        """No framing by another site, no sniffing, assets and sockets from here only."""
        response: Response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    return app


_ORIGIN = re.compile(r"[A-Za-z0-9.\-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")


def _origin(url: str) -> str | None:
    """The origin (scheme://host[:port]) of an http(s) address, or None for anything else
    (it goes into the page's policy, so nothing but a plain origin passes)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not _ORIGIN.fullmatch(parts.netloc):
        return None
    return f"{parts.scheme}://{parts.netloc}"


def _table(desk: Desk, table_id: str) -> TableDesk:
    """The table `table_id` of the desk; 404 if the service has none."""
    found = desk.tables.get(table_id)
    if found is None:
        raise HTTPException(status_code=404, detail=f"no table {table_id!r} on this service")
    return found


def _error_page(desk: Desk) -> Callable[[Request, Exception], Awaitable[Response]]:
    """The handler of HTTP errors (it lists the desk's tables on a person's page)."""

    async def error_page(request: Request, exc: Exception) -> Response:
        """An HTTP error: JSON for the feed and the API, a page for a person's browser."""
        assert isinstance(exc, StarletteHTTPException)
        path = request.url.path
        accept = request.headers.get("accept", "")
        if path.startswith(("/api/", "/feed/", "/static/")) or "text/html" not in accept:
            return JSONResponse({"detail": exc.detail}, exc.status_code, exc.headers)
        links = "".join(
            f'<li><a href="/overlay/{html.escape(t)}">{html.escape(t)}: overlay</a> · '
            f'<a href="/preview/{html.escape(t)}">preview</a></li>'
            for t in desk.tables
        )
        body = (
            '<!doctype html><meta charset="utf-8"><title>Not found · tablectl tv</title>'
            '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
            '<link rel="stylesheet" href="/static/tv.css"><body class="index">'
            f"<h1>Not found</h1><p>{html.escape(str(exc.detail))}</p>"
            f"<p>The tables of this service:</p><ul>{links}</ul></body>"
        )
        return HTMLResponse(body, exc.status_code, exc.headers)

    return error_page


def _add_pages(app: FastAPI, desk: Desk) -> None:
    """The pages: the index, the overlay and preview of each table, the lower third."""
    template = (STATIC / PAGE).read_text(encoding="utf-8")

    def page(table_id: str, view: str, ws_path: str) -> HTMLResponse:
        spec = _table(desk, table_id).spec
        text = (
            template.replace("{{view}}", view)
            .replace("{{table}}", html.escape(spec.id))
            .replace("{{label}}", html.escape(spec.label or spec.id))
            .replace("{{ws}}", html.escape(ws_path))
        )
        return HTMLResponse(text, headers={"Cache-Control": "no-store"})

    @app.get("/", response_class=HTMLResponse)
    async def index() -> HTMLResponse:
        rows = "".join(
            f'<li>{html.escape(t)}: <a href="/overlay/{html.escape(t)}">overlay</a> · '
            f'<a href="/preview/{html.escape(t)}">preview</a></li>'
            for t in desk.tables
        )
        return HTMLResponse(
            '<!doctype html><meta charset="utf-8"><title>tablectl tv</title>'
            '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">'
            f'<link rel="stylesheet" href="/static/tv.css"><body class="index"><h1>tablectl tv'
            f"</h1><ul>{rows}</ul></body>"
        )

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> FileResponse:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @app.get("/lower-third", response_class=HTMLResponse)
    async def lower_third(room: str = "") -> HTMLResponse:
        """The chip counts of the room's tournament (docs/tournament.md, *On TV*): the page
        may read from the room server its address names, and from nowhere else."""
        first = next(iter(desk.tables), "")
        text = (STATIC / "lower-third.html").read_text(encoding="utf-8")
        text = text.replace("{{table}}", html.escape(first))
        headers = {"Cache-Control": "no-store"}
        origin = _origin(room)
        if origin is not None:
            policy = SECURITY_HEADERS["content-security-policy"]
            headers["content-security-policy"] = policy.replace(
                "connect-src 'self'", f"connect-src 'self' {origin}"
            )
        return HTMLResponse(text, headers=headers)

    @app.get("/overlay/{table_id}", response_class=HTMLResponse)
    async def overlay(table_id: str) -> HTMLResponse:
        return page(table_id, "overlay", f"/feed/{table_id}")

    @app.get("/preview/{table_id}", response_class=HTMLResponse)
    async def preview(table_id: str) -> HTMLResponse:
        return page(table_id, "preview", f"/preview/{table_id}/ws")


async def _stream(websocket: WebSocket, channel: Channel) -> None:
    """Send the channel's frames until the client goes (what it sends is ignored)."""
    await websocket.accept()

    async def send() -> None:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            async for text in channel.follow():
                await websocket.send_text(text)

    sender = asyncio.create_task(send())
    try:
        while not sender.done():
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sender


def _add_feeds(app: FastAPI, desk: Desk) -> None:
    """The delayed overlay and the live preview of each table, on websockets and over HTTP."""

    @app.websocket("/feed/{table_id}")
    async def feed(websocket: WebSocket, table_id: str) -> None:
        found = desk.tables.get(table_id)
        if found is None:
            await websocket.close(code=4404)
            return
        await _stream(websocket, found.overlay)

    @app.websocket("/preview/{table_id}/ws")
    async def preview_ws(websocket: WebSocket, table_id: str) -> None:
        found = desk.tables.get(table_id)
        if found is None:
            await websocket.close(code=4404)
            return
        await _stream(websocket, found.preview)

    @app.get("/feed/{table_id}.json")
    async def feed_latest(table_id: str) -> Response:
        """The latest delayed frame over plain HTTP (graphics systems that poll)."""
        text = _table(desk, table_id).overlay.text or "{}"
        return Response(text, media_type="application/json", headers={"Cache-Control": "no-store"})


def _add_api(
    app: FastAPI, desk: Desk, control_token: str | None, connected: Callable[[], bool | None]
) -> None:
    """The status (the equity counter for the control token only) and the delay setting."""

    @app.get("/api/status")
    async def status(request: Request) -> dict[str, Any]:
        # When the equity worker computes follows the hole cards read (and how long it takes
        # depends on them): live, that is information about cards not yet on air. Only the
        # control token's holder (the director's desk) sees its counter.
        given = request.headers.get("authorization", "")
        director = control_token is not None and hmac.compare_digest(
            given.encode(), f"Bearer {control_token}".encode()
        )
        body = {
            "tables": {
                t.spec.id: {
                    "prefix": t.spec.prefix,
                    "delay": t.line.in_force,
                    "delay_configured": t.line.configured,
                    "table_release_delay": t.line.floor,
                    "received": t.received,
                    "held": len(t.line),
                    "overlay_followers": t.overlay.followers,
                    "preview_followers": t.preview.followers,
                    "holecards_missing": t.holes.missing,
                    "holecards_requests": t.holes.requests,
                    "holecards_refused_clear": t.refused_clear,
                }
                for t in desk.tables.values()
            },
            "broker_connected": connected(),
            "bad_messages": desk.bad_messages,
        }
        if director:
            body["equities_computed"] = desk.worker.computed
        return body

    @app.post("/api/delay")
    async def set_delay(request: Request) -> JSONResponse:
        if control_token is None:
            raise HTTPException(
                status_code=403, detail="no control token configured ([tv] control_token_file)"
            )
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {control_token}".encode()):
            raise HTTPException(status_code=401, detail="a valid bearer token is required")
        try:
            body = await request.json()
        except ValueError:
            raise HTTPException(status_code=400, detail="the body must be JSON") from None
        if not isinstance(body, dict) or set(body) != {"seconds"}:
            raise HTTPException(status_code=400, detail='the body must be {"seconds": D}')
        try:
            desk.set_delay(body["seconds"])
        except DelayError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None
        return JSONResponse(
            {
                t.spec.id: {"configured": t.line.configured, "in_force": t.line.in_force}
                for t in desk.tables.values()
            }
        )
