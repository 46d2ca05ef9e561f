"""One process owns a state file: the firmware (``launcher run``, ``run --simulated``) and
``launcher play`` hold an exclusive lock on it for their whole life.

Two processes on one state file would each resume the other's counts and the last writer
would win. The lock is ``fcntl.flock`` on a lock file beside the state file
(``state.json.lock``), not on the state file itself: the state writer replaces the state
file by a rename (``disk.atomic_write``), and a lock on the old inode would be gone with
it, letting a second process in after the first save. The lock file is never renamed nor
removed; it holds the owner's PID, so that the process refused can name it. The kernel lets
go of the lock when the owner ends, however it ends (a crash, SIGKILL, a power cut leaves a
file that locks nothing).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from launcher.core.errors import ConfigError

LOCK_SUFFIX = ".lock"


class StateInUse(ConfigError):
    """The state file is owned by another live process (``pid``, None if it cannot be read)."""

    def __init__(self, path: Path, pid: int | None, option: str = "--state") -> None:
        self.pid = pid
        who = f"process {pid}" if pid is not None else "another process"
        super().__init__(option, str(path),
                         f"is in use by {who} (another launcher on the same state file); "
                         f"stop it, or choose another file with {option} FILE")


def lock_path(path: Path) -> Path:
    """The lock file of the state file ``path``: beside it, never renamed."""
    return path.with_name(path.name + LOCK_SUFFIX)


def _holder(fd: int) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        text = os.pread(fd, 32, 0).decode("ascii").strip()
        return int(text) if text else None
    return None


def claim(path: Path, option: str = "--state") -> int:
    """Take the state file ``path`` for this process: the lock file's descriptor, to keep
    open for as long as the process uses the file. ``StateInUse`` if another holds it; an
    ``OSError`` (no such folder and none can be made, read-only) names ``option``."""
    lock = lock_path(path)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a link planted beside the state file must not make us truncate its
        # target; O_CLOEXEC: a program the firmware starts (aplay) must not inherit the lock.
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise ConfigError(option, str(path), f"cannot lock {lock.name} beside it "
                                             f"({exc.strerror or exc})") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = _holder(fd)
        os.close(fd)
        raise StateInUse(path, pid, option) from None
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return fd


@contextlib.contextmanager
def owning(path: Path, option: str = "--state") -> Iterator[None]:
    """This process owns the state file ``path`` inside the block (see ``claim``)."""
    fd = claim(path, option)
    try:
        yield
    finally:
        os.close(fd)  # lets go of the lock; the file stays, locking nothing
