"""Files that hold secrets: created private whatever the umask, refused when others can read them.

The journal records every hole card, the staff file every badge, the credentials file the
broker password: the daemon creates them with an explicit mode (0600 files, 0700
directories) instead of trusting the process umask, and refuses a secret it is given that
other users can read, as ssh refuses a private key that is not private.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import BinaryIO

log = logging.getLogger("tablectl.private")

FILE_MODE = 0o600
DIR_MODE = 0o700
#: Permission bits of "others": a secret with any of them is refused (group read is the
#: documented root:tablectl 0640 layout of /etc/tablectl).
OTHERS = 0o007


def open_private(path: Path, *, append: bool = False) -> BinaryIO:
    """Open `path` for binary writing, created 0600 if it does not exist (any umask).

    `append`: keep what is there and write at the end; otherwise truncate. A file that
    exists keeps its mode, less any permission of others (see `tighten`).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_APPEND if append else os.O_TRUNC)
    existed = path.exists()
    fd = os.open(path, flags, FILE_MODE)
    try:
        if existed:
            _tighten_fd(fd, path)
        else:
            os.fchmod(fd, FILE_MODE)  # exactly 0600, even under a umask such as 0277
        return os.fdopen(fd, "ab" if append else "wb")
    except BaseException:
        os.close(fd)
        raise


def fsync_dir(directory: Path) -> None:
    """Sync `directory` itself: the names created, renamed or removed in it survive a power
    cut only once their directory is synced (a file's own fsync covers its data)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_private_dir(path: Path) -> None:
    """Create the directory `path` 0700 (missing parents 0700 too) whatever the umask, each
    new name synced in its parent.

    An existing directory is left as it is (it may be shared, e.g. /var/lib/tablectl), with
    a warning if others may enter it.
    """
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(directory, DIR_MODE)
        fsync_dir(directory.parent)  # durably: a power cut must not take the new name away
    if not missing:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & OTHERS:
            log.warning(
                "%s is accessible by other users (mode %04o): the journal records every "
                "hole card; chmod o-rwx it",
                path,
                mode,
            )


def tighten(path: Path) -> None:
    """Remove the permissions of others from an existing file or directory we own, with a
    warning (it was made by hand, or by an older version, under a permissive umask)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return
    mode = stat.S_IMODE(info.st_mode)
    if mode & OTHERS and info.st_uid == os.geteuid():
        os.chmod(path, mode & ~OTHERS)
        log.warning("%s was accessible by others (mode %04o): now %04o", path, mode, mode & ~OTHERS)


def _tighten_fd(fd: int, path: Path) -> None:
    info = os.fstat(fd)
    mode = stat.S_IMODE(info.st_mode)
    if mode & OTHERS and info.st_uid == os.geteuid():
        os.fchmod(fd, mode & ~OTHERS)
        log.warning("%s was accessible by others (mode %04o): now %04o", path, mode, mode & ~OTHERS)


def exposure(path: Path) -> str | None:
    """Why the secret file `path` is not private enough (others may read or write it, or it
    is not a regular file), or None when it is fine."""
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    mode = stat.S_IMODE(info.st_mode)
    if mode & OTHERS:
        return (
            f"is accessible by other users (mode {mode:04o}): it holds a secret; "
            f"chmod 600 it (or 640, owner root, group of the daemon's user)"
        )
    return None
