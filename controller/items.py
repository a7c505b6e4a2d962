"""What the table loop takes from its queue besides the engine's inputs."""

from __future__ import annotations

import queue
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.holeresend import HoleRequest
from controller.resend import ResendRequest
from kernel.inputs import Command, Event


@dataclass(frozen=True, slots=True)
class DeviceAlert:
    """A fault reported by a driver (not an engine input, so not journaled)."""

    kind: str
    message: str
    details: dict[str, Any]
    severity: str = "warning"


@dataclass(frozen=True, slots=True)
class FromRoom:
    """A room command as it came from the broker, with its PUBACK for after the commit."""

    item: Command | RefusedCommand | ResendRequest
    ack: Callable[[], None]


@dataclass(frozen=True, slots=True)
class RefusedCommand:
    """A malformed (or rate-limited) room command: answered on `replies`, never journaled
    nor applied; `alert` the alert raised with it (None: none, its reply only)."""

    name: str
    request_id: str | None
    error: str
    alert: str | None = "command_malformed"
    details: tuple[tuple[str, Any], ...] = ()


class Wake:
    """Queued when the clock jumped (a virtual clock's step): the loop looks at its timers."""


WAKE = Wake()


class ReleaseDue:
    """The loop's own item when a hole-card key falls due (controller/seal.py): the keys
    due are released, journaled first; nothing goes to the engine."""


RELEASE = ReleaseDue()


Own = DeviceAlert | RefusedCommand | ResendRequest | HoleRequest | ReleaseDue
"""The loop's items that are not engine inputs (answered by the daemon's concerns)."""

Item = Event | DeviceAlert | RefusedCommand | ResendRequest | FromRoom | HoleRequest | ReleaseDue
"""What the loop takes from the queue (None there asks it to stop; WAKE to look at the
clock again)."""


class Inbox(queue.Queue["Item | Wake | None"]):
    """The loop's queue; it counts what was put on it (the sim's conductor waits on it)."""

    def __init__(self) -> None:
        super().__init__()
        self.puts = 0

    def _put(self, item: Item | Wake | None) -> None:  # called under the queue's lock
        super()._put(item)
        if not isinstance(item, Wake):
            self.puts += 1


def made(item: Item) -> float:
    """When a queued input was made (the time it carries)."""
    inner = item.item if isinstance(item, FromRoom) else item
    t = getattr(inner, "t", None)
    return float(t) if isinstance(t, int | float) else 0.0
