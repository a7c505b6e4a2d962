"""What every benchmark records about the machine it ran on (results are per machine)."""

from __future__ import annotations

import datetime
import os
import platform
from pathlib import Path
from typing import Any


def cpu_model() -> str:
    """The CPU model from /proc/cpuinfo (`model name` on x86, `Model` on a Raspberry Pi)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "Model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    """CPU, cores this process may use, Python, kernel, date and the 1-minute load average
    (other work on the machine skews the tails)."""
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu": cpu_model(),
        "cores": len(cores) if cores is not None else os.cpu_count() or 0,
        "python": platform.python_version(),
        "kernel": platform.release(),
        "date": datetime.date.today().isoformat(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }
