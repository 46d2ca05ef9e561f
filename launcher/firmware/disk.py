"""The disk: atomic writes that a power cut cannot tear, and the clean-up of their leftovers.

Every file the firmware writes (the state file, ``config save``) goes through
``atomic_write``: a temporary file beside the target, written, fsynced, renamed over it,
and the folder fsynced. A power cut leaves the old file or the new one, and at worst a
temporary file, which ``remove_stale_temps`` deletes at the next start.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def temp_prefix(path: Path) -> str:
    """The name every temporary file of ``path`` starts with."""
    return f".{path.name}."


def atomic_write(path: Path, data: str, *, keep_mode: bool = False,
                 new_mode: int | None = None) -> None:
    """Write ``data`` so that a power cut leaves either the old file or the new one.

    ``keep_mode``: the new file gets the old one's permission bits, and its owner and group
    where this process may give them (root may; another user keeps its own). A file that
    did not exist gets ``new_mode`` (None: ``mkstemp``'s 0600).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), dir=path.parent)
    try:
        if keep_mode:
            _like(fd, path, new_mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dirfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dirfd)
    finally:
        os.close(dirfd)


def _like(fd: int, path: Path, new_mode: int | None) -> None:
    """Give the temporary file ``fd`` the mode (and, where allowed, owner) of ``path``."""
    try:
        old = os.stat(path)
    except FileNotFoundError:
        if new_mode is not None:
            os.fchmod(fd, new_mode)
        return
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    if (old.st_uid, old.st_gid) == (os.geteuid(), os.getegid()):
        return
    try:
        os.fchown(fd, old.st_uid, old.st_gid)
    except PermissionError:
        with contextlib.suppress(PermissionError):  # a member of its group may keep that
            os.fchown(fd, -1, old.st_gid)


def remove_stale_temps(path: Path) -> list[Path]:
    """Delete the temporary files an interrupted ``atomic_write`` of ``path`` left behind."""
    removed: list[Path] = []
    try:
        candidates = list(path.parent.glob(temp_prefix(path) + "*"))
    except OSError:
        return removed
    for stale in candidates:
        try:
            stale.unlink()
        except OSError:
            continue
        removed.append(stale)
    return removed
