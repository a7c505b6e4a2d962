"""The reorder window: the table's inputs applied in the order they were made."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(order=True, slots=True)
class _Held(Generic[T]):
    made: float  # trace time: the order
    order: int  # ties: the order of arrival
    due: float = field(compare=False)  # on the window's clock: when it may go
    item: T = field(compare=False)


class ReorderWindow(Generic[T]):
    """Holds each input until `window` seconds after it was made, then lets it go in the
    order the inputs were made (ties: the order they arrived).

    Every source stamps its inputs with the time they were made (a reader board's clock
    mapped to the host's, a GPIO edge at the interrupt, a badge when read, a room command
    when received), but the sources reach the loop through their own threads, serial
    links and queues: under load one of them can lag another by tens of milliseconds.
    Whatever a source delivers at most `window` late still takes its place among the
    others; later than that it is applied when it comes, dated no earlier than what was
    applied before it (the loop's rule).

    The window waits on `clock`: the machine's monotonic clock for a real table (so a
    test's frozen wall clock still lets inputs go), the virtual clock's trace time in
    `tablectl sim` (so simulated time stays deterministic). A source's inputs never
    overtake each other: each is dated no earlier than the one it delivered before.
    The loop thread alone uses a window (no lock).
    """

    def __init__(self, window: float, clock: Callable[[], float]) -> None:
        self.window = window
        self.clock = clock
        self._heap: list[_Held[T]] = []
        self._order = 0
        self._last: dict[str, tuple[float, float]] = {}  # source -> its latest (made, due)

    def __len__(self) -> int:
        return len(self._heap)

    def hold(self, item: T, source: str, made: float, age: float) -> None:
        """Hold `item`, made at `made` (trace time), `age` seconds ago."""
        due = self.clock() - max(0.0, age) + self.window
        last = self._last.get(source)
        if last is not None:
            made, due = max(made, last[0]), max(due, last[1])
        self._last[source] = (made, due)
        self._order += 1
        heapq.heappush(self._heap, _Held(made, self._order, due, item))

    def due(self) -> list[T]:
        """What has waited its window, in the order it was made."""
        out: list[T] = []
        now = self.clock()
        heap = self._heap
        while heap and heap[0].due <= now + 1e-9:
            out.append(heapq.heappop(heap).item)
        return out

    def next_release(self) -> float | None:
        """When (on the window's clock) the next input may go; None: none held."""
        return self._heap[0].due if self._heap else None

    def drain(self) -> list[T]:
        """Everything held, in the order it was made (the table is stopping)."""
        out = [held.item for held in sorted(self._heap)]
        self._heap.clear()
        return out
