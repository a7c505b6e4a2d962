"""The states a power cut can leave a directory in, from a trace of what a process did to it.

After ALICE ("All File Systems Are Not Created Equal", OSDI 2014): the recorded file
operations (tests/strace_log.py `file_ops`) are replayed on a model of the file system in
which only what was synced is certain. At a crash point (a position in the trace: the power
went just before that line):

- a file's data is durable up to its last completed fsync/fdatasync (what was written
  before that call began); writes after it may have reached the disk or not;
- a name (create, rename, unlink, mkdir) is durable once its directory was fsync'd after
  it; later ones may have reached the disk or not. The file system is *not* trusted to
  persist a new file's name when the file alone is synced (POSIX does not promise it).

Two persistence models bound what "may have reached the disk" means:

- `ordered` (ext4 `data=ordered`, the Raspberry Pi OS default, and most journaling file
  systems for one file): unsynced writes reach the disk as a prefix, the last one possibly
  torn anywhere; unsynced directory operations as a prefix, in order;
- `reordered` (also `data=writeback`, XFS, and disks that reorder): any subset of the
  unsynced writes (the missing ones read as zeros when a later one made the file longer),
  and any subset of the unsynced directory operations.

The enumeration is bounded (see `states_at`): every prefix of the directory operations;
for data, the synced state, everything, and a few prefixes and torn writes of the file with
the most unsynced writes; in the reordered model, each unsynced write missing alone and, for
up to four unsynced directory operations, every subset.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.strace_log import FileOp, FileOps

ORDERED = "ordered"
REORDERED = "reordered"
#: At most this many prefixes / torn writes of the busiest file per crash point.
DATA_VARIANTS = 6
#: Directory operations up to this many pending: every subset (reordered model).
SUBSETS_UP_TO = 4


@dataclass(frozen=True, slots=True)
class CrashState:
    """What the directory holds after a power cut at `point` (a trace position)."""

    point: int
    model: str
    label: str
    files: dict[str, bytes]  # path relative to the root -> content
    dirs: frozenset[str]  # relative directories (the root itself not listed)

    def digest(self) -> str:
        """Same digest, same contents (names and bytes)."""
        h = hashlib.sha256()
        for name in sorted(self.dirs):
            h.update(b"d" + name.encode() + b"\0")
        for name, data in sorted(self.files.items()):
            h.update(b"f" + name.encode() + b"\0" + hashlib.sha256(data).digest())
        return h.hexdigest()

    def materialize(self, root: Path) -> None:
        """Write the state into `root` (an empty directory)."""
        for name in sorted(self.dirs, key=len):
            (root / name).mkdir(parents=True, exist_ok=True)
        for name, data in self.files.items():
            (root / name).write_bytes(data)


@dataclass
class _Inode:
    """One file's data operations, and its content after each of them."""

    ops: list[FileOp] = field(default_factory=list)
    entries: list[int] = field(default_factory=list)  # entry position of each op
    contents: list[bytes] = field(default_factory=list)  # after ops[i]


class Model:
    """The traced file operations under a root, ready to give crash states."""

    def __init__(self, fs: FileOps) -> None:
        self.root = fs.root.rstrip("/")
        self.ops = fs.ops
        self.inodes: dict[int, _Inode] = {}
        self.namespace: list[FileOp] = []
        self.syncs: list[FileOp] = []
        self.dirsyncs: list[FileOp] = []
        for op in fs.ops:
            if op.kind in ("write", "truncate"):
                inode = self.inodes.setdefault(op.inode, _Inode())
                before = inode.contents[-1] if inode.contents else b""
                inode.ops.append(op)
                inode.entries.append(op.call.entry)
                inode.contents.append(_apply(before, op))
            elif op.kind == "sync":
                self.syncs.append(op)
            elif op.kind == "dirsync":
                self.dirsyncs.append(op)
            else:
                self.namespace.append(op)
        self.end = max((op.call.exit for op in fs.ops), default=0) + 1

    # -- positions worth cutting the power at -------------------------------------------

    def sync_points(self) -> list[int]:
        """Just before each sync returns (the power fails while it runs), and the end."""
        return sorted({op.call.exit for op in self.syncs + self.dirsyncs} | {self.end})

    def namespace_points(self) -> list[int]:
        """Around each directory operation: before it, and right after it."""
        points: set[int] = set()
        for op in self.namespace:
            points |= {op.call.entry, op.call.exit + 1}
        return sorted(points)

    # -- what is durable at a point ------------------------------------------------------

    def _relative(self, path: str) -> str:
        return os.path.relpath(path, self.root)

    def _parent(self, path: str) -> str:
        return os.path.dirname(path)

    def _dir_synced(self, directory: str, before: int, point: int) -> bool:
        """A sync of `directory` began after `before` (an op's exit) and returned before
        `point`."""
        return any(
            s.path == directory and s.call.entry > before and s.call.exit < point
            for s in self.dirsyncs
        )

    def _content(self, inode: int, point: int) -> tuple[bytes, list[FileOp]]:
        """(durable content, pending data operations) of an inode at `point`."""
        data = self.inodes.get(inode)
        if data is None:
            return b"", []
        done = [s for s in self.syncs if s.inode == inode and s.call.exit < point]
        # what was written before the last completed sync began is durable
        if done:
            started = max(s.call.entry for s in done)
            durable_count = bisect.bisect_left(data.entries, started)
            # a write still running when the sync began is not certainly in it
            while durable_count and data.ops[durable_count - 1].call.exit > started:
                durable_count -= 1
        else:
            durable_count = 0
        issued = bisect.bisect_left(data.entries, point)
        durable = data.contents[durable_count - 1] if durable_count else b""
        return durable, data.ops[durable_count:issued]

    def states_at(self, point: int, model: str = ORDERED) -> Iterator[CrashState]:
        """The crash states at `point` under a persistence model (bounded, see the module)."""
        issued = [op for op in self.namespace if op.call.entry < point]
        durable_ns = [
            op
            for op in issued
            if op.call.exit < point
            and self._dir_synced(self._parent(op.path), op.call.exit, point)
            and (
                op.kind != "rename"
                or self._dir_synced(self._parent(op.target), op.call.exit, point)
            )
        ]
        pending_ns = [op for op in issued if op not in durable_ns]
        # every directory operation covered by a later sync of its directory is durable, and
        # so (in a file system that keeps them in order) every one before it
        inodes = sorted({op.inode for op in self.ops if op.inode > 0 and op.call.entry < point})
        durable_data: dict[int, bytes] = {}
        pending_data: dict[int, list[FileOp]] = {}
        for inode in inodes:
            durable_data[inode], pending_data[inode] = self._content(inode, point)
        every = {i: _apply_all(durable_data[i], pending_data[i]) for i in inodes}

        def state(label: str, ns: Sequence[FileOp], data: dict[int, bytes]) -> CrashState:
            names, dirs = _namespace(self.root, [*durable_ns, *ns])
            files = {self._relative(path): data.get(inode, b"") for path, inode in names.items()}
            return CrashState(
                point, model, label, files, frozenset(self._relative(d) for d in dirs)
            )

        yield state("synced", [], durable_data)
        yield state("everything", pending_ns, every)
        for k in range(1, len(pending_ns)):
            yield state(f"names-prefix-{k}", pending_ns[:k], durable_data)
            yield state(f"names-prefix-{k}+data", pending_ns[:k], every)
        busiest = max(inodes, key=lambda i: len(pending_data[i]), default=None)
        if busiest is not None and pending_data[busiest]:
            writes = pending_data[busiest]
            for k in _spread(range(len(writes)), DATA_VARIANTS):
                base = _apply_all(durable_data[busiest], writes[:k])
                yield state(f"data-prefix-{k}/{len(writes)}", pending_ns, {**every, busiest: base})
                op = writes[k]
                if op.kind == "write" and len(op.data) > 1:
                    torn = _apply(base, op, cut=len(op.data) // 2)
                    yield state(
                        f"data-torn-{k}/{len(writes)}", pending_ns, {**every, busiest: torn}
                    )
            if model == REORDERED and len(writes) > 1:
                for k in _spread(range(len(writes) - 1), DATA_VARIANTS):
                    holed = _apply_all(durable_data[busiest], writes, zeroed=k)
                    yield state(
                        f"data-hole-{k}/{len(writes)}", pending_ns, {**every, busiest: holed}
                    )
        if model == REORDERED and len(pending_ns) > 1:
            if len(pending_ns) <= SUBSETS_UP_TO:
                subsets: Iterable[tuple[int, ...]] = (
                    chosen
                    for r in range(1, len(pending_ns))
                    for chosen in itertools.combinations(range(len(pending_ns)), r)
                )
            else:
                n = len(pending_ns)
                subsets = [tuple(j for j in range(n) if j != i) for i in range(n)]
            for chosen in subsets:
                if list(chosen) == list(range(len(chosen))):
                    continue  # a prefix: the ordered model has it
                ns = [pending_ns[j] for j in chosen]
                label = "names-" + "+".join(map(str, chosen))
                yield state(label, ns, durable_data)
                yield state(label + "+data", ns, every)


def _spread(values: range, most: int) -> list[int]:
    """At most `most` values of a range, spread over it (first and last included)."""
    items = list(values)
    if len(items) <= most:
        return items
    step = (len(items) - 1) / (most - 1)
    return sorted({items[round(i * step)] for i in range(most)})


def _apply(data: bytes, op: FileOp, cut: int | None = None) -> bytes:
    if op.kind == "truncate":
        return data[: op.size] + b"\0" * max(0, op.size - len(data))
    chunk = op.data if cut is None else op.data[:cut]
    if op.offset > len(data):
        data += b"\0" * (op.offset - len(data))
    return data[: op.offset] + chunk + data[op.offset + len(chunk) :]


def _apply_all(data: bytes, ops: Sequence[FileOp], zeroed: int | None = None) -> bytes:
    for i, op in enumerate(ops):
        if i == zeroed and op.kind == "write":
            op = FileOp(
                "write", op.call, inode=op.inode, offset=op.offset, data=b"\0" * len(op.data)
            )
        data = _apply(data, op)
    return data


def _namespace(root: str, ops: Iterable[FileOp]) -> tuple[dict[str, int], set[str]]:
    """Names -> inodes and directories after applying directory operations in order (a name
    in a directory that does not exist is not there; nor is a rename of a missing name)."""
    names: dict[str, int] = {}
    dirs: set[str] = set()
    for op in sorted(ops, key=lambda o: o.call.entry):
        if op.kind == "mkdir":
            dirs.add(op.path)
        elif op.kind == "create":
            names[op.path] = op.inode
        elif op.kind == "rename":
            inode = names.pop(op.path, None)
            if inode is not None:
                names[op.target] = inode
        elif op.kind == "unlink":
            names.pop(op.path, None)
    visible = {
        path: inode
        for path, inode in names.items()
        if os.path.dirname(path) == root or os.path.dirname(path) in dirs
    }
    return visible, {d for d in dirs if os.path.dirname(d) == root or os.path.dirname(d) in dirs}
