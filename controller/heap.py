"""The C heap of a daemon that runs for days: large buffers mapped apart, free pages returned.

glibc serves an allocation of at least the mmap threshold (128 KiB) from its own mapping,
returned to the system on free, but raises that threshold to the size of every such block
freed (up to 32 MiB): after the first 1 MiB buffer is freed (a journal segment gzipped at
a rotation, a burst of broker traffic), the next ones come from the heap, and one small
long-lived allocation made above them keeps the heap from shrinking. Over a day of play
resident memory then rises in steps of a megabyte or two and never comes down.

`settle()` fixes the threshold (which turns the raising off), and `trim()` hands the free
pages inside the heap back to the system (the daemon calls it once every hand is over, and
after a journal rotation). Both are no-ops where the C library is not glibc.

`trim()` reaches only what glibc holds. Python's own small-object allocator (pymalloc)
keeps its 1 MiB arenas while a single object in one is alive, so the pages a hand used
and freed stay resident and the high-water mark creeps up over a day. The service
therefore runs with `PYTHONMALLOC=malloc` (systemd/tablectl@.service, scripts/sim.sh):
every Python object then comes from glibc, and the trim between hands returns what a
hand freed. `python_allocator()` says which one this process uses.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
from typing import Any

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
#: glibc's default: a fixed value turns its dynamic raising off.
MMAP_THRESHOLD = 128 * 1024


def _glibc() -> Any | None:
    """glibc's functions, or None (another C library, or none found)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return None
    if not all(hasattr(libc, f) for f in ("gnu_get_libc_version", "mallopt", "malloc_trim")):
        return None
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.mallopt.restype = ctypes.c_int
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    libc.malloc_trim.restype = ctypes.c_int
    return libc


_LIBC = _glibc()


def available() -> bool:
    """The C library is glibc, so `settle` and `trim` act."""
    return _LIBC is not None


def settle(threshold: int = MMAP_THRESHOLD) -> bool:
    """Serve every allocation of `threshold` bytes or more from its own mapping, always
    (glibc's dynamic raising off); True if it took effect."""
    if _LIBC is None:
        return False
    ok = bool(_LIBC.mallopt(M_MMAP_THRESHOLD, threshold))
    if not ok:
        log.warning("mallopt(M_MMAP_THRESHOLD, %d) refused", threshold)
    return ok


def trim() -> bool:
    """Return the heap's free pages to the system; True if any were returned."""
    if _LIBC is None:
        return False
    return bool(_LIBC.malloc_trim(0))


def python_allocator() -> str:
    """The allocator of this process's Python objects, as the interpreter chose it at start:
    "pymalloc" (Python's default: arenas `trim` cannot reach) or "malloc" (the C library's
    heap, `PYTHONMALLOC=malloc`: what `trim` can return). pymalloc counts the blocks it
    holds; with any other allocator the count is 0."""
    return "pymalloc" if sys.getallocatedblocks() > 0 else "malloc"
