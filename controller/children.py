"""Child processes that end with the process that started them (Linux's parent-death signal).

`tablectl sim` starts its own mosquitto and, with `--tables`, worker processes; a parent
killed outright (SIGKILL, the OOM killer) runs no clean-up, and its children would play and
publish for ever. Each child asks the kernel for SIGTERM when its parent goes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import signal
import sys

_PR_SET_PDEATHSIG = 1


def end_with_parent(parent: int | None) -> None:
    """In a child: SIGTERM to this process when its parent (pid `parent`) ends; at once if
    it already has. A no-op without a parent given, or where the kernel has no such signal."""
    if parent is None or not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:  # the parent went before the request was made
        os.kill(os.getpid(), signal.SIGTERM)


def ending_with_parent(cmd: list[str]) -> list[str]:
    """`cmd` (a program not ours, as mosquitto) run so that it gets SIGTERM when this
    process ends: under util-linux's `setpriv --pdeathsig`, where there is one."""
    setpriv = shutil.which("setpriv")
    if not sys.platform.startswith("linux") or setpriv is None:
        return cmd
    return [setpriv, "--pdeathsig", "TERM", "--", *cmd]
