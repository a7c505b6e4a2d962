"""The daemon's C heap settings (controller/heap.py), observed through glibc's own counters.

Each check runs in a fresh interpreter: the settings are process-wide, and the point is
what a 1 MiB buffer does after an earlier one was freed, which depends on the history.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

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


#: Makes 400,000 small Python objects (over 100 MB), keeps one in 2,000 (a long-lived
#: object here and there, as a day of play leaves among what each hand frees), frees the
#: rest, trims, and reports resident memory (kB) at the peak and after the trim.
SMALL_OBJECTS = textwrap.dedent(
    """
    import json
    from pathlib import Path
    from controller import heap

    def anon_kb():
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1])

    base = anon_kb()
    objects = [{"chip": f"C{i:08d}", "n": i} for i in range(400_000)]
    keep = objects[::2000]
    peak = anon_kb()
    del objects
    heap.trim()
    print(json.dumps({"allocator": heap.python_allocator(), "kept": len(keep),
                      "grown": peak - base, "left": anon_kb() - base}))
    """
)


def small_objects(allocator: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONMALLOC": allocator}
    out = subprocess.run(
        [sys.executable, "-c", SMALL_OBJECTS], capture_output=True, text=True, check=True, env=env
    ).stdout
    result: dict[str, object] = json.loads(out)
    return result


def test_freed_python_objects_go_back_with_malloc_not_with_pymalloc() -> None:
    """Why the service runs with PYTHONMALLOC=malloc: the trim between hands returns what
    Python freed only when Python's objects live in glibc's heap."""
    glibc = small_objects("malloc")
    assert glibc["allocator"] == "malloc" and glibc["kept"] == 200
    grown, left = int(glibc["grown"]), int(glibc["left"])  # type: ignore[call-overload]
    assert grown > 30_000, glibc
    assert left < grown // 4, glibc  # nearly all of it went back
    pymalloc = small_objects("pymalloc")
    assert pymalloc["allocator"] == "pymalloc"
    grown, left = int(pymalloc["grown"]), int(pymalloc["left"])  # type: ignore[call-overload]
    assert left > grown // 2, pymalloc  # its arenas stay: one live object keeps each


@pytest.mark.parametrize(
    ("setting", "options", "allocator"),
    [
        (None, [], "pymalloc"),
        ("", [], "pymalloc"),
        ("malloc", [], "malloc"),
        ("malloc_debug", [], "malloc"),
        ("pymalloc", [], "pymalloc"),
        ("pymalloc_debug", [], "pymalloc"),
        ("debug", [], "pymalloc"),
        ("malloc", ["-E"], "pymalloc"),  # python -E: the variable is not read
    ],
)
def test_python_allocator_as_the_interpreter_chose_it(
    setting: str | None, options: list[str], allocator: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONMALLOC"}
    if setting is not None:
        env["PYTHONMALLOC"] = setting
    code = "from controller import heap; print(heap.python_allocator())"
    out = subprocess.run(
        [sys.executable, *options, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],  # -E drops PYTHONPATH: import from here
    ).stdout
    assert out.strip() == allocator
