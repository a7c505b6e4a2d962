"""`tablectl tv --config FILE`: load the file, start the service, serve until stopped."""

from __future__ import annotations

import logging
from pathlib import Path

from broadcast.config import load_tv_config

log = logging.getLogger("tablectl.tv")


def run_tv(path: Path) -> int:
    """Run the TV service of `path` in the foreground; 0 on a clean stop."""
    config = load_tv_config(path)
    from broadcast.service import TvService

    service = TvService.from_config(config)
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
