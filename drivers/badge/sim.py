"""In-process simulated badge reader: `present(uid)` lays a badge on it, `remove()` lifts it."""

from __future__ import annotations

import threading
from typing import Any

from drivers.badge.base import OFFLINE, ONLINE, BadgeReader
from kernel.errors import DeviceError
from kernel.inputs import is_badge_uid


class SimBadgeReader(BadgeReader):
    """A badge reader that a simulator or test drives by hand; behaves like the real one.

    A badge stays on the reader until removed or replaced: presenting it again is not a
    new arrival; presenting another badge reports the first one's removal, then the new
    arrival. `unplug()` / `plug()` make the reader vanish and come back. Callbacks run on
    the caller's thread.
    """

    name = "sim"

    def __init__(self, *, reader: str | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.reader_name = reader or "Simulated badge reader"
        self._running = False
        self._plugged = True
        self._lay: str | None = None  # the badge lying on the (possibly unplugged) reader
        self._lock = threading.RLock()

    def start(self) -> None:
        with self._lock:
            self._running = True
            if self._plugged and self._lay is not None:
                self._arrived(self._lay)

    def stop(self) -> None:
        with self._lock:
            self._running = False

    @property
    def running(self) -> bool:
        """True between start() and stop()."""
        return self._running

    def present(self, uid: str) -> None:
        """Lay a badge on the reader (hex uid, either case)."""
        if not is_badge_uid(uid):
            raise DeviceError(f"sim badge reader: bad uid {uid!r} (2..40 hex digits, whole bytes)")
        with self._lock:
            self._lay = uid.upper()
            if self._running and self._plugged:
                self._arrived(self._lay)

    def remove(self) -> None:
        """Take the badge off the reader (nothing happens when there is none)."""
        with self._lock:
            self._lay = None
            if self._running and self._plugged:
                self._left()

    def tap(self, uid: str) -> None:
        """Present a badge and take it off again, as a dealer taps in."""
        with self._lock:
            self.present(uid)
            self.remove()

    def unplug(self) -> None:
        """The reader vanishes (USB pulled, pcscd gone): reported offline."""
        with self._lock:
            self._plugged = False
            if self._running:
                self._device(OFFLINE)

    def plug(self) -> None:
        """The reader is back: reported online, and a badge lying on it is read again."""
        with self._lock:
            self._plugged = True
            if self._running:
                self._device(ONLINE)
                if self._lay is not None:
                    self._arrived(self._lay)
