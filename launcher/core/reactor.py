"""The only clock: timers that return their next wake time, and post() for other threads.

A timer callback is called as ``callback(eventtime)`` and returns the next time it
wants to run, or ``NEVER``. ``RealReactor`` sleeps until the next timer or posted
callback (no polling); ``ManualReactor`` only moves when a test calls ``advance``.

An exception from a timer or a posted callback goes to ``on_error(exc, where)``, which
the firmware sets to make the board safe and raise a fault. Without a handler the
reactor logs it; a handler that raises stops the reactor's loop (fail stop, not fail on).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Protocol

from hal.base import NEVER, Scheduler

__all__ = ["NEVER", "ManualReactor", "Reactor", "RealReactor", "Timer"]

log = logging.getLogger(__name__)

TimerCallback = Callable[[float], float]
ErrorHandler = Callable[[BaseException, str], None]


class Timer:
    """A handle returned by ``register_timer``; pass it back to update or cancel."""

    __slots__ = ("_entry", "_key", "callback", "name", "waketime")

    def __init__(self, callback: TimerCallback, waketime: float, name: str) -> None:
        self.callback = callback
        self.waketime = waketime
        self.name = name
        self._key = 0  # the order among timers due at the same time: last armed, last run
        self._entry: tuple[float, int, Timer] | None = None  # its entry in the queue, if armed

    def __repr__(self) -> str:
        return f"<Timer {self.name} at {self.waketime}>"


class Reactor(Scheduler, Protocol):
    """What the launcher needs from a clock: the timers of ``hal.base.Scheduler`` (the one
    definition of them, which the simulator's physics runs on too), and ``post`` for the
    other threads."""

    def register_timer(
        self, callback: TimerCallback, waketime: float = NEVER, name: str = ""
    ) -> Timer: ...
    def post(self, callback: Callable[[], object]) -> None: ...

    on_error: ErrorHandler | None


class _TimerQueue:
    """Armed timers in a heap of ``(wake time, when armed, timer)``, each timer once.

    A timer keeps its own entry, so re-arming it replaces that entry in place and
    disarming (``NEVER``) or unregistering takes it out: the heap never holds more entries
    than there are live timers, however often they are re-armed (the idle timer is, on
    every press). A replacement re-heaps the whole list (``heapify``, in C): with the
    launcher's dozen or so timers that costs less than a sift written in Python.
    """

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()
        self._live: set[Timer] = set()

    def register(self, callback: TimerCallback, waketime: float, name: str) -> Timer:
        timer = Timer(callback, waketime, name or getattr(callback, "__name__", "timer"))
        self._live.add(timer)
        self.update(timer, waketime)
        return timer

    def update(self, timer: Timer, waketime: float) -> None:
        timer.waketime = waketime
        timer._key = key = next(self._seq)
        old = timer._entry
        heap = self._heap
        if waketime == NEVER or timer not in self._live:
            if old is not None:
                timer._entry = None
                heap.remove(old)
                heapq.heapify(heap)
            return
        entry = timer._entry = (waketime, key, timer)
        if old is None:
            heapq.heappush(heap, entry)
        else:
            heap[heap.index(old)] = entry
            heapq.heapify(heap)

    def unregister(self, timer: Timer) -> None:
        self._live.discard(timer)
        self.update(timer, NEVER)

    def next_waketime(self) -> float:
        return self._heap[0][0] if self._heap else NEVER

    def pop_due(self, now: float) -> Timer | None:
        heap = self._heap
        if heap and heap[0][0] <= now:
            timer = heapq.heappop(heap)[2]
            timer._entry = None
            return timer
        return None

    def fire(self, timer: Timer, eventtime: float, on_error: ErrorHandler | None) -> None:
        key = timer._key
        try:
            nxt = timer.callback(eventtime)
        except Exception as exc:
            nxt = NEVER
            _report(exc, f"timer {timer.name}", on_error)
        # A callback that re-armed or cancelled itself has already said what it wants.
        if timer._key == key and timer in self._live:
            self.update(timer, nxt)

    def __len__(self) -> int:
        return len(self._live)

    @property
    def queued(self) -> int:
        return len(self._heap)


def _report(exc: Exception, where: str, on_error: ErrorHandler | None) -> None:
    if on_error is None:
        log.error("%s failed (no error handler set)", where, exc_info=exc)
    else:
        on_error(exc, where)


class _TimersMixin:
    """Timer bookkeeping shared by both reactors."""

    def __init__(self) -> None:
        self._timers = _TimerQueue()
        self._posted: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
        self.on_error: ErrorHandler | None = None

    @property
    def live_timers(self) -> int:
        """How many timers are registered (armed or not)."""
        return len(self._timers)

    @property
    def queued_timers(self) -> int:
        """How many timers are in the queue (armed): never more than ``live_timers``."""
        return self._timers.queued

    def _run_posted(self, callback: Callable[[], object]) -> None:
        try:
            callback()
        except Exception as exc:
            _report(exc, f"posted callback {getattr(callback, '__qualname__', callback)!r}",
                    self.on_error)

    def register_timer(
        self, callback: TimerCallback, waketime: float = NEVER, name: str = ""
    ) -> Timer:
        return self._timers.register(callback, waketime, name)

    def update_timer(self, timer: Timer, waketime: float) -> None:
        self._timers.update(timer, waketime)

    def unregister_timer(self, timer: Timer) -> None:
        self._timers.unregister(timer)

    def next_waketime(self) -> float:
        return self._timers.next_waketime()


class ManualReactor(_TimersMixin):
    """A reactor for tests and simulations: time moves only in ``advance``."""

    def __init__(self, start: float = 0.0) -> None:
        super().__init__()
        self._now = start

    def monotonic(self) -> float:
        return self._now

    def post(self, callback: Callable[[], object]) -> None:
        self._posted.put(callback)

    def run_posted(self) -> None:
        """Run every posted callback (and whatever they post) at the current time."""
        while True:
            try:
                callback = self._posted.get_nowait()
            except queue.Empty:
                return
            self._run_posted(callback)

    def advance(self, seconds: float) -> None:
        """Move time forward, firing every timer due on the way, in order."""
        if seconds < 0:
            raise ValueError("cannot advance a reactor backwards")
        end = self._now + seconds
        self.run_posted()
        while True:
            timer = self._timers.pop_due(end)
            if timer is None:
                break
            self._now = max(self._now, timer.waketime)
            self._timers.fire(timer, self._now, self.on_error)
            self.run_posted()
        self._now = end
        self.run_posted()


class RealReactor(_TimersMixin):
    """The production reactor: one thread runs timers and posted callbacks.

    Timers are touched only on the reactor thread; other threads call ``post``.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        # The clock itself, not a method that calls it: every edge and event reads it.
        self.monotonic: Callable[[], float] = clock
        self._wake = threading.Event()
        self._running = False

    def post(self, callback: Callable[[], object]) -> None:
        """Thread-safe: queue ``callback`` to run on the reactor thread."""
        self._posted.put(callback)
        self._wake.set()

    def stop(self) -> None:
        self.post(self._stop)

    def _stop(self) -> None:
        self._running = False

    def run(self) -> None:
        """Run until ``stop()``; sleeps until the next timer or posted callback."""
        self._running = True
        while self._running:
            self._wake.clear()
            while True:
                try:
                    callback = self._posted.get_nowait()
                except queue.Empty:
                    break
                self._run_posted(callback)
                if not self._running:
                    return
            now = self._clock()
            timer = self._timers.pop_due(now)
            if timer is not None:
                self._timers.fire(timer, now, self.on_error)
                continue
            waketime = self._timers.next_waketime()
            timeout = None if waketime == NEVER else max(0.0, waketime - self._clock())
            if self._posted.empty():
                self._wake.wait(timeout)
