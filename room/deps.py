"""What every room route depends on: the context (configuration, store, ingest) and the token."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Annotated, cast

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from room.config import RoomConfig
from room.ingest import Ingest
from room.privacy import BadgeIds, PublicStore, has_token
from room.store import Store


@dataclass(slots=True)
class RoomContext:
    """What the routes use: the configuration, the store, the ingest (None: read-only)."""

    config: RoomConfig
    store: Store
    ingest: Ingest | None = None


def context(request: Request) -> RoomContext:
    """The application's context (set by `room.api.create_app`): as it is for a request
    with the bearer token; otherwise its public view, whose store serves badge uids only as
    keyed hashes (room/privacy.py)."""
    ctx: RoomContext = request.app.state.ctx
    if has_token(request, ctx.config.http.token):
        return ctx
    cached: tuple[RoomContext, RoomContext] | None = getattr(request.app.state, "public_ctx", None)
    if cached is None or cached[0] is not ctx:
        view = cast(Store, PublicStore(ctx.store, BadgeIds(ctx.config.http.token)))
        cached = (ctx, RoomContext(ctx.config, view, ctx.ingest))
        request.app.state.public_ctx = cached
    return cached[1]


Ctx = Annotated[RoomContext, Depends(context)]
_bearer = HTTPBearer(auto_error=False)


def require_token(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """Commands (and acknowledging an alert) need the bearer token of [http] token_file."""
    token = context(request).config.http.token
    if token is None:
        raise HTTPException(403, "commands are disabled: set [http] token_file on the room server")
    if credentials is None or not secrets.compare_digest(
        credentials.credentials.encode(), token.encode()
    ):
        raise HTTPException(
            401, "a valid bearer token is required", headers={"WWW-Authenticate": "Bearer"}
        )
