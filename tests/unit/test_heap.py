"""The daemon's C heap settings (controller/heap.py), observed through glibc's own counters.

Each check runs in a fresh interpreter: the settings are process-wide, and the point is
what a 1 MiB buffer does after an earlier one was freed, which depends on the history.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from controller import heap

pytestmark = pytest.mark.skipif(not heap.available(), reason="glibc only")

#: Allocates a 1 MiB buffer, frees it, allocates another one and reports, from glibc's
#: mallinfo2, whether that second buffer has a mapping of its own (`hblks` counts them).
PROBE = textwrap.dedent(
    """
    import ctypes, json, sys
    from controller import heap

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = MallInfo2
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    if sys.argv[1] == "settled":
        assert heap.settle()
    size = 1 << 20
    first = libc.malloc(size)
    libc.free(first)
    before = libc.mallinfo2().hblks
    second = libc.malloc(size)
    mapped = libc.mallinfo2().hblks - before
    libc.free(second)
    print(json.dumps({"second_mapped": mapped, "trimmed": heap.trim()}))
    """
)


def probe(mode: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True
    ).stdout
    result: dict[str, object] = json.loads(out)
    return result


def test_settled_heap_maps_every_large_buffer_apart() -> None:
    # glibc alone raises its threshold after the first buffer is freed: the second one
    # comes from the heap (what grew the daemon's memory in steps over a day of play)
    assert probe("default")["second_mapped"] == 0
    # settled, the second one has its own mapping too, returned to the system when freed
    assert probe("settled")["second_mapped"] == 1


def test_trim_returns_free_heap_pages() -> None:
    code = textwrap.dedent(
        """
        import json
        from controller import heap
        blocks = [bytearray(4000) for _ in range(20000)]  # ~80 MB of small heap blocks
        keep = blocks[-1]
        del blocks  # freed, but the last one sits at the top: the heap cannot shrink
        print(json.dumps({"trimmed": heap.trim(), "again": heap.trim(), "kept": len(keep)}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    assert result["trimmed"] is True  # pages in the middle of the heap went back
    assert result["kept"] == 4000
