"""Test helpers for the room server: its TOML file, and a server in a subprocess."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import httpx

from tests.broker import USERS, Mosquitto, free_port
from tests.table_rig import tablectl

TOKEN = "test-token-0123456789abcdef"


def write_room_config(
    path: Path,
    broker: Mosquitto,
    database_url: str,
    *,
    room: str = "test",
    identity: str | None = "room",
    http_port: int | None = None,
    grace: float = 0.5,
    retry: float = 3.0,
    client_id: str | None = None,
    extra: str = "",
) -> Path:
    """A room server file for `broker` (TLS and the room identity when the broker has them)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["[room]", f'name = "{room}"', "", "[broker]", f'host = "{broker.host}"']
    lines.append(f"port = {broker.port}")
    if client_id:
        lines.append(f'client_id = "{client_id}"')
    if broker.tls is not None:
        lines += ["tls = true", f'ca_file = "{broker.tls.ca_file}"']
    if identity is not None and not broker.anonymous:
        creds = path.with_name(path.stem + "-mqtt.toml")
        creds.write_text(f'username = "{identity}"\npassword = "{USERS[identity]}"\n')
        creds.chmod(0o600)  # a secret: the configuration refuses one others can read
        lines.append(f'credentials_file = "{creds}"')
    token = path.with_name(path.stem + "-token")
    token.write_text(TOKEN + "\n")
    token.chmod(0o600)
    lines += ["", "[database]", f'url = "{database_url}"', "batch_ms = 20"]
    lines += ["", "[http]", 'host = "127.0.0.1"', f"port = {http_port or free_port()}"]
    lines += [f'token_file = "{token}"', "command_timeout = 10"]
    lines += ["", "[gaps]", f"grace = {grace}", f"retry = {retry}"]
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


class RoomProcess:
    """`tablectl room --config FILE` in a subprocess (killed and restarted at will)."""

    def __init__(self, config: Path, port: int, log: Path) -> None:
        self.config = config
        self.port = port
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> RoomProcess:
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(
                [*tablectl(), "room", "--config", str(self.config), "--port", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"room server exited: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/api/health", timeout=1).json()["connected"]:
                    return self
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"room server not up: {self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL: nothing is flushed, nothing acknowledged that was not committed."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)

    def stop(self) -> int | None:
        """SIGTERM and wait (a clean stop)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(30)
        return proc.returncode
