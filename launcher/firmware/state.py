"""The state file: read once at start, written by a thread of its own, never by the reactor.

The reactor hands ``StateStore.save`` the newest ``Saved`` and goes on at once; the
writer thread turns it into JSON and writes it atomically. Saves that arrive while a
write is under way are folded into one: the last value wins, since only the newest state
matters after a power cut. ``flush`` waits for the writer to have dealt with the newest
value (at stop).

The writer never dies of a failed write. A disk error (``OSError``: a full disk, a card
pulled) is logged once per outage and the launcher plays on. Any other exception is a bug:
its traceback is logged once per outage and it is handed to ``on_failure`` (the owner
posts it to the reactor as an ``internal`` fault; the callback runs on the writer thread).
Either way the state that could not be written is kept, and written at the next save, at
``retry``, or at ``close``, whichever comes first: nothing newer is ever lost to an older
failure.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from launcher.core.store import UNCHECKED, VERSION, Saved, parse
from launcher.firmware.disk import atomic_write, remove_stale_temps

log = logging.getLogger(__name__)

Write = Callable[[Path, str], None]
# Called on the writer thread with the exception of a write that failed for a reason other
# than the disk (a bug). It must not block; posting to the reactor is what it is for.
FailureHook = Callable[[BaseException], None]


class StateStore:
    """The state file at ``path`` (None: keep nothing, for tests and throwaway runs)."""

    def __init__(self, path: Path | None, write: Write = atomic_write,
                 on_failure: FailureHook | None = None) -> None:
        self.path = path
        self.problem: str | None = None  # why the file on disk was not used
        self.last_error: str | None = None  # the newest failed write, None once one succeeds
        self.on_failure: FailureHook | None = on_failure
        self.writes = 0  # writes that reached the disk
        self.failed_writes = 0  # writes that did not (disk errors and bugs alike)
        self._write = write
        self._lock = threading.Condition()
        self._pending: Saved | None = None
        self._unwritten: Saved | None = None  # the newest value a failed write left behind
        self._busy = False
        self._closed = False
        self._thread: threading.Thread | None = None

    @property
    def unwritten(self) -> bool:
        """Whether the newest value handed over is not on disk (its write failed)."""
        with self._lock:
            return self._unwritten is not None and self._pending is None

    def load(self) -> Saved:
        """The saved state (defaults if there is none or it is unreadable); temps cleaned."""
        if self.path is None:
            return Saved()
        for stale in remove_stale_temps(self.path):
            log.warning("removed %s, left by an interrupted write", stale)
        if not self.path.exists():
            return Saved()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:
            return self._refused("is unreadable", exc)
        try:
            saved = parse(data)
        except (ValueError, KeyError, TypeError) as exc:
            # It reads, but lies (its checksum, a field out of bounds): not the truth either.
            return self._refused("failed its check", exc)
        if data.get("version") == UNCHECKED:
            log.warning("state file %s is version %d, written before the checksum: read this "
                        "once unchecked, and written as version %d with one at the next "
                        "save", self.path, UNCHECKED, VERSION)
        return saved

    def _refused(self, what: str, exc: BaseException) -> Saved:
        """Defaults, and ``problem`` saying why: the owner holds every latched fault class
        the board can prove gone (``persistence.provable``), since the file may have held any."""
        self.problem = (f"state file {self.path} {what} ({exc}); starting from defaults, "
                        "every latched fault class held until its check passes again (the "
                        "file may have held one)")
        log.warning("%s", self.problem)
        return Saved()

    def save(self, saved: Saved) -> None:
        """Hand ``saved`` to the writer thread; returns at once (last value wins)."""
        if self.path is None or self._closed:
            return
        with self._lock:
            self._pending = saved
            self._unwritten = None  # superseded
            self._start()
            self._lock.notify_all()

    def retry(self) -> None:
        """Write again the value a failed write left behind (nothing if there is none)."""
        with self._lock:
            if self._unwritten is None or self._pending is not None or self._closed:
                return
            self._pending, self._unwritten = self._unwritten, None
            self._start()
            self._lock.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until the writer has dealt with every value handed over (written, or failed
        and kept for later: see ``unwritten``); False if ``timeout`` ran out."""
        with self._lock:
            return self._lock.wait_for(lambda: self._pending is None and not self._busy,
                                       timeout)

    def close(self, timeout: float | None = 5.0) -> None:
        """Write what is pending (and what a failed write left, once more), then end the
        writer thread."""
        with self._lock:
            if self._unwritten is not None and self._pending is None and not self._closed:
                self._pending, self._unwritten = self._unwritten, None
                self._start()
            self._closed = True
            self._lock.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _start(self) -> None:
        # Under the lock. The thread starts at the first save, never in the constructor.
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="state-writer", daemon=True)
            self._thread.start()

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
                self._failed(saved, exc)
            except BaseException as exc:  # a bug: reported, and the writer goes on
                self._failed(saved, exc)
                self._report(exc)  # before flush() returns, so the owner hears of it first
            else:
                if self.last_error is not None:
                    log.warning("state file %s written again", self.path)
                self.last_error = None
                self.writes += 1
            finally:
                with self._lock:
                    self._busy = False
                    self._lock.notify_all()

    def _failed(self, saved: Saved, exc: BaseException) -> None:
        """Count a failed write, log the first of an outage, keep ``saved`` for later."""
        first = self.last_error is None
        self.failed_writes += 1
        self.last_error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, OSError) \
            else str(exc)
        with self._lock:
            if self._pending is None:
                self._unwritten = saved  # a newer save, if any, supersedes it
        if not first:
            return
        if isinstance(exc, OSError):
            log.error("cannot write state file %s: %s", self.path, exc)
        else:
            log.error("state writer: writing %s failed (a bug); the state is kept and "
                      "written at the next save", self.path, exc_info=exc)

    def _report(self, exc: BaseException) -> None:
        hook = self.on_failure
        if hook is None:
            return
        try:
            hook(exc)
        except Exception:
            log.exception("state writer: the failure callback failed")
