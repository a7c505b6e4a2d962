"""Alert rate limiting: at most one alert of a kind per interval, with a count of the rest."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

AlertSink = Callable[[str, str, dict[str, object]], None]


@dataclass(slots=True)
class _Pending:
    message: str
    details: dict[str, object]
    count: int = 0


@dataclass(slots=True)
class AlertLimiter:
    """Passes the first alert of a key at once, then folds repeats into one alert per interval.

    Every alert carries `count`: how many occurrences it stands for. Folded repeats go out
    when `flush` (or the next `offer`) finds the interval elapsed, so none is lost.
    """

    sink: AlertSink
    interval: float = 1.0
    _last: dict[str, float] = field(default_factory=dict)
    _pending: dict[str, tuple[str, _Pending]] = field(default_factory=dict)

    def offer(
        self,
        kind: str,
        message: str,
        details: dict[str, object],
        now: float,
        *,
        key: str = "",
        count: int = 1,
    ) -> None:
        """Raise an alert (kind, message, details), or fold it if `kind+key` alerted recently.

        `count` is how many occurrences this offer stands for (e.g. 3 CRC errors in one read).
        """
        slot = f"{kind}/{key}"
        pending = self._pending.get(slot)
        if pending is None:
            pending = (kind, _Pending(message, details))
            self._pending[slot] = pending
        pending[1].message, pending[1].details = message, details
        pending[1].count += count
        self._release(slot, now)

    def flush(self, now: float) -> None:
        """Send the folded repeats whose interval has elapsed."""
        for slot in list(self._pending):
            self._release(slot, now)

    def _release(self, slot: str, now: float) -> None:
        last = self._last.get(slot)
        if last is not None and now - last < self.interval:
            return
        kind, pending = self._pending.pop(slot)
        self._last[slot] = now
        self.sink(kind, pending.message, {**pending.details, "count": pending.count})
