"""A slow-loris attack on the room kit's broker, run inside a network namespace of its own.

`python -m tests.loris_rig --workdir DIR ...` is meant to run under `unshare --net` (as
root): the namespace has its own loopback, conntrack table and firewall, so the nftables
front of examples/mosquitto/nftables-mqtt.conf is loaded there and nowhere else, and the
attacker's sockets come from addresses of their own (127.0.1.x, 127.0.2.x) while the table
and the room connect from 127.0.0.1, as separate hosts would.

What it does: the shipped mosquitto.conf broker (the kit's client file, make-certs.sh
certificates) under an open-file limit (the distribution's 1024, or the LimitNOFILE of the
shipped systemd drop-in); the nftables front (or not); a table daemon connected; then
`--sockets` idle TCP connections to the TLS port that never send a byte, from `--sources`
addresses; then the table restarts and the room server's identity sends it a command.
It prints one JSON object: how many sockets the attacker got, how long the table took to be
back and answer, the broker's file descriptors and memory.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import json
import os
import re
import select
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from controller.config import load_config
from controller.daemon import Daemon
from tests.broker import (
    EXAMPLE_DIR,
    ROOT,
    USERS,
    ShippedBroker,
    Subscriber,
    install_kit,
    make_room_certs,
)

PREFIX = "poker/sim/t01"
NFTABLES = EXAMPLE_DIR / "nftables-mqtt.conf"
LIMITS = EXAMPLE_DIR / "mosquitto-limits.conf"


def drop_in_nofile() -> int:
    """LimitNOFILE of the shipped systemd drop-in."""
    found = re.search(r"^LimitNOFILE=(\d+)$", LIMITS.read_text(), re.MULTILINE)
    if found is None:
        raise RuntimeError(f"{LIMITS.name} sets no LimitNOFILE")
    return int(found.group(1))


def load_front(port: int) -> None:
    """The shipped nftables front, its TLS port moved to the broker's."""
    text = NFTABLES.read_text()
    if "tcp dport 8883 " not in text:
        raise RuntimeError(f"{NFTABLES.name} changed shape: no 'tcp dport 8883'")
    ruleset = Path(f"/tmp/loris-{os.getpid()}.nft")
    ruleset.write_text(text.replace("tcp dport 8883 ", f"tcp dport {port} "))
    try:
        subprocess.run(["nft", "-f", str(ruleset)], check=True, capture_output=True, timeout=30)
    finally:
        ruleset.unlink()


def source(index: int, sources: int) -> str:
    """The attacker address of socket `index`: `sources` addresses, never 127.0.0.1."""
    n = index % sources
    return f"127.0.{1 + n // 200}.{1 + n % 200}"


def attack(port: int, count: int, sources: int) -> None:
    """The attacker process: open the idle sockets, print what it got (one JSON line),
    hold them until its standard input closes."""
    found = open_idle(port, count, sources)
    held = found.pop("sockets")
    print(json.dumps(found), flush=True)
    sys.stdin.read()
    for s in held:
        s.close()


def open_idle(port: int, count: int, sources: int, wait: float = 10.0) -> dict[str, Any]:
    """`count` TCP connections to `port` that never send anything; keep the open ones."""
    pending: dict[int, socket.socket] = {}
    for i in range(count):
        if i and i % 50 == 0:
            time.sleep(0.1)  # 500 a second: the broker's listen queue (100) never overflows
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((source(i, sources), 0))
        s.setblocking(False)
        code = s.connect_ex(("127.0.0.1", port))
        if code not in (0, errno.EINPROGRESS):
            s.close()
            continue
        pending[s.fileno()] = s
    opened: list[socket.socket] = []
    refused = 0
    poller = select.poll()
    for fd in pending:
        poller.register(fd, select.POLLOUT)
    deadline = time.monotonic() + wait
    while pending and time.monotonic() < deadline:
        for fd, _ev in poller.poll(200):
            s = pending.pop(fd)
            poller.unregister(fd)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                opened.append(s)
            else:
                refused += 1
                s.close()
    time.sleep(1.0)  # a connection the front resets after the handshake shows it now
    held = []
    for s in opened:
        try:
            alive = s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:
            alive = True
        except OSError:
            alive = False
        if alive:
            held.append(s)
        else:
            refused += 1
            s.close()
    return {"sockets": held, "held": len(held), "refused": refused, "unanswered": len(pending)}


def broker_usage(pid: int) -> dict[str, int]:
    """The broker's open file descriptors and resident memory (kB)."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return {"fds": len(os.listdir(f"/proc/{pid}/fd")), "rss_kb": int(rss.group(1)) if rss else 0}


def run(workdir: Path, *, guard: bool, nofile: int, sockets: int, sources: int) -> dict[str, Any]:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True, timeout=30)
    certs = make_room_certs(workdir / "certs")
    poker = install_kit(workdir / "poker", certs, users=USERS)
    broker = ShippedBroker(workdir / "broker", poker)
    broker.nofile = nofile
    broker.start()
    out: dict[str, Any] = {"guard": guard, "nofile": nofile, "sockets": sockets}
    daemon: Daemon | None = None
    try:
        if guard:
            load_front(broker.port)
        base = load_config(ROOT / "examples" / "sim-table.toml")
        config = dataclasses.replace(
            base, journal=dataclasses.replace(base.journal, path=workdir / "t01.journal")
        )
        table_broker = broker.broker_config("table-t01", prefix=PREFIX)
        daemon = Daemon(config, broker=table_broker)
        daemon.start()
        out["table_first_connect"] = wait_connected(daemon, 20.0)
        out["before"] = broker_usage(broker.pid)
        # The attacker is a process of its own: its 1,500 descriptors must not push this
        # one's MQTT sockets past 1024 (paho waits on them with select()).
        attacker = subprocess.Popen(
            [sys.executable, "-m", "tests.loris_rig", "--attack", str(broker.port),
             "--sockets", str(sockets), "--sources", str(sources)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        assert attacker.stdout is not None
        attack = json.loads(attacker.stdout.readline())
        out |= attack
        out["settled_after"] = wait_accepted(broker.pid)
        out["during"] = broker_usage(broker.pid)
        daemon.stop()  # the table restarts while the sockets are held
        began = time.monotonic()
        daemon = Daemon(config, broker=table_broker)
        daemon.start()
        back = wait_connected(daemon, 20.0)
        out["table_back_after"] = None if back is None else round(time.monotonic() - began, 2)
        out["answered_after"] = None
        if back is not None:
            out["answered_after"] = command_round_trip(broker, began)
        out["after"] = broker_usage(broker.pid)
        attacker.communicate(timeout=30)  # its stdin closed: it closes its sockets
    finally:
        if daemon is not None:
            daemon.stop()
        broker.stop()
    log = broker.log_file.read_text()
    out["log"] = {
        "max_connections": log.count("max_connections exceeded"),
        "tcpd_denied": log.count("denied access by tcpd"),
    }
    return out


def wait_accepted(pid: int, timeout: float = 60.0) -> float:
    """Seconds until the broker's descriptors stop changing (3 s alike): it has taken in
    what it will of the burst (handshakes past the kernel's queue wait their turn there,
    or are dropped)."""
    began = time.monotonic()
    last, since = -1, began
    while time.monotonic() - began < timeout:
        fds = broker_usage(pid)["fds"]
        if fds != last:
            last, since = fds, time.monotonic()
        elif time.monotonic() - since >= 3.0:
            break
        time.sleep(0.2)
    return round(since - began, 2)


def wait_connected(daemon: Daemon, timeout: float) -> float | None:
    """Seconds until the daemon's publisher is connected, None if it is not in `timeout`."""
    began = time.monotonic()
    while time.monotonic() - began < timeout:
        if daemon.publisher is not None and daemon.publisher.connected:
            return round(time.monotonic() - began, 2)
        time.sleep(0.05)
    return None


def command_round_trip(broker: ShippedBroker, began: float) -> float | None:
    """The room's identity connects and sends a command; seconds from `began` until the
    table's reply arrives (None: no reply in 20 s)."""
    try:
        room = Subscriber(broker, f"{PREFIX}/replies", username="room", timeout=20.0)
    except RuntimeError:
        return None
    try:
        body = {"name": "level", "small_blind": 100, "big_blind": 200, "ante": 0, "id": "back"}
        room.publish(f"{PREFIX}/cmd/level", json.dumps(body).encode())
        if room.wait_for(lambda m: any(b'"back"' in x.payload for x in m), 20):
            return round(time.monotonic() - began, 2)
        return None
    finally:
        room.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--guard", action="store_true", help="load the nftables front")
    parser.add_argument("--nofile", default="1024", help="a number, or 'drop-in'")
    parser.add_argument("--sockets", type=int, default=1500)
    parser.add_argument("--sources", type=int, default=1)
    parser.add_argument("--attack", type=int, metavar="PORT", help="be the attacker process")
    args = parser.parse_args()
    if args.attack is not None:
        attack(args.attack, args.sockets, args.sources)
        return
    if args.workdir is None:
        parser.error("--workdir is required")
    nofile = drop_in_nofile() if args.nofile == "drop-in" else int(args.nofile)
    result = run(
        args.workdir, guard=args.guard, nofile=nofile, sockets=args.sockets, sources=args.sources
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
