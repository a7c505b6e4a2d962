"""Equities computed off the web loop, one at a time, and remembered by situation.

The service asks for a situation's equity twice: as soon as its cards arrive (so the
result is ready long before the secure delay lets the cards on air) and when the delayed
view shows that moment. The second request finds the first's result here. The results
are kept in memory only and are handed out only for a situation the caller already
holds, so nothing leaves this cache earlier than the cards it was computed from.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict, deque
from collections.abc import Callable

from broadcast.equity import Equity, Situation, compute
from kernel.errors import TableError

log = logging.getLogger(__name__)

Ready = Callable[[Situation], None]


class EquityWorker:
    """One background thread computing equities; an LRU cache of the results."""

    def __init__(
        self,
        on_ready: Ready | None = None,
        *,
        keep: int = 4096,
        compute_fn: Callable[[Situation], Equity] = compute,
    ) -> None:
        self._on_ready = on_ready
        self._keep = keep
        self._compute = compute_fn
        self._results: OrderedDict[Situation, Equity | None] = OrderedDict()
        self._queue: deque[Situation] = deque()
        self._queued: set[Situation] = set()
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="tv-equity", daemon=True)
        self.computed = 0
        self.failed = 0

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def stop(self) -> None:
        """Stop after the equity in progress."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(10)

    def get(self, situation: Situation, *, urgent: bool = True) -> Equity | None:
        """The equity if known; else None and it is queued (first in line if `urgent`)."""
        with self._cond:
            if situation in self._results:
                self._results.move_to_end(situation)
                return self._results[situation]
            if situation in self._queued:
                if urgent and situation in self._queue and self._queue[0] != situation:
                    self._queue.remove(situation)
                    self._queue.appendleft(situation)
                return None
            self._queued.add(situation)
            (self._queue.appendleft if urgent else self._queue.append)(situation)
            self._cond.notify_all()
            return None

    def prefetch(self, situation: Situation) -> None:
        """Queue a situation behind the urgent ones (its cards just arrived)."""
        self.get(situation, urgent=False)

    def wait(self, situation: Situation, timeout: float = 10.0) -> Equity | None:
        """Block until the equity of `situation` is known (tests, benchmarks)."""
        self.get(situation)
        with self._cond:
            self._cond.wait_for(lambda: situation in self._results, timeout)
            return self._results.get(situation)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stopping or bool(self._queue))
                if self._stopping:
                    return
                situation = self._queue.popleft()
            result: Equity | None
            try:
                result = self._compute(situation)
                self.computed += 1
            except (TableError, ValueError, MemoryError) as exc:
                log.warning("equity not computed: %s", exc)
                result = None
                self.failed += 1
            with self._cond:
                self._queued.discard(situation)
                self._results[situation] = result
                while len(self._results) > self._keep:
                    self._results.popitem(last=False)
                self._cond.notify_all()
            if self._on_ready is not None:
                self._on_ready(situation)
