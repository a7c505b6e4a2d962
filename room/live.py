"""`/api/live`: the room's live stream (Server-Sent Events), bounded.

With the bearer token: one `batch` event per committed batch, its new events and messages
(what the room's own software follows). Without it: one `batch` event whose data is only
`committed_at`, at most one waiting (the monitor's pages reload their public fragments on
it): no payload, so nothing a table published leaves the server without the token.

Either way a client address holds at most `LiveLimits.per_client` streams and the server
`LiveLimits.total`; a stream that falls `backlog` batches behind, or whose client has not
taken a write for `write_timeout` seconds (it stopped reading), is cut and counted.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.responses import StreamingResponse
from starlette.types import Send

from room.ingest import Committed, Ingest
from room.limits import LiveSlots

log = logging.getLogger("tablectl.room.live")
_CUT = object()


class LiveResponse(StreamingResponse):
    """A streaming response whose every write must be taken within `write_timeout`: a client
    that stops reading is cut (the connection closed) instead of holding the stream."""

    def __init__(
        self,
        content: AsyncIterator[bytes],
        write_timeout: float,
        on_cut: Callable[[], None],
        on_end: Callable[[], None],
    ) -> None:
        super().__init__(content, media_type="text/event-stream")
        self.write_timeout = write_timeout
        self.on_cut = on_cut
        self.on_end = on_end
        self.headers["cache-control"] = "no-store"

    async def stream_response(self, send: Send) -> None:
        start = {"type": "http.response.start", "status": self.status_code}
        try:
            await asyncio.wait_for(send(start | {"headers": self.raw_headers}), self.write_timeout)
            async for chunk in self.body_iterator:
                body = {"type": "http.response.body", "body": chunk, "more_body": True}
                await asyncio.wait_for(send(body), self.write_timeout)
            end = {"type": "http.response.body", "body": b"", "more_body": False}
            await asyncio.wait_for(send(end), self.write_timeout)
        except TimeoutError:
            self.on_cut()  # the server closes the connection of an unfinished response
        finally:
            self.on_end()


def live_response(
    ingest: Ingest, slots: LiveSlots, client: str, full: bool, is_disconnected: Any
) -> LiveResponse:
    """The stream of one client (its slot already taken: given back when it ends)."""
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[Any] = asyncio.Queue()
    limits = slots.limits
    state = {"waiting": False, "cut": False, "ended": False}

    def cut() -> None:
        if not state["cut"]:
            state["cut"] = True
            slots.cut += 1
            log.warning("live stream of %s cut: it stopped reading", client)

    def push(batch: Committed) -> None:  # on the event loop
        if state["cut"]:
            return
        if full:
            if inbox.qsize() >= limits.backlog:
                cut()
                inbox.put_nowait(_CUT)
                return
            inbox.put_nowait(batch)
        elif not state["waiting"]:  # a notice: one waiting is enough
            state["waiting"] = True
            inbox.put_nowait(batch)

    def listener(batch: Committed) -> None:  # on the ingest's writer thread
        loop.call_soon_threadsafe(push, batch)

    async def stream() -> AsyncIterator[bytes]:
        ingest.listeners.append(listener)
        try:
            yield b": connected\n\n"
            while True:
                try:
                    batch = await asyncio.wait_for(inbox.get(), timeout=15)
                except TimeoutError:
                    if await is_disconnected():
                        return
                    yield b": keepalive\n\n"
                    continue
                if batch is _CUT:
                    return
                state["waiting"] = False
                yield b"event: batch\ndata: " + json.dumps(_body(batch, full)).encode() + b"\n\n"
        finally:
            end()

    def end() -> None:
        if listener in ingest.listeners:
            ingest.listeners.remove(listener)
        if not state["ended"]:
            state["ended"] = True
            slots.give(client)

    return LiveResponse(stream(), limits.write_timeout, cut, end)


def _body(batch: Committed, full: bool) -> dict[str, Any]:
    if not full:
        return {"committed_at": batch.committed_at}
    return {
        "committed_at": batch.committed_at,
        "events": batch.events,
        "messages": [{"table": t, "topic": topic, "payload": p} for t, topic, p in batch.messages],
    }
