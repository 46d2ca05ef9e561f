"""What a test leaves behind: threads still running after it, and log records written by a
thread that an earlier test left running. tests/conftest.py fails the test either way.

A thread that outlives its test goes on acting in the tests after it: its log records show
up in another test's captured log, and its writes land in another test's time. So the test
that started it fails (at its teardown), naming the thread; and if the thread writes a log
record later, the test under way then fails too, naming the test that left it running.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable

GRACE = 5.0  # s: how long a thread that is ending gets to end after its test (a hang guard)


class Leftovers:
    """The threads that outlived the test that started them, and what they logged after."""

    def __init__(self, grace: float = GRACE) -> None:
        self.grace = grace
        self.left_running: dict[threading.Thread, str] = {}  # the thread, the test it outlived
        self._late: list[str] = []
        self._lock = threading.Lock()
        self.handler = _LateRecords(self)

    def threads_left(self, before: Iterable[threading.Thread], test: str) -> list[str]:
        """The names of the threads started since ``before`` that are still running (each
        gets ``grace`` s to end); they are remembered as left running by ``test``."""
        known = set(before)
        new = [t for t in threading.enumerate() if t not in known]
        for t in new:
            t.join(self.grace)
        alive = [t for t in new if t.is_alive()]
        with self._lock:
            self.left_running.update(dict.fromkeys(alive, test))
        return [t.name for t in alive]

    def late_records(self) -> list[str]:
        """The log records written, since the last call, by threads that an earlier test left
        running: each with its thread and that test."""
        with self._lock:
            late, self._late = self._late, []
        return late

    def _note(self, record: logging.LogRecord) -> None:
        thread = threading.current_thread()  # a handler runs on the thread that logs
        with self._lock:
            test = self.left_running.get(thread)
            if test is not None:
                self._late.append(f"{thread.name} (left running by {test}): "
                                  f"{record.levelname} {record.name}: {record.getMessage()}")


class _LateRecords(logging.Handler):
    """A handler for the root logger that hands every record to :class:`Leftovers`."""

    def __init__(self, leftovers: Leftovers) -> None:
        super().__init__(logging.NOTSET)
        self.leftovers = leftovers

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.leftovers._note(record)
        except Exception:
            self.handleError(record)
