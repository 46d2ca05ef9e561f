"""The disk: atomic writes that a power cut cannot tear, and the clean-up of their leftovers.

Every file the firmware writes (the state file, ``config save``) goes through
``atomic_write``: a temporary file beside the target, written, fsynced, renamed over it,
and the folder fsynced. A power cut leaves the old file or the new one, and at worst a
temporary file, which ``remove_stale_temps`` deletes at the next start.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def temp_prefix(path: Path) -> str:
    """The name every temporary file of ``path`` starts with."""
    return f".{path.name}."


def atomic_write(path: Path, data: str) -> None:
    """Write ``data`` so that a power cut leaves either the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path), dir=path.parent)
    try:
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
