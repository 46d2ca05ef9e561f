"""The state file: read once at start, written by a thread of its own, never by the reactor.

The reactor hands ``StateStore.save`` the newest ``Saved`` and goes on at once; the
writer thread turns it into JSON and writes it atomically. Saves that arrive while a
write is under way are folded into one: the last value wins, since only the newest state
matters after a power cut. ``flush`` waits for the newest value to be on disk (at stop).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from launcher.core.store import Saved, parse
from launcher.firmware.disk import atomic_write, remove_stale_temps

log = logging.getLogger(__name__)

Write = Callable[[Path, str], None]


class StateStore:
    """The state file at ``path`` (None: keep nothing, for tests and throwaway runs)."""

    def __init__(self, path: Path | None, write: Write = atomic_write) -> None:
        self.path = path
        self.problem: str | None = None  # why the file on disk was not used
        self.last_error: str | None = None  # the newest failed write, None once one succeeds
        self.writes = 0
        self._write = write
        self._lock = threading.Condition()
        self._pending: Saved | None = None
        self._busy = False
        self._closed = False
        self._thread: threading.Thread | None = None

    def load(self) -> Saved:
        """The saved state (defaults if there is none or it is unreadable); temps cleaned."""
        if self.path is None:
            return Saved()
        for stale in remove_stale_temps(self.path):
            log.warning("removed %s, left by an interrupted write", stale)
        if not self.path.exists():
            return Saved()
        try:
            return parse(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
            self.problem = f"state file {self.path} is unreadable ({exc}); starting from defaults"
            log.warning("%s", self.problem)
            return Saved()

    def save(self, saved: Saved) -> None:
        """Hand ``saved`` to the writer thread; returns at once (last value wins)."""
        if self.path is None or self._closed:
            return
        with self._lock:
            self._pending = saved
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="state-writer",
                                                daemon=True)
                self._thread.start()
            self._lock.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every value handed over is written; False if ``timeout`` ran out."""
        with self._lock:
            return self._lock.wait_for(lambda: self._pending is None and not self._busy,
                                       timeout)

    def close(self, timeout: float | None = 5.0) -> None:
        """Write what is pending, then end the writer thread."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _run(self) -> None:
        assert self.path is not None
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._pending is not None or self._closed)
                saved, self._pending = self._pending, None
                if saved is None:
                    return  # closed, and nothing left to write
                self._busy = True
            try:
                self._write(self.path, saved.to_json())
            except OSError as exc:
                if self.last_error is None:
                    log.error("cannot write state file %s: %s", self.path, exc)
                self.last_error = str(exc)
            else:
                if self.last_error is not None:
                    log.warning("state file %s written again", self.path)
                self.last_error = None
                self.writes += 1
            finally:
                with self._lock:
                    self._busy = False
                    self._lock.notify_all()
