"""A throw-away local mosquitto for `tablectl sim` when the config names no broker."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from controller.children import ending_with_parent
from kernel.errors import DeviceError


def free_port() -> int:
    """A TCP port free on the loopback interface right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalBroker:
    """mosquitto on 127.0.0.1, anonymous, for a simulated table on one machine."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="tablectl-broker-"))
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> None:
        """Start mosquitto and wait until it accepts connections."""
        exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        if not Path(exe).exists():
            raise DeviceError("mosquitto is not installed (scripts/setup.sh installs it)")
        conf = self.dir / "mosquitto.conf"
        conf.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n"
            if _is_root()
            else f"listener {self.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
        )
        log = (self.dir / "mosquitto.log").open("wb")
        self.proc = subprocess.Popen(
            ending_with_parent([exe, "-c", str(conf)]), stdout=log, stderr=log
        )
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise DeviceError(f"mosquitto exited: see {self.dir / 'mosquitto.log'}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise DeviceError(f"mosquitto did not listen on {self.port} within {timeout}s")

    def stop(self) -> None:
        """Terminate mosquitto and remove its directory."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def _is_root() -> bool:
    import os

    return os.geteuid() == 0
