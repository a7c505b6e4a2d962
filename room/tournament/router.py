"""The tournament's API and pages on the room server (docs/tournament.md, *API*).

Reading is open (the leaderboard and the clock are public, and carry no card: CORS allows the
TV lower-third to read them from another origin); every floor action needs the bearer token
of [http] token_file, as the monitor's commands do. `/api/tournament/live` is a Server-Sent
Events stream: one `tournament` event each time the tournament changed (its `version`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from room.config import TournamentSettings
from room.deps import require_token
from room.ingest import Ingest
from room.tournament import pages
from room.tournament.service import TournamentService
from room.tournament.tournament import FloorError

STATIC = Path(__file__).with_name("static")
PUBLIC = {"Access-Control-Allow-Origin": "*", "Cache-Control": "no-store"}
Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$")]

router = APIRouter()


def service(request: Request) -> TournamentService:
    """The room's tournament; 404 when the room server runs none."""
    found: TournamentService | None = getattr(request.app.state, "tournament", None)
    if found is None:
        raise HTTPException(404, "no tournament on this room server ([tournament] in its file)")
    return found


Service = Annotated[TournamentService, Depends(service)]


def _json(svc: TournamentService, view: str) -> Response:
    return Response(svc.text(view), media_type="application/json", headers=PUBLIC)


def _act(svc: TournamentService, kind: str, **fields: Any) -> dict[str, Any]:
    try:
        return svc.act(kind, **fields)
    except FloorError as exc:
        raise HTTPException(409, str(exc)) from exc


class By(BaseModel):
    """Who does it (the floor's name, kept in the journal)."""

    by: Name = "floor"


class Confirm(By):
    chips: int | None = Field(default=None, ge=0, le=2**53 - 1)  # the floor's count
    accept_count: bool = False  # the floor's count stands against the table's


class Reject(By):
    reason: str | None = Field(default=None, max_length=200)
    chips: int | None = Field(default=None, ge=0, le=2**53 - 1)  # a player out: still has


class ClockAction(By):
    action: str = Field(pattern=r"^(pause|resume|add|level)$")
    seconds: float | None = Field(default=None, ge=-3600, le=3600)
    level: int | None = Field(default=None, ge=1, le=1000)


class Registration(By):
    name: Name
    player_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,32}$")] | None = None


class Reentry(By):
    forfeit: bool = False  # TDA 8-B: the chips left are removed from play


class HandForHand(By):
    on: bool = True


# ------------------------------------------------------------------ reading


@router.get("/api/tournament")
def summary(svc: Service) -> Response:
    """The event: clock, players left, average stack, prize pool, hand-for-hand, ..."""
    return _json(svc, "summary")


@router.get("/api/tournament/leaderboard")
def leaderboard(svc: Service) -> Response:
    """Live chip counts: every player still in by chips (count, big blinds, table and
    seat, change since the level began), players left, average stack. Never a card."""
    return _json(svc, "leaderboard")


@router.get("/api/tournament/results")
def results(svc: Service) -> Response:
    """Finishing places (shared ones as `place`-`place_to`) and prizes."""
    return _json(svc, "results")


@router.get("/api/tournament/players")
def players(svc: Service) -> Response:
    return _json(svc, "players")


@router.get("/api/tournament/tables")
def tables(svc: Service) -> Response:
    """The event's tables as the room sees them: seats, hand, why held."""
    return _json(svc, "tables")


@router.get("/api/tournament/proposals")
def proposals(svc: Service) -> Response:
    """What the floor is asked to confirm (and what it decided), newest first."""
    return _json(svc, "proposals")


@router.get("/api/tournament/operations")
def operations(svc: Service) -> Response:
    return _json(svc, "ops")


@router.get("/api/tournament/log")
def tournament_log(svc: Service) -> Response:
    return _json(svc, "log")


@router.get("/api/tournament/payouts")
def payouts(svc: Service) -> Response:
    return _json(svc, "payouts")


def _sse(version: int) -> bytes:
    return f"event: tournament\ndata: {json.dumps({'version': version})}\n\n".encode()


@router.get("/api/tournament/live")
async def live(request: Request, svc: Service) -> StreamingResponse:
    """Server-Sent Events: `tournament` with the new `version` whenever it changes."""
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[int] = asyncio.Queue()

    def listener(version: int) -> None:
        loop.call_soon_threadsafe(inbox.put_nowait, version)

    async def stream() -> AsyncIterator[bytes]:
        svc.listeners.append(listener)
        try:
            yield b": connected\n\n"
            yield _sse(svc.core.version)
            while True:
                try:
                    version = await asyncio.wait_for(inbox.get(), timeout=15)
                except TimeoutError:
                    if await request.is_disconnected():
                        return
                    yield b": keepalive\n\n"
                    continue
                while not inbox.empty():  # a burst: the latest version is enough
                    version = inbox.get_nowait()
                yield _sse(version)
        finally:
            svc.listeners.remove(listener)

    return StreamingResponse(stream(), media_type="text/event-stream", headers=PUBLIC)


# ------------------------------------------------------------------ the floor

floor = APIRouter(prefix="/api/tournament", dependencies=[Depends(require_token)])


@floor.post("/draw")
def draw(svc: Service, body: By) -> dict[str, Any]:
    """The starting seat draw; the tables hold until the clock starts."""
    return _act(svc, "draw", by=body.by)


@floor.post("/start")
def start(svc: Service, body: By) -> dict[str, Any]:
    """Start the clock (and draw the seats first if not done): shuffle up and deal."""
    return _act(svc, "start", by=body.by)


@floor.post("/clock")
def clock(svc: Service, body: ClockAction) -> dict[str, Any]:
    """Pause, resume, add (or take) time, or set the level."""
    return _act(
        svc, "clock", action=body.action, seconds=body.seconds, level=body.level, by=body.by
    )


@floor.post("/players")
def register(svc: Service, body: Registration) -> dict[str, Any]:
    """Register a player (TDA 8-A: after the start, a full stack and a seat drawn)."""
    fields: dict[str, Any] = {"name": body.name, "by": body.by}
    if body.player_id:
        fields["player_id"] = body.player_id
    return _act(svc, "register", **fields)


@floor.post("/players/{player_id}/reenter")
def reenter(svc: Service, player_id: str, body: Reentry) -> dict[str, Any]:
    return _act(svc, "reenter", player_id=player_id, forfeit=body.forfeit, by=body.by)


@floor.post("/players/{player_id}/disqualify")
def disqualify(svc: Service, player_id: str, body: By) -> dict[str, Any]:
    return _act(svc, "disqualify", player_id=player_id, by=body.by)


@floor.post("/proposals/{proposal_id}/confirm")
def confirm(svc: Service, proposal_id: int, body: Confirm) -> dict[str, Any]:
    """The floor confirms a proposal (a move: `chips` counted, checked against the table)."""
    fields: dict[str, Any] = {"proposal": proposal_id, "by": body.by}
    if body.chips is not None:
        fields["chips"] = body.chips
    if body.accept_count:
        fields["accept_count"] = True
    return _act(svc, "confirm", **fields)


@floor.post("/proposals/{proposal_id}/reject")
def reject(svc: Service, proposal_id: int, body: Reject) -> dict[str, Any]:
    fields: dict[str, Any] = {"proposal": proposal_id, "by": body.by}
    if body.reason:
        fields["reason"] = body.reason
    if body.chips is not None:
        fields["chips"] = body.chips
    return _act(svc, "reject", **fields)


@floor.post("/hand-for-hand")
def hand_for_hand(svc: Service, body: HandForHand) -> dict[str, Any]:
    """Start (`on`: true) or end hand-for-hand (RP-8)."""
    return _act(svc, "hand_for_hand", on=body.on, by=body.by)


@floor.post("/operations/{op_id}/retry")
def retry(svc: Service, op_id: int, body: By) -> dict[str, Any]:
    return _act(svc, "retry", op=op_id, by=body.by)


# ------------------------------------------------------------------ pages


def _page(request: Request, which: str) -> HTMLResponse:
    svc: TournamentService | None = getattr(request.app.state, "tournament", None)
    room = request.app.state.ctx.config.name
    html = pages.page(which, room, svc.structure.name if svc else None)
    return HTMLResponse(html, headers={"Cache-Control": "no-store"})


@router.get("/tournament", response_class=HTMLResponse, include_in_schema=False)
@router.get("/tournament/floor", response_class=HTMLResponse, include_in_schema=False)
def floor_page(request: Request) -> HTMLResponse:
    """The floor's page: proposals to confirm, clock controls, tables, registrations, log."""
    return _page(request, "floor")


@router.get("/tournament/clock", response_class=HTMLResponse, include_in_schema=False)
def clock_page(request: Request) -> HTMLResponse:
    """The clock for the room's screens."""
    return _page(request, "clock")


@router.get("/tournament/leaderboard", response_class=HTMLResponse, include_in_schema=False)
def leaderboard_page(request: Request) -> HTMLResponse:
    """Live chip counts for the room's screens."""
    return _page(request, "leaderboard")


def install(app: FastAPI, svc: TournamentService | None) -> None:
    """Add the tournament's routes, pages and assets to the room server's `app`."""
    app.state.tournament = svc
    app.include_router(router)
    app.include_router(floor)
    app.mount("/tournament/static", StaticFiles(directory=STATIC), name="tournament-static")


def attach(
    app: FastAPI, settings: TournamentSettings | None, ingest: Ingest | None
) -> TournamentService | None:
    """The room server's hook: the tournament of [tournament] (`settings`; started), its
    routes and pages on `app` (without [tournament]: pages that say so, and 404 from the
    API)."""
    svc = TournamentService(settings, ingest) if settings else None
    install(app, svc)
    if svc is not None:
        svc.start()
    return svc
