"""`tablectl tv --config FILE`: load the file, start the service, serve until stopped."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

from broadcast.config import load_tv_config
from kernel.errors import TableError

log = logging.getLogger("tablectl.tv")


def run_tv(path: Path) -> int:
    """Run the TV service of `path` in the foreground; 0 on a clean stop."""
    config = load_tv_config(path)
    from broadcast.service import TvService

    service = TvService.from_config(config)
    _check_port(service.listen, service.port, path)
    for table in config.tables:
        log.info(
            "table %s (%s): overlay %s/overlay/%s, preview %s/preview/%s, secure delay %g s",
            table.id,
            table.prefix,
            service.base_url,
            table.id,
            service.base_url,
            table.id,
            config.delay,
        )
    service.serve()
    return 0


def _check_port(host: str, port: int, path: Path) -> None:
    """A port another program holds is said plainly (the service never moves off it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise TableError(
                f"{path}: the TV pages cannot listen on {host}:{port}: "
                f"{exc.strerror or exc} (is another program, or another tablectl tv, on it?)"
            ) from None
