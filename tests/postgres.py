"""Test helper: a private PostgreSQL server (initdb + pg_ctl in a temporary directory).

Never the server that may run on port 5432: the cluster is made fresh in a directory of its
own, listens on a free loopback port (and a socket in that directory), trusts local
connections, and is removed at the end. As root, the server runs as the `postgres` user
(PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from tests.broker import free_port


def pg_bin() -> Path | None:
    """The directory of the installed server binaries (Debian: /usr/lib/postgresql/N/bin)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)
    if found:
        return Path(found[0]).parent
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).parent if pg_ctl else None


class PostgresServer:
    """A throw-away PostgreSQL cluster on 127.0.0.1:<free port>."""

    def __init__(self) -> None:
        bindir = pg_bin()
        if bindir is None:
            raise RuntimeError("PostgreSQL server binaries not found (apt-get install postgresql)")
        self.bindir = bindir
        self.port = free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="tablectl-pg-"))
        self.data = self.workdir / "data"
        self.user: str | None = None
        if os.geteuid() == 0:
            self.user = "postgres"
            entry = pwd.getpwnam(self.user)
            os.chown(self.workdir, entry.pw_uid, entry.pw_gid)
        self.log = self.workdir / "server.log"

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        cmd = [str(a) for a in args]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        return subprocess.run(
            cmd, check=True, capture_output=True, text=True, timeout=timeout, cwd=self.workdir
        )

    def start(self) -> PostgresServer:
        """initdb, then start the server and wait until it accepts connections."""
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--no-sync",
        )
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.workdir} -c fsync=off -c max_connections=200"
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "-t",
            "60",
            "start",
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done = subprocess.run(
                [str(self.bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                capture_output=True,
            )
            if done.returncode == 0:
                return self
            time.sleep(0.1)
        raise RuntimeError(f"PostgreSQL did not start: {self.log.read_text()[-2000:]}")

    def url(self, database: str = "postgres") -> str:
        """A connection URL for a database of this server."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str | None = None) -> str:
        """A new, empty database; its URL."""
        import psycopg

        name = name or f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server and remove its directory."""
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
