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
    live = _LiveClient(ingest, slots, client, full, is_disconnected)
    return LiveResponse(live.stream(), slots.limits.write_timeout, live.cut, live.end)


class _LiveClient:
    """One client's stream: the batches the ingest commits, queued on the event loop."""

    def __init__(
        self, ingest: Ingest, slots: LiveSlots, client: str, full: bool, is_disconnected: Any
    ) -> None:
        self.ingest = ingest
        self.slots = slots
        self.client = client
        self.full = full
        self.is_disconnected = is_disconnected
        self.loop = asyncio.get_running_loop()
        self.inbox: asyncio.Queue[Any] = asyncio.Queue()
        self.waiting = False
        self.was_cut = False
        self.ended = False

    def cut(self) -> None:
        if not self.was_cut:
            self.was_cut = True
            self.slots.cut += 1
            log.warning("live stream of %s cut: it stopped reading", self.client)

    def push(self, batch: Committed) -> None:  # on the event loop
        if self.was_cut:
            return
        if self.full:
            if self.inbox.qsize() >= self.slots.limits.backlog:
                self.cut()
                self.inbox.put_nowait(_CUT)
                return
            self.inbox.put_nowait(batch)
        elif not self.waiting:  # a notice: one waiting is enough
            self.waiting = True
            self.inbox.put_nowait(batch)

    def listener(self, batch: Committed) -> None:  # on the ingest's writer thread
        self.loop.call_soon_threadsafe(self.push, batch)

    async def stream(self) -> AsyncIterator[bytes]:
        self.ingest.listeners.append(self.listener)
        try:
            yield b": connected\n\n"
            while True:
                try:
                    batch = await asyncio.wait_for(self.inbox.get(), timeout=15)
                except TimeoutError:
                    if await self.is_disconnected():
                        return
                    yield b": keepalive\n\n"
                    continue
                if batch is _CUT:
                    return
                self.waiting = False
                body = json.dumps(_body(batch, self.full)).encode()
                yield b"event: batch\ndata: " + body + b"\n\n"
        finally:
            self.end()

    def end(self) -> None:
        if self.listener in self.ingest.listeners:
            self.ingest.listeners.remove(self.listener)
        if not self.ended:
            self.ended = True
            self.slots.give(self.client)


def _body(batch: Committed, full: bool) -> dict[str, Any]:
    if not full:
        return {"committed_at": batch.committed_at}
    return {
        "committed_at": batch.committed_at,
        "events": batch.events,
        "messages": [{"table": t, "topic": topic, "payload": p} for t, topic, p in batch.messages],
    }
