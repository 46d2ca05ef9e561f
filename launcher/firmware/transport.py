"""Console transports: a pyserial port or URL, or stdin/stdout, feeding the reactor line by line.

Threads only move bytes. A reader thread cuts its input into lines and puts them into a
bounded ``Inbox``; the reactor takes at most ``budget`` lines per ``tick`` from it, and only
while the output has room, so a flood of input waits in the inbox (and then in the OS
buffers) instead of starving the launcher's own timers. A writer thread empties a bounded
``Outbox``; the reactor never waits on a port. A serial port that goes away (unplug) is
reopened by a reactor timer when it comes back, and greets with the banner again.

Each channel is one session (``Console.reset`` at its start and its end: text mode, debug
off, a debug run ended). A pty of the firmware's own ends one per client: it does not hold
its slave open, so a client closing it is a hang-up (docs/console.md, "Sessions").

An idle console costs nothing: the reader blocks until bytes arrive (no read timeout to
poll a stop flag; ``Channel.cancel`` ends a read, through pyserial's abort pipe or a wake
pipe of our own: launcher.firmware.channels), and a port that is missing is tried again
after 1, 2, 4 ... seconds, at most ``RETRY_MAX`` apart, so an asleep launcher without its
cable wakes only rarely.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

import serial

from launcher.core.reactor import NEVER, Reactor
from launcher.firmware import places
from launcher.firmware.channels import (
    WRITE_TIMEOUT,
    Channel,
    PtyChannel,
    SerialChannel,
    StreamChannel,
)
from launcher.firmware.console import MAX_LINE, Console

log = logging.getLogger("launcher.console")

BAUD = 115200
# s: how long a reader waits, on a port that cannot cancel a blocked read (none of
# pyserial's POSIX ports or loop://, which block until bytes come or ``cancel`` is called)
READ_TIMEOUT = 0.2
RETRY = 1.0  # s before the first attempt to reopen a port that went away ...
RETRY_MAX = 30.0  # s: ... doubling after each failed attempt, up to this
BUDGET = 8  # lines handled per tick
TICK = 0.01  # s
INBOX_LINES = 32
OUTBOX_LINES = 256  # event lines beyond this are dropped (replies never are)
OUTBOX_HIGH = 64  # input waits while this many lines are still to be written
PTY_LOOK = 0.1  # s between looks for a client on a pty that has none

_EOL = re.compile(rb"[\r\n]")


@dataclass(frozen=True)
class Overlong:
    """A line that was longer than the limit: only its size is kept."""

    size: int


Item = bytes | Overlong


class LineFramer:
    """Bytes in, complete lines out. CR, LF and CR LF each end a line; long lines are cut."""

    def __init__(self, limit: int = MAX_LINE) -> None:
        self.limit = limit
        self._buf = bytearray()
        self._size = 0
        self._after_cr = False

    def feed(self, data: bytes) -> list[Item]:
        out: list[Item] = []
        pos = 0
        for mt in _EOL.finditer(data):
            i = mt.start()
            if data[i] == 0x0A and self._after_cr and i == pos:
                self._after_cr = False  # the LF of a CR LF pair
                pos = i + 1
                continue
            self._take(data[pos:i])
            out.append(self._finish())
            self._after_cr = data[i] == 0x0D
            pos = i + 1
        if pos < len(data):
            self._take(data[pos:])
            self._after_cr = False
        return out

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line."""
        return self._size

    def _take(self, chunk: bytes) -> None:
        room = self.limit + 1 - len(self._buf)
        if room > 0:
            self._buf += chunk[:room]
        self._size += len(chunk)

    def _finish(self) -> Item:
        item: Item = Overlong(self._size) if self._size > self.limit else bytes(self._buf)
        self._buf.clear()
        self._size = 0
        return item


class Inbox:
    """Complete lines from a reader thread to the reactor: bounded, and taken a few per tick."""

    def __init__(self, reactor: Reactor, handle: Callable[[Item], None], *,
                 ready: Callable[[], bool] = lambda: True, capacity: int = INBOX_LINES,
                 budget: int = BUDGET, tick: float = TICK) -> None:
        self.reactor = reactor
        self.capacity = capacity
        self.budget = budget
        self.tick = tick
        self._handle = handle
        self._ready = ready
        self._items: deque[Item] = deque()
        self._cond = threading.Condition()
        self._scheduled = False
        self._closed = False
        self._timer = reactor.register_timer(self._drain, NEVER, "console.inbox")
        # What the flood tests and the play screen look at.
        self.handled = 0
        self.wakes = 0
        self.emptied = 0
        self.largest_batch = 0
        self.deepest = 0

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._items)

    def put(self, item: Item, stopped: Callable[[], bool]) -> bool:
        """From a reader thread: wait while the inbox is full. False if stopped meanwhile."""
        with self._cond:
            while len(self._items) >= self.capacity:
                if stopped() or self._closed:
                    return False
                self._cond.wait(READ_TIMEOUT)
            if stopped() or self._closed:
                return False
            self._items.append(item)
            self.deepest = max(self.deepest, len(self._items))
            wake = not self._scheduled
            self._scheduled = True
        if wake:
            # One wake-up per batch, never one per line: posted callbacks run before timers.
            self.wakes += 1
            self.reactor.post(self._kick)
        return True

    def release_waiters(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._items.clear()
            self._cond.notify_all()
        self.reactor.unregister_timer(self._timer)

    def _kick(self) -> None:
        if not self._closed:
            self.reactor.update_timer(self._timer, self.reactor.monotonic())

    def _drain(self, eventtime: float) -> float:
        batch = 0
        while batch < self.budget and self._ready():
            with self._cond:
                if not self._items:
                    break
                item = self._items.popleft()
                self._cond.notify()
            batch += 1
            self.handled += 1
            self._handle(item)
        self.largest_batch = max(self.largest_batch, batch)
        with self._cond:
            if not self._items:
                self._scheduled = False
                self.emptied += 1
                return NEVER
        return eventtime + self.tick


class Outbox:
    """Lines waiting for the writer thread. Pushing never blocks."""

    def __init__(self, capacity: int = OUTBOX_LINES, high: int = OUTBOX_HIGH) -> None:
        self.capacity = capacity
        self.high = high
        self._lines: deque[bytes] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self.dropped = 0  # event lines dropped since the last notice

    def __len__(self) -> int:
        with self._cond:
            return len(self._lines)

    def room(self) -> bool:
        with self._cond:
            return len(self._lines) < self.high

    def push(self, data: bytes, droppable: bool) -> bool:
        with self._cond:
            if self._closed or (droppable and len(self._lines) >= self.capacity):
                return False
            self._lines.append(data)
            self._cond.notify()
            return True

    def take(self) -> bytes | None:
        """For the writer thread: all queued lines (waits for one); None once closed and empty."""
        with self._cond:
            while not self._lines and not self._closed:
                self._cond.wait()
            if not self._lines:
                return None
            data = b"".join(self._lines)
            self._lines.clear()
            return data

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class _Session:
    """One open channel: a reader thread and a writer thread."""

    def __init__(self, channel: Channel, inbox: Inbox, on_end: Callable[[_Session, str], None],
                 name: str) -> None:
        self.channel = channel
        self.inbox = inbox
        self.outbox = Outbox()
        self.framer = LineFramer()
        self._on_end = on_end
        self._stop = threading.Event()
        self._requested = False  # stop() was called (not a lost port)
        self._end_lock = threading.Lock()
        self._reported = False  # the loss has been told to the owner
        self._reader = threading.Thread(target=self._read_loop, name=f"{name}-reader",
                                         daemon=True)
        self._writer = threading.Thread(target=self._write_loop, name=f"{name}-writer",
                                        daemon=True)

    def start(self) -> None:
        self._writer.start()
        self._reader.start()

    def stop(self) -> None:
        """From any thread but the reactor's: flush what is queued, end both threads."""
        with self._end_lock:
            self._requested = True
        self._stop.set()
        self.outbox.close()
        self.inbox.release_waiters()
        self._writer.join(WRITE_TIMEOUT + 1)
        self.channel.cancel()
        self._reader.join(WRITE_TIMEOUT + 1)

    def join(self) -> None:
        """Wait for threads that are ending on their own (after a lost port)."""
        self._reader.join(WRITE_TIMEOUT + 1)
        self._writer.join(WRITE_TIMEOUT + 1)

    @property
    def alive(self) -> bool:
        return self._reader.is_alive()

    @property
    def finished(self) -> bool:
        """Both threads have ended (after a loss): the channel is closed."""
        return not (self._reader.is_alive() or self._writer.is_alive())

    def _read_loop(self) -> None:
        reason = "stopped"
        try:
            while not self._stop.is_set():
                data = self.channel.read()
                if data is None:
                    reason = "end of input"
                    break
                for item in self.framer.feed(data):
                    if not self.inbox.put(item, self._stop.is_set):
                        break
        except (OSError, serial.SerialException) as exc:
            reason = f"read failed: {exc}"
        except Exception as exc:  # a bug here must not leave the port half-open
            log.exception("console: reader failed")
            reason = f"reader failed: {exc}"
        self._stop.set()
        # The loss goes to the reactor BEFORE the port is closed: it stops a debug run, and
        # closing can take its time (pyserial's socket:// close sleeps 0.3 s; the writer may
        # be stuck in a write for up to WRITE_TIMEOUT).
        self._lost(reason)
        self.outbox.close()
        self._writer.join(WRITE_TIMEOUT + 1)
        self.channel.close()

    def _lost(self, reason: str) -> None:
        """Tell the owner the channel is lost: once, from whichever thread saw it first."""
        with self._end_lock:
            if self._requested or self._reported:
                return
            self._reported = True
        self._on_end(self, reason)

    def _write_loop(self) -> None:
        try:
            while (data := self.outbox.take()) is not None:
                self.channel.write(data)
        except (OSError, serial.SerialException, ValueError) as exc:
            # The port went away under us: tell the reactor, and make the reader notice.
            log.debug("console: write failed: %s", exc)
            self._stop.set()
            self._lost(f"write failed: {exc}")
            self.channel.cancel()


class Transport:
    """What every transport shares: the inbox, line handling and output for one console."""

    name = "console"

    def __init__(self, console: Console, reactor: Reactor, *, eol: bytes = b"\r\n",
                 budget: int = BUDGET, tick: float = TICK, capacity: int = INBOX_LINES) -> None:
        self.console = console
        self.reactor = reactor
        self.eol = eol
        self.inbox = Inbox(reactor, self._handle, ready=self._output_room, capacity=capacity,
                           budget=budget, tick=tick)
        self.session: _Session | None = None
        self._ended_sessions: list[_Session] = []  # their threads are ending by themselves
        self.dropped = 0  # event lines dropped because the output was full
        self.sessions = 0
        console.write = self._event

    # reactor thread

    def _begin(self, channel: Channel) -> None:
        self.sessions += 1
        session = _Session(channel, self.inbox, self._ended_from_thread, self.name)
        self.session = session
        self.console.reset()
        self._send(self.console.banner(), droppable=False)
        session.start()

    def _handle(self, item: Item) -> None:
        if isinstance(item, Overlong):
            lines = self.console.handle_overlong(item.size)
        else:
            lines = self.console.handle_line(item)
        for line in lines:
            self._send(line, droppable=False)

    def _event(self, line: str) -> None:
        self._send(line, droppable=True)

    def _send(self, line: str, droppable: bool) -> None:
        session = self.session
        if session is None:
            return
        out = session.outbox
        if out.dropped and out.push(self._encode(self.console.event_line(
                "console_dropped", {"lines": out.dropped})), droppable=True):
            out.dropped = 0
        if not out.push(self._encode(line), droppable) and droppable:
            out.dropped += 1
            self.dropped += 1

    def _encode(self, line: str) -> bytes:
        return line.encode("utf-8", "replace") + self.eol

    def _output_room(self) -> bool:
        session = self.session
        return session is None or session.outbox.room()

    def _ended_from_thread(self, session: _Session, reason: str) -> None:
        self.reactor.post(lambda: self._ended(session, reason))

    def _ended(self, session: _Session, reason: str) -> None:
        self._ended_sessions.append(session)
        if session is self.session:
            self.session = None
            # First: debug off and a debug run stopped, on every kind of channel.
            self.console.reset()
            self.lost(reason)

    def lost(self, reason: str) -> None:
        """The channel ended by itself (reactor thread)."""

    # owner's thread

    def stop(self) -> None:
        """Flush and stop (not from a running reactor's thread: it joins the session's threads)."""
        # The console first: it stops a debug run, which no port's flush or close may delay
        # (its end event is still queued, and flushed below).
        self.console.close()
        session, self.session = self.session, None
        if session is not None:
            session.stop()
        for ended in self._ended_sessions:
            ended.join()
        self._ended_sessions.clear()
        self.inbox.close()


class SerialTransport(Transport):
    """The console on a serial device or any pyserial URL, at 115200 8N1 by default.

    ``start`` opens the port, or keeps retrying from a reactor timer until it can; a port
    that fails later (cable unplugged) is retried the same way until it is back.
    """

    name = "console-serial"

    def __init__(self, console: Console, reactor: Reactor, url: str, baud: int = BAUD, *,
                 retry: float = RETRY, opener: Callable[[], Any] | None = None,
                 **kw: Any) -> None:
        super().__init__(console, reactor, **kw)
        self.url = url
        self.baud = baud
        self.retry = retry
        self._opener = opener or self._open
        self._complained = False
        self._delay = retry  # the wait before the next attempt: doubles, up to RETRY_MAX
        self._timer = reactor.register_timer(self._try_open, NEVER, "console.open")
        self.opens = 0

    def _open(self) -> Any:
        if self.url.startswith("/"):
            # A device that appeared since the start is looked at before it is opened: only
            # a tty (not a disk that took the name). A ConfigError is retried as any failure.
            places.check_console_port(self.url)
        # exclusive: a second reader of the same tty (another firmware, a terminal on the Pi)
        # would get half of every line; with the lock it cannot open the port at all.
        port = serial.serial_for_url(self.url, baudrate=self.baud, bytesize=serial.EIGHTBITS,
                                     parity=serial.PARITY_NONE, stopbits=serial.STOPBITS_ONE,
                                     timeout=None, write_timeout=WRITE_TIMEOUT,
                                     exclusive=True)
        if getattr(port, "cancel_read", None) is None:
            # A URL handler that cannot end a blocked read: fall back to polling.
            port.timeout = READ_TIMEOUT
        return port

    def start(self) -> bool:
        """Open now if possible, else keep trying (on the reactor thread, or before it runs)."""
        self._try_open(self.reactor.monotonic())
        return self.session is not None

    def _try_open(self, eventtime: float) -> float:
        if self.session is not None:
            return NEVER
        try:
            port = self._opener()
        except (OSError, ValueError, serial.SerialException) as exc:
            if not self._complained:
                log.warning("console: cannot open %s (%s); retrying after %gs, then less "
                            "often (at most every %gs)", self.url, exc, self._delay,
                            max(self.retry, RETRY_MAX))
                self._complained = True
            next_try = eventtime + self._backoff()
            self.reactor.update_timer(self._timer, next_try)
            return next_try
        self._complained = False
        self._delay = self.retry
        self.opens += 1
        log.info("console: %s open at %d baud", self.url, self.baud)
        self._begin(SerialChannel(port))
        self.reactor.update_timer(self._timer, NEVER)
        return NEVER

    def _backoff(self) -> float:
        """The wait before the next attempt; each call doubles the one after (to RETRY_MAX)."""
        delay = self._delay
        self._delay = min(2 * delay, max(self.retry, RETRY_MAX))
        return delay

    def lost(self, reason: str) -> None:
        log.warning("console: %s lost (%s); waiting for it to come back", self.url, reason)
        self.reactor.update_timer(self._timer, self.reactor.monotonic() + self._backoff())

    def stop(self) -> None:
        self.reactor.unregister_timer(self._timer)
        super().stop()


class StreamTransport(Transport):
    """The console on stdin and stdout (``launcher play``, pipes, tests)."""

    name = "console-stdio"

    def __init__(self, console: Console, reactor: Reactor, infd: int = 0,
                 out: BinaryIO | None = None, *, on_eof: Callable[[], None] | None = None,
                 **kw: Any) -> None:
        kw.setdefault("eol", b"\n")
        super().__init__(console, reactor, **kw)
        self.infd = infd
        self.out: BinaryIO = out if out is not None else _stdout()
        self.on_eof = on_eof

    def start(self) -> None:
        self._begin(StreamChannel(self.infd, self.out))

    def lost(self, reason: str) -> None:
        if self.on_eof is not None:
            self.on_eof()


class PtyTransport(Transport):
    """The console on a pseudo-terminal of its own (``launcher run --simulated``): ``path``
    is the device a client opens, e.g. ``launcher console /dev/pts/3``.

    One session per client: a client that closes the pty ends its session (debug off, a
    debug run ended), and the next one to open it gets the banner and a fresh session. A
    reactor timer looks for a new client every ``look`` seconds while there is none (a
    pty tells when its last client leaves, but not when one comes).
    """

    name = "console-pty"

    def __init__(self, console: Console, reactor: Reactor, *, look: float = PTY_LOOK,
                 **kw: Any) -> None:
        super().__init__(console, reactor, **kw)
        self.channel = PtyChannel()
        self.path = self.channel.path
        self.look = look
        self._timer = reactor.register_timer(self._look, NEVER, "console.pty")

    def start(self) -> None:
        self._look(self.reactor.monotonic())

    def _look(self, eventtime: float) -> float:
        if self.session is not None:
            return NEVER
        # The last client's threads first: its writer may still be flushing into the pty.
        if all(s.finished for s in self._ended_sessions) and self.channel.connected():
            self._ended_sessions = [s for s in self._ended_sessions if not s.finished]
            self._begin(self.channel.connection())
            self.reactor.update_timer(self._timer, NEVER)
            return NEVER
        next_look = eventtime + self.look
        self.reactor.update_timer(self._timer, next_look)
        return next_look

    def lost(self, reason: str) -> None:
        log.info("console: the client of %s left (%s); the next one starts afresh",
                 self.path, reason)
        self.reactor.update_timer(self._timer, self.reactor.monotonic() + self.look)

    def stop(self) -> None:
        self.reactor.unregister_timer(self._timer)
        super().stop()
        self.channel.close()


def _stdout() -> BinaryIO:
    import sys

    return sys.stdout.buffer
