"""Badge reader interface: badges arriving and leaving, the reader going away and coming back."""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

log = logging.getLogger(__name__)

BadgeCallback = Callable[[str, bool], None]
"""`on_badge(uid, removed)`: a badge arrived (removed=False) or left (removed=True)."""

DeviceCallback = Callable[[str], None]
"""`on_device(state)`: the reader went "offline" or came back "online"."""

AlertCallback = Callable[[str, str, dict[str, Any]], None]
"""`on_alert(kind, message, details)`: something the floor should know (a failed read...)."""

OFFLINE, ONLINE = "offline", "online"

class BadgeReader(ABC):
    """A staff badge reader: reports badges arriving and leaving, and the reader itself.

    Callbacks may run on a driver thread. A badge that stays on the reader is one arrival;
    its removal is reported once. The reader is assumed online when started: `on_device`
    reports only changes ("offline" when it vanishes, "online" when it is back). A badge
    that was on a reader when the reader went offline is reported removed first, and read
    again (a new arrival) when the reader is back.
    """

    name: ClassVar[str]

    def __init__(
        self,
        *,
        on_badge: BadgeCallback,
        on_device: DeviceCallback,
        on_alert: AlertCallback,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._on_badge = on_badge
        self._on_device = on_device
        self._on_alert = on_alert
        self.clock = clock
        self._state_lock = threading.Lock()
        self.state = ONLINE
        self.current: str | None = None  # uid of the badge on the reader, as reported

    @abstractmethod
    def start(self) -> None:
        """Start watching the reader (returns at once; events come from a thread)."""

    @abstractmethod
    def stop(self) -> None:
        """Stop watching and release the reader; idempotent."""

    # -- for backends: report through the callbacks, never letting a callback kill them ----

    def _arrived(self, uid: str) -> None:
        """A badge is on the reader: report it unless it is the one already reported."""
        uid = uid.upper()
        with self._state_lock:
            if self.current == uid:
                return
            previous, self.current = self.current, uid
        if previous is not None:
            self._call(self._on_badge, previous, True)
        self._call(self._on_badge, uid, False)

    def _left(self) -> None:
        """The reader is empty: report the removal of the badge that was on it, if any."""
        with self._state_lock:
            previous, self.current = self.current, None
        if previous is not None:
            self._call(self._on_badge, previous, True)

    def _device(self, state: str) -> None:
        """The reader went offline / came back; only changes are reported."""
        if state == OFFLINE:
            self._left()
        with self._state_lock:
            if self.state == state:
                return
            self.state = state
        log.info("%s badge reader %s", self.name, state)
        self._call(self._on_device, state)

    def _alert(self, kind: str, message: str, details: dict[str, Any]) -> None:
        log.warning("%s", message)
        self._call(self._on_alert, kind, message, details)

    def _call(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            callback(*args)
        except Exception:
            log.exception("badge reader callback %r failed", callback)
