"""Reading `strace -f -tt -T -yy -xx` output: system calls, MQTT publishes, file operations.

The tracer runs the real daemon; this module turns its log into what the durability tests
reason about: every system call with the position of its entry and of its exit in the log
(strace prints them in the order it saw them, so a call whose exit is printed before
another call's entry finished first), the MQTT PUBLISH packets written to the broker's
socket (identified by its `connect()`, decoded from the MQTT fixed header on), and the
file system operations under a directory (creates, writes, syncs, renames, unlinks).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: The system calls the durability tests need (`?`: not an error where the architecture
#: lacks it, e.g. open/rename/unlink/mkdir on arm64, which has only the *at forms).
TRACED = (
    "?open,openat,?creat,write,pwrite64,writev,sendto,sendmsg,fsync,fdatasync,"
    "sync_file_range,?rename,renameat,renameat2,?unlink,unlinkat,?mkdir,mkdirat,"
    "ftruncate,?truncate,close,connect"
)


def strace_command(log: Path) -> list[str]:
    """The tracer's command line: threads followed, wall-clock times and durations, paths
    and socket addresses shown with every descriptor, every string in hex and whole."""
    return [
        "strace", "-f", "-tt", "-T", "-yy", "-xx", "-s", "1048576",
        "-o", str(log), "-e", f"trace={TRACED}",
    ]  # fmt: skip


LINE = re.compile(r"^(?P<pid>\d+) +(?P<time>\d\d:\d\d:\d\d\.\d+) (?P<rest>.*)$")
RESUMED = re.compile(r"^<\.\.\. (?P<name>\w+) resumed>(?P<rest>.*)$")
CALL = re.compile(r"^(?P<name>\w+)\((?P<rest>.*)$")
RESULT = re.compile(r"^(?P<args>.*)\) += (?P<result>.*?)(?: <(?P<duration>[0-9.]+)>)?$")
UNFINISHED = " <unfinished ...>"


@dataclass(slots=True)
class Syscall:
    """One system call: where its entry and its exit are in the log, its arguments."""

    pid: int
    name: str
    args: list[str]
    result: str
    entry: int  # position of the line that shows the call starting
    exit: int  # position of the line that shows it returning
    time: float  # seconds since midnight, at entry
    duration: float

    @property
    def ret(self) -> int | None:
        """The integer result (None for `?` or an unparsable one); -1 on error."""
        match = re.match(r"^(-?\d+)", self.result)
        return int(match.group(1)) if match else None

    @property
    def end(self) -> float:
        """Seconds since midnight at return."""
        return self.time + self.duration


def _seconds(clock: str) -> float:
    h, m, s = clock.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def split_args(text: str) -> list[str]:
    """Top-level arguments of a call as strace prints them (strings are hex, so no quote
    holds a comma; `<...>` after a descriptor may hold `->` inside `[...]`)."""
    args: list[str] = []
    depth: list[str] = []
    start = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            end = text.index('"', i + 1)
            i = end + 1
            continue
        if c in "([{":
            depth.append(c)
        elif (
            c == "<"
            and (not depth or depth[-1] != "[")
            and i
            and (text[i - 1].isdigit() or text[i - 1] == "D")
        ):
            depth.append("<")
        elif (c in ")]}" and depth) or (c == ">" and depth and depth[-1] == "<"):
            depth.pop()
        elif c == "," and not depth:
            args.append(text[start:i].strip())
            start = i + 1
        i += 1
    tail = text[start:].strip()
    if tail:
        args.append(tail)
    return args


def parse_log(path: Path) -> list[Syscall]:
    """Every system call of the log, ordered by entry; unfinished calls joined with their
    resumption (a call never resumed, e.g. cut by the process's death, is dropped)."""
    calls: list[Syscall] = []
    pending: dict[int, tuple[str, str, int, float]] = {}
    with path.open("r", encoding="ascii", errors="replace") as fh:
        for position, raw in enumerate(fh):
            match = LINE.match(raw.rstrip("\n"))
            if match is None:
                continue
            pid, clock, rest = int(match["pid"]), _seconds(match["time"]), match["rest"]
            if rest.startswith(("+++", "---")):
                continue
            resumed = RESUMED.match(rest)
            if resumed is not None:
                if pid not in pending:
                    continue
                name, head, entry, started = pending.pop(pid)
                body = head + resumed["rest"]
            else:
                call = CALL.match(rest)
                if call is None:
                    continue
                if rest.endswith(UNFINISHED):
                    pending[pid] = (call["name"], call["rest"][: -len(UNFINISHED)], position, clock)
                    continue
                name, body, entry, started = call["name"], call["rest"], position, clock
            done = RESULT.match(body)
            if done is None:
                continue
            calls.append(
                Syscall(
                    pid=pid,
                    name=name,
                    args=split_args(done["args"]),
                    result=done["result"],
                    entry=entry,
                    exit=position,
                    time=started,
                    duration=float(done["duration"] or 0.0),
                )
            )
    calls.sort(key=lambda c: c.entry)
    return calls


HEX = re.compile(r"(?:\\x[0-9a-f]{2})+")


def unhex(text: str) -> bytes:
    """The bytes of a string strace printed with -xx (quotes optional)."""
    if text.endswith("..."):
        raise ValueError("strace cut a string short: raise its -s")
    body = text[1:-1] if text.startswith('"') else text
    return bytes.fromhex(body.replace("\\x", ""))


def descriptor(arg: str) -> tuple[int, str]:
    """(fd, what it is) of an argument such as `5<\\x2f...>` or `4<TCP:[a->b]>`; the path
    decoded. A bare number gives an empty description."""
    match = re.match(r"^(-?\d+|AT_FDCWD)(?:<(.*)>)?(?:\(deleted\))?$", arg)
    if match is None:
        raise ValueError(f"not a descriptor: {arg!r}")
    fd = -100 if match.group(1) == "AT_FDCWD" else int(match.group(1))
    what = match.group(2) or ""
    return fd, HEX.sub(lambda m: unhex(m.group(0)).decode("utf-8", "replace"), what)


def path_arg(dirfd: str | None, arg: str) -> str:
    """An absolute path from a path argument (and the directory descriptor it is relative to)."""
    path = unhex(arg).decode("utf-8", "replace")
    if path.startswith("/") or dirfd is None:
        return path
    return str(Path(descriptor(dirfd)[1]) / path)


# ----------------------------------------------------------------------------- MQTT


@dataclass(frozen=True, slots=True)
class Publish:
    """An MQTT PUBLISH the daemon wrote to the broker's socket."""

    topic: str
    payload: bytes
    qos: int
    retain: bool
    dup: bool
    first: Syscall  # the call that wrote its first byte
    last: Syscall  # the call that wrote its last byte


def _varint(data: bytes, at: int) -> tuple[int, int] | None:
    """An MQTT variable byte integer at `at`: (value, position after), None if incomplete."""
    value, shift = 0, 0
    while True:
        if at >= len(data):
            return None
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift > 21:
            raise ValueError("malformed MQTT remaining length")


def publishes(calls: list[Syscall], port: int, *, v5: bool = True) -> list[Publish]:
    """Every PUBLISH written to a socket connected to `port`, in the order written.

    The socket is the descriptor a `connect()` to the broker's port was made on, until it
    is closed; its bytes (sendto/write/sendmsg, as much as each call returned) are read as
    an MQTT stream from the fixed header of each packet on.
    """
    out: list[Publish] = []
    streams: dict[int, _Stream] = {}
    for call in calls:
        if call.name == "connect" and f"sin_port=htons({port})" in call.args[1]:
            streams[descriptor(call.args[0])[0]] = _Stream()
            continue
        if call.name == "close" and call.args:
            streams.pop(descriptor(call.args[0])[0], None)
            continue
        if call.name not in ("sendto", "write", "sendmsg") or not call.args:
            continue
        stream = streams.get(descriptor(call.args[0])[0])
        if stream is None or (call.ret or 0) <= 0:
            continue
        if call.name == "sendmsg":
            data = b"".join(unhex(s) for s in re.findall(r'iov_base="([^"]*)"', call.args[1]))
        else:
            data = unhex(call.args[1])
        stream.add(data[: call.ret], call)
        out.extend(stream.packets(v5))
    return out


@dataclass
class _Stream:
    """The bytes written to one broker connection, and which call wrote which."""

    data: bytearray = field(default_factory=bytearray)
    base: int = 0  # stream offset of data[0]
    starts: list[int] = field(default_factory=list)  # stream offset of each call's bytes
    writers: list[Syscall] = field(default_factory=list)

    def add(self, data: bytes, call: Syscall) -> None:
        self.starts.append(self.base + len(self.data))
        self.writers.append(call)
        self.data += data

    def writer(self, offset: int) -> Syscall:
        return self.writers[bisect.bisect_right(self.starts, offset) - 1]

    def packets(self, v5: bool) -> Iterator[Publish]:
        """Complete packets at the front of the stream (consumed from it)."""
        buffer = self.data
        while buffer:
            header = _varint(bytes(buffer[:5]), 1)
            if header is None:
                return
            length, body = header
            end = body + length
            if len(buffer) < end:
                return
            if buffer[0] >> 4 == 3:
                flags = buffer[0] & 0x0F
                qos = (flags >> 1) & 0x03
                topic_len = buffer[body] << 8 | buffer[body + 1]
                topic = bytes(buffer[body + 2 : body + 2 + topic_len]).decode()
                at = body + 2 + topic_len + (2 if qos else 0)  # packet identifier
                if v5:
                    props = _varint(bytes(buffer[at : at + 4]), 0)
                    assert props is not None
                    at += props[1] + props[0]
                yield Publish(
                    topic=topic,
                    payload=bytes(buffer[at:end]),
                    qos=qos,
                    retain=bool(flags & 1),
                    dup=bool(flags & 8),
                    first=self.writer(self.base),
                    last=self.writer(self.base + end - 1),
                )
            del buffer[:end]
            self.base += end


# ----------------------------------------------------------------------------- files


@dataclass(frozen=True, slots=True)
class FileOp:
    """One operation on the file system under the traced directory, in entry order.

    kind: "create" (path, inode), "write" (inode, offset, data), "truncate" (inode, size),
    "sync" (inode: its data), "dirsync" (path: its entries), "rename" (path -> target),
    "unlink" (path), "mkdir" (path).
    """

    kind: str
    call: Syscall
    path: str = ""
    target: str = ""
    inode: int = -1
    offset: int = 0
    data: bytes = b""
    size: int = 0


@dataclass
class _Open:
    inode: int
    append: bool
    position: int = 0


@dataclass
class FileOps:
    """What the traced process did to files under `root` (which existed before, durable)."""

    root: str
    ops: list[FileOp] = field(default_factory=list)
    names: dict[str, int] = field(default_factory=dict)  # path -> inode, as it is now
    dirs: set[str] = field(default_factory=set)
    sizes: dict[int, int] = field(default_factory=dict)

    def inside(self, path: str) -> bool:
        return path == self.root or path.startswith(self.root.rstrip("/") + "/")


def file_ops(calls: list[Syscall], root: Path) -> FileOps:
    """The file operations under `root`, with descriptors followed from open to close
    (a write names its file by descriptor; a rename moves the name, not the open file)."""
    fs = FileOps(str(root))
    fs.dirs.add(fs.root)
    fds: dict[int, _Open] = {}
    dir_fds: dict[int, str] = {}
    inodes = iter(range(1, 1 << 30))
    for call in calls:
        name, args = call.name, call.args
        ok = (call.ret or 0) >= 0 and not call.result.startswith("-1")
        if name in ("open", "openat", "creat") and ok:
            dirfd = args[0] if name == "openat" else None
            raw = args[1] if name == "openat" else args[0]
            path = path_arg(dirfd, raw)
            fd = call.ret if call.ret is not None else -1
            fds.pop(fd, None)
            dir_fds.pop(fd, None)
            if not fs.inside(path):
                continue
            flags = args[2] if name == "openat" else (args[1] if name == "open" else "O_CREAT")
            if "O_DIRECTORY" in flags or path in fs.dirs:
                dir_fds[fd] = path
                continue
            inode = fs.names.get(path)
            if inode is None:
                if "O_CREAT" not in flags:
                    continue  # a file that was there before the trace: not ours
                inode = next(inodes)
                fs.names[path] = inode
                fs.sizes[inode] = 0
                fs.ops.append(FileOp("create", call, path=path, inode=inode))
            elif "O_TRUNC" in flags and fs.sizes[inode]:
                fs.sizes[inode] = 0
                fs.ops.append(FileOp("truncate", call, inode=inode, size=0))
            fds[fd] = _Open(inode, append="O_APPEND" in flags)
        elif name == "close" and args:
            fd = descriptor(args[0])[0]
            fds.pop(fd, None)
            dir_fds.pop(fd, None)
        elif name in ("write", "pwrite64") and args and ok:
            fd = descriptor(args[0])[0]
            handle = fds.get(fd)
            if handle is None:
                continue
            written = call.ret or 0
            data = unhex(args[1])[:written]
            if name == "pwrite64":
                offset = int(args[3])
            elif handle.append:
                offset = fs.sizes[handle.inode]
            else:
                offset = handle.position
                handle.position += written
            fs.sizes[handle.inode] = max(fs.sizes[handle.inode], offset + written)
            fs.ops.append(FileOp("write", call, inode=handle.inode, offset=offset, data=data))
        elif name in ("fsync", "fdatasync") and args and ok:
            fd = descriptor(args[0])[0]
            if fd in fds:
                fs.ops.append(FileOp("sync", call, inode=fds[fd].inode))
            elif fd in dir_fds:
                fs.ops.append(FileOp("dirsync", call, path=dir_fds[fd]))
        elif name in ("ftruncate", "truncate") and ok:
            if name == "ftruncate":
                handle = fds.get(descriptor(args[0])[0])
                inode = handle.inode if handle is not None else None
            else:
                inode = fs.names.get(path_arg(None, args[0]))
            if inode is not None:
                fs.sizes[inode] = int(args[1])
                fs.ops.append(FileOp("truncate", call, inode=inode, size=int(args[1])))
        elif name in ("rename", "renameat", "renameat2") and ok:
            if name == "rename":
                old, new = path_arg(None, args[0]), path_arg(None, args[1])
            else:
                old, new = path_arg(args[0], args[1]), path_arg(args[2], args[3])
            if fs.inside(old) and fs.inside(new) and old in fs.names:
                fs.names[new] = fs.names.pop(old)
                fs.ops.append(FileOp("rename", call, path=old, target=new))
        elif name in ("unlink", "unlinkat") and ok:
            path = path_arg(None, args[0]) if name == "unlink" else path_arg(args[0], args[1])
            if path in fs.names:
                del fs.names[path]
                fs.ops.append(FileOp("unlink", call, path=path))
        elif name in ("mkdir", "mkdirat") and ok:
            path = path_arg(None, args[0]) if name == "mkdir" else path_arg(args[0], args[1])
            if fs.inside(path) and path not in fs.dirs:
                fs.dirs.add(path)
                fs.ops.append(FileOp("mkdir", call, path=path))
    return fs
