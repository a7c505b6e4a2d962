"""Test helper: a private, real pcscd with only the vpcd virtual reader, and what it needs.

pcscd always listens on /run/pcscd/pcscd.comm and refuses to start next to another pcscd,
so ours runs in a mount namespace of its own (`unshare -m`, root) where /run/pcscd is a
directory of the test's: the system's pcscd, if any, is left alone. Clients find our
socket through PCSCLITE_CSOCK_NAME, which libpcsclite reads once per process: it is set
once, to one directory that every pcscd of the test session uses in turn. vpcd slot 0
listens on `port` (slot 1 on port + 1).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

PCSCD = "/usr/sbin/pcscd"
UNSHARE = "/usr/bin/unshare"
VPCD_DRIVER = "/usr/lib/pcsc/drivers/serial/libifdvpcd.so"
SLOT0 = "Virtual PCD 00 00"
SLOT1 = "Virtual PCD 00 01"
SETUP_HINT = "run `bash scripts/setup.sh` (it installs pcscd and vsmartcard-vpcd)"

_SYSTEMD_VARS = frozenset(
    {"NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID"}
)
_run_dir: Path | None = None


def run_dir() -> Path:
    """The session's pcscd socket directory; PCSCLITE_CSOCK_NAME points into it."""
    global _run_dir
    if _run_dir is None:
        _run_dir = Path(tempfile.mkdtemp(prefix="tablectl-pcscd-"))
        atexit.register(shutil.rmtree, _run_dir, True)
        os.environ["PCSCLITE_CSOCK_NAME"] = str(_run_dir / "pcscd.comm")
    return _run_dir


def free_port_pair() -> int:
    """A loopback TCP port p with p + 1 free too (vpcd listens on both)."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port: int = probe.getsockname()[1]
        if port >= 65535:
            continue
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("0.0.0.0", port))
                b.bind(("0.0.0.0", port + 1))
            return port
        except OSError:
            continue
    raise RuntimeError("no free pair of TCP ports for vpcd")


def check_prerequisites() -> None:
    """Raise with a clear message when a real pcscd with vpcd cannot run here."""
    missing = [p for p in (PCSCD, VPCD_DRIVER, UNSHARE) if not Path(p).exists()]
    if missing:
        raise RuntimeError(f"missing {', '.join(missing)}: {SETUP_HINT}")
    if os.geteuid() != 0:
        raise RuntimeError(
            "the pcscd tests run a private pcscd in a mount namespace, which needs root "
            "(CI runs as root; locally: sudo .venv/bin/pytest tests/system/test_badge_pcsc.py)"
        )
    try:
        __import__("smartcard.scard")
    except ImportError as exc:
        raise RuntimeError(f"pyscard is not installed ({exc}): pip install -e '.[test]'") from exc


class Pcscd:
    """One real pcscd process with the vpcd reader on `port`; start/kill/stop it at will."""

    def __init__(self, workdir: Path, port: int) -> None:
        self.workdir = workdir
        self.port = port
        self.run = run_dir()
        self.conf = workdir / "reader.conf.d"
        self.conf.mkdir(parents=True, exist_ok=True)
        (self.conf / "vpcd").write_text(
            'FRIENDLYNAME "Virtual PCD"\n'
            f"DEVICENAME   /dev/null:{port}\n"
            f"LIBPATH      {VPCD_DRIVER}\n"
            f"CHANNELID    {port}\n"
        )
        self.log_file = workdir / "pcscd.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self, timeout: float = 30.0) -> None:
        """Start pcscd and wait until it lists the vpcd reader."""
        if self.proc is not None:
            raise RuntimeError("pcscd already running")
        for stale in ("pcscd.comm", "pcscd.pid"):  # left behind by a killed pcscd
            (self.run / stale).unlink(missing_ok=True)
        # In a new mount namespace: a private /run, our directory on /run/pcscd.
        script = (
            "mount -t tmpfs tmpfs /run && mkdir /run/pcscd && "
            f"mount --bind '{self.run}' /run/pcscd && "
            f"exec {PCSCD} --foreground --info --auto-exit -c '{self.conf}'"
        )
        # Not started by systemd: no socket activation, no readiness notification to whoever
        # the test process may be talking to.
        env = {k: v for k, v in os.environ.items() if k not in _SYSTEMD_VARS}
        with self.log_file.open("ab") as log:
            self.proc = subprocess.Popen(
                [UNSHARE, "--mount", "--propagation", "private", "/bin/sh", "-c", script],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                self.proc = None
                raise RuntimeError(
                    f"pcscd exited with {code} at start: {self.log_tail()} ({SETUP_HINT})"
                )
            if SLOT0 in self.readers():
                return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"pcscd did not list {SLOT0!r} within {timeout} s: {self.log_tail()}")

    def readers(self) -> list[str]:
        """The readers our pcscd lists now ([] when it does not answer)."""
        if not (self.run / "pcscd.comm").exists():
            return []
        scard: Any = __import__("smartcard.scard", fromlist=["scard"])
        hr, context = scard.SCardEstablishContext(scard.SCARD_SCOPE_USER)
        if hr != scard.SCARD_S_SUCCESS:
            return []
        try:
            hr, readers = scard.SCardListReaders(context, [])
            return [str(r) for r in readers] if hr == scard.SCARD_S_SUCCESS else []
        finally:
            scard.SCardReleaseContext(context)

    def kill(self) -> None:
        """pcscd dies at once (SIGKILL), as in a crash."""
        self._end(signal.SIGKILL)

    def stop(self) -> None:
        """An orderly stop (SIGTERM), then SIGKILL if it lingers."""
        self._end(signal.SIGTERM)

    def _end(self, sig: signal.Signals) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def log_tail(self, lines: int = 20) -> str:
        try:
            text = self.log_file.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return " | ".join(text.strip().splitlines()[-lines:])
