"""The web panel's tokens: issued once a pairing is confirmed, kept hashed in the state folder.

A token is 256 random bits from ``secrets`` (``token_urlsafe(32)``); the file keeps only its
SHA-256, so a copy of the file lets no one in. A token expires after ``days`` unused. The
file is ``web-tokens.json`` beside the state file, written atomically (``atomic_write``,
keeping its owner and mode: a `launcher web revoke` run with sudo leaves it the service's)
under a lock on the folder, so the service and the CLI can both change it; each one reads
it again when it changed on disk, so a revoke counts from the next request. A file that does
not read refuses every token, says so in the log and never raises: pairing again writes a
fresh one. Wall-clock time (``now``), because a token outlives a boot: that is its one use.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import math
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launcher.firmware.disk import atomic_write

FILE = "web-tokens.json"
VERSION = 1
DAY = 86_400.0
MAX_TOKEN = 128  # characters: a longer string is none of ours (token_urlsafe(32) is 43)
# A token's last use is written at most this often (s): a request is not a write to the SD
# card. A power cut may lose up to this much of a token's unused time.
USE_WRITE = 3600.0

log = logging.getLogger("launcher.web")

_HEX = re.compile(r"[0-9a-f]{64}")
_UNREAD = object()  # the file's identity before it was first read


def token_path(state_path: Path) -> Path:
    """The token file of the unit whose state file is ``state_path``: in the same folder."""
    return state_path.parent / FILE


def digest(token: str) -> str:
    """What the file keeps of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class _Token:
    sha256: str
    made: float
    last_used: float


class TokenStore:
    """The tokens in ``path``; ``days`` a token lasts unused; ``now`` the wall clock;
    ``warn`` where a file that does not read is reported (the log's error)."""

    def __init__(self, path: Path, days: float, now: Callable[[], float] = time.time, *,
                 warn: Callable[[str], None] = log.error) -> None:
        self.path = Path(path)
        self.warn = warn
        self.life = days * DAY
        self.now = now
        self.problem: str | None = None  # why the file does not read (every token refused)
        self._tokens: dict[str, _Token] = {}
        self._by_hash: dict[str, str] = {}
        self._seen: object = _UNREAD  # the file's identity when last read
        self._lock = threading.Lock()  # the server's threads, within this process
        with self._lock:
            self._fresh()

    # -- the contract --

    def issue(self) -> tuple[str, str]:
        """A new token: (its id, the token). Only its SHA-256 is written. ``OSError`` when
        the file cannot be written (then the token is not valid anywhere)."""
        token = secrets.token_urlsafe(32)  # 256 bits from the OS's secure source
        with self._lock, self._folder_locked():
            self._fresh()
            tid = secrets.token_hex(4)
            while tid in self._tokens:
                tid = secrets.token_hex(4)
            now = self.now()
            self._tokens[tid] = _Token(digest(token), now, now)
            try:
                self._write()
            except BaseException:
                del self._tokens[tid]
                raise
            self._index()
        log.info("web token %s issued", tid)
        return tid, token

    def check(self, token: str) -> str | None:
        """The id of ``token`` if it is valid and not expired (it is then used now), else
        None. Never raises for the file: one that does not read refuses every token."""
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN:
            return None
        with self._lock:
            self._fresh()
            # Looked up by its hash: a lookup's timing tells nothing of a token, as nobody can
            # choose what a guess hashes to.
            tid = self._by_hash.get(digest(token))
            if tid is None:
                return None
            row = self._tokens[tid]
            now = self.now()
            if self._expired(row, now):
                return None
            if now - row.last_used >= USE_WRITE:
                self._used(tid, now)
            return tid

    def rows(self) -> list[dict[str, Any]]:
        """Every token not expired: id, made, last_used, expires (epoch seconds); no secret."""
        with self._lock:
            self._fresh()
            now = self.now()
            return [{"id": tid, "made": round(t.made), "last_used": round(t.last_used),
                     "expires": round(t.last_used + self.life)}
                    for tid, t in sorted(self._tokens.items(), key=lambda kv: kv[1].made)
                    if not self._expired(t, now)]

    def revoke(self, tid: str) -> bool:
        """Remove token ``tid``; False if there is none (``OSError`` if the file cannot be
        written)."""
        with self._lock, self._folder_locked():
            self._fresh()
            row = self._tokens.pop(tid, None)
            if row is None:
                return False
            try:
                self._write()
            except BaseException:
                self._tokens[tid] = row
                raise
            self._index()
        log.info("web token %s revoked", tid)
        return True

    # -- the file --

    def _expired(self, t: _Token, now: float) -> bool:
        return now - t.last_used > self.life

    def _used(self, tid: str, now: float) -> None:
        """Write a token's new last use (the service's request goes on if the disk fails)."""
        try:
            with self._folder_locked():
                self._fresh()
                row = self._tokens.get(tid)
                if row is None:  # revoked meanwhile by another process
                    return
                row.last_used = now
                self._write()
        except OSError as exc:
            log.warning("web tokens: %s: last use not written (%s)", self.path, exc)

    def _fresh(self) -> None:
        """The file as it is on disk now, read again if it changed since it was read."""
        try:
            st = os.stat(self.path)
            seen: object = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            seen = None
        except OSError as exc:
            self._refuse(f"cannot be read ({exc.strerror or exc})")
            return
        if seen == self._seen:
            return
        self._seen = seen
        if seen is None:  # none yet, or deleted: no tokens
            self._tokens, self.problem = {}, None
            self._index()
            return
        try:
            self._tokens = _parse(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            self._seen = _UNREAD  # read again next time: it may be mended
            self._refuse(f"does not read ({exc})")
            return
        self.problem = None
        self._index()

    def _refuse(self, why: str) -> None:
        if why != self.problem:  # said once, not at every request
            self.warn(f"web tokens: {self.path} {why}: every token is refused until it reads "
                      "again or a new pairing writes it afresh")
        self.problem = why
        self._tokens = {}
        self._index()

    def _index(self) -> None:
        self._by_hash = {t.sha256: tid for tid, t in self._tokens.items()}

    def _write(self) -> None:
        """The tokens not expired, written whole (a file that did not read is replaced)."""
        now = self.now()
        self._tokens = {tid: t for tid, t in self._tokens.items() if not self._expired(t, now)}
        data = {"version": VERSION, "tokens": {
            tid: {"sha256": t.sha256, "made": t.made, "last_used": t.last_used}
            for tid, t in self._tokens.items()}}
        atomic_write(self.path, json.dumps(data, indent=1) + "\n", keep_mode=True,
                     new_mode=0o600)
        st = os.stat(self.path)
        self._seen = (st.st_ino, st.st_mtime_ns, st.st_size)
        self.problem = None

    @contextlib.contextmanager
    def _folder_locked(self) -> Iterator[None]:
        """An exclusive lock on the state folder for a read-change-write of the file: the
        service and a CLI verb may change it at once. (On the folder, not on a lock file:
        nothing to create, whoever runs the verb.)"""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # lets go of the lock


def _parse(text: str) -> dict[str, _Token]:
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise ValueError(f"not a token file of version {VERSION}")
    tokens = data.get("tokens")
    if not isinstance(tokens, dict):
        raise ValueError("no table of tokens")
    out = {}
    for tid, t in tokens.items():
        times = [t.get(k) for k in ("made", "last_used")] if isinstance(t, dict) else []
        if not (isinstance(t, dict) and isinstance(t.get("sha256"), str)
                and _HEX.fullmatch(t["sha256"]) and len(times) == 2
                and all(isinstance(v, int | float) and not isinstance(v, bool)
                        and math.isfinite(v) for v in times)):
            raise ValueError(f"token {tid!r} is malformed")
        out[tid] = _Token(t["sha256"], float(times[0]), float(times[1]))
    return out
