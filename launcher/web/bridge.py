"""The web's one way to the firmware: every request is work posted to the reactor.

A request becomes a call that the reactor runs (``reactor.post``) and whose answer comes
back on a thread-safe future; the web's thread waits for it at most ``timeout`` seconds,
then answers 503 (``Unavailable``), so a hung reactor never hangs the server. A call
still queued when its wait ends is cancelled and never runs: a press the web gave up on is
not played later.

Each client (each token) is a console session: its own ``Console`` on the launcher,
JSON only, with its own `debug on` and its lapse, over the launcher's one running
configuration (``live``, the serial console's), through the same registry and gates: the
web and the serial console cannot disagree. Nothing here touches a pin or the launcher's
objects off the reactor thread; the launcher's events reach the live streams through the
launcher's listeners, handed to the web's asyncio loop with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from launcher.firmware.console import Console
from launcher.firmware.registry import (
    E_INTERNAL,
    E_LINE,
    E_STATE,
    E_UNAVAILABLE,
    CommandError,
    event_line,
    json_line,
)

if TYPE_CHECKING:
    from launcher.firmware.app import Launcher
    from launcher.firmware.live_config import LiveConfig

log = logging.getLogger("launcher.web")

T = TypeVar("T")

TIMEOUT = 5.0  # s a request waits for the reactor (it answers in milliseconds when well)
WAITING = 32  # calls waiting for the reactor at once; more are answered 503 at once
SESSIONS = 16  # web sessions kept; the least recently used one beyond is closed
STREAM_LINES = 256  # lines queued for one live client; a client that falls further behind
#                     is dropped (its browser reconnects and starts from a fresh status)


class Pairing(Protocol):
    """The launcher's pairing part (launcher.firmware.pairing), as the web uses it."""

    WINDOW: float

    def open(self) -> str: ...
    def state(self, pid: str) -> str: ...
    def take(self, pid: str) -> bool: ...


class Unavailable(Exception):
    """The firmware did not answer in time, or too many requests wait for it: 503."""


class Stream:
    """One live client's queue of server-sent events, on the web's loop.

    The reactor hands lines over with ``call_soon_threadsafe(stream.push, ...)``; the
    client's handler takes them with ``take``.
    """

    def __init__(self, tid: str, limit: int = STREAM_LINES) -> None:
        self.tid = tid
        self.limit = limit
        self.lines: deque[tuple[str, str]] = deque()
        self.wake = asyncio.Event()
        self.overflowed = False
        self.closed = False
        self.console: Console | None = None  # its session's console (reactor thread)

    def push(self, kind: str, text: str) -> None:
        """Queue one event (the loop's thread)."""
        if self.closed:
            return
        if len(self.lines) >= self.limit:
            self.overflowed = True
        else:
            self.lines.append((kind, text))
        self.wake.set()

    def end(self) -> None:
        """No more events: its handler returns (the loop's thread)."""
        self.closed = True
        self.wake.set()

    async def take(self) -> list[tuple[str, str]]:
        """Wait for events; every one queued. Empty once the stream has overflowed."""
        await self.wake.wait()
        self.wake.clear()
        if self.overflowed:
            return []
        out = list(self.lines)
        self.lines.clear()
        return out


class Bridge:
    """The firmware as the web server sees it: console lines, pairing and live events."""

    def __init__(self, app: Launcher, live: LiveConfig, *,
                 extras: Mapping[str, Any] | None = None, pairing: Pairing | None = None,
                 timeout: float = TIMEOUT, waiting: int = WAITING,
                 sessions: int = SESSIONS) -> None:
        """``live``: the running configuration (the first console's ``config``);
        ``extras``: what each session's console gets besides (the simulated board's verbs);
        ``pairing``: the launcher's pairing part (None: this unit cannot pair)."""
        self.app = app
        self.reactor = app.reactor
        self.live = live
        self.extras = dict(extras or {})
        self.pairing = pairing
        self.timeout = timeout
        self.waiting_limit = waiting
        self.session_limit = sessions
        self.waiting = 0  # calls waiting now (the loop's thread)
        self.loop: asyncio.AbstractEventLoop | None = None  # set by the server when it runs
        # The reactor thread's own:
        self._consoles: OrderedDict[str, Console] = OrderedDict()
        self._streams: list[Stream] = []
        self._attached = False

    # -- the web's loop ---------------------------------------------------------------------

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` run on the reactor thread; its answer, or ``Unavailable`` after
        ``timeout`` s (``fn`` then never runs, unless it had begun)."""
        if self.waiting >= self.waiting_limit:
            raise Unavailable(f"{self.waiting} requests already wait for the launcher")
        done: concurrent.futures.Future[T] = concurrent.futures.Future()

        def job() -> None:
            if not done.set_running_or_notify_cancel():
                return  # the web stopped waiting: not run
            try:
                done.set_result(fn())
            except Exception as exc:
                done.set_exception(exc)  # the request is answered 500 ...
                raise  # ... and the bug is the reactor's: the board made safe, a fault

        self.waiting += 1
        try:
            self.reactor.post(job)
            return await asyncio.wait_for(asyncio.wrap_future(done), self.timeout)
        except TimeoutError:
            ran = not done.cancel()  # a call already begun cannot be cancelled
            raise Unavailable(f"the launcher did not answer within {self.timeout:g} s"
                              + ("" if ran else "; the request was not run")) from None
        finally:
            self.waiting -= 1

    async def command(self, tid: str, line: str) -> tuple[int, dict[str, Any]]:
        """One console line in ``tid``'s session: (HTTP status, the console's JSON reply)."""
        return await self.run(lambda: self._line(tid, line))

    async def luck(self, tid: str, side: str | None) -> tuple[int, dict[str, Any]]:
        """`luck show` in ``tid``'s session, as one side's row (``luck_row``)."""
        status, reply = await self.command(tid, "luck show")
        return (200, luck_row(reply, side)) if status == 200 else (status, reply)

    async def pair_open(self) -> tuple[int, dict[str, Any]]:
        """A new pairing window: 201 and its id; 429 when too many were opened of late, 503
        once the launcher has stopped."""
        return await self.run(self._pair_open)

    async def pair_state(self, pid: str) -> str:
        """A window's state; "granted" the one time a confirmed window is taken."""
        return await self.run(lambda: self._pair_state(pid))

    async def open_stream(self, stream: Stream) -> str:
        """Start sending the launcher's events to ``stream``; its first status (JSON)."""
        return await self.run(lambda: self._open_stream(stream))

    def close_stream(self, stream: Stream) -> None:
        """Stop sending to ``stream`` (any thread; the reactor drops it when it next runs)."""
        stream.closed = True
        self.reactor.post(lambda: self._close_stream(stream))

    # -- the reactor thread -----------------------------------------------------------------

    def attach(self) -> None:
        """Listen to the launcher (the reactor thread, or before it runs)."""
        if not self._attached:
            self.app.listeners.append(self._heard)
            self._attached = True

    def close(self) -> None:
        """Stop listening and close every session (the reactor thread, or after it stopped)."""
        if self._attached:
            self.app.listeners.remove(self._heard)
            self._attached = False
        self._streams.clear()
        while self._consoles:
            _, console = self._consoles.popitem(last=False)
            console.close()

    def console(self, tid: str) -> Console:
        """``tid``'s session's console, made on first use; the least recently used beyond
        ``sessions`` is closed (its `debug on` ends with it)."""
        console = self._consoles.get(tid)
        if console is not None:
            self._consoles.move_to_end(tid)
            return console
        console = Console(self.app, **self.extras, live=self.live, remote=True)
        self._consoles[tid] = console
        while len(self._consoles) > self.session_limit:
            _, old = self._consoles.popitem(last=False)
            old.close()
        return console

    def _line(self, tid: str, line: str) -> tuple[int, dict[str, Any]]:
        lines = self.console(tid).handle_line(line)
        if not lines:
            # The console takes a line that reads like its own output for an echo.
            return 400, {"ok": False, "error": E_LINE,
                         "message": "a line like the console's own output is not a command"}
        reply = json.loads(lines[-1])
        if reply.get("ok"):
            return 200, reply
        return (500 if reply.get("error") == E_INTERNAL else 400), reply

    def _pair_open(self) -> tuple[int, dict[str, Any]]:
        if self.pairing is None:
            return 503, {"error": "unavailable", "message": "this launcher cannot pair"}
        try:
            pid = self.pairing.open()
        except CommandError as exc:
            if exc.code == E_STATE:  # rate-limited: the message says when the next may open
                return 429, {"error": "rate", "message": exc.message}
            if exc.code == E_UNAVAILABLE:  # stopped for a restart
                return 503, {"error": "unavailable", "message": exc.message}
            return 409, {"error": exc.code, "message": exc.message}
        return 201, {"id": pid, "expires_s": self.pairing.WINDOW}

    def _pair_state(self, pid: str) -> str:
        if self.pairing is None:
            return "unknown"
        state = self.pairing.state(pid)
        if state == "confirmed":
            return "granted" if self.pairing.take(pid) else "taken"
        return state

    def _open_stream(self, stream: Stream) -> str:
        stream.console = self.console(stream.tid)
        self.attach()
        self._streams.append(stream)
        return json_line(stream.console.status())

    def _close_stream(self, stream: Stream) -> None:
        if stream in self._streams:
            self._streams.remove(stream)

    def _heard(self, kind: str, data: dict[str, Any]) -> None:
        # Runs inside the launcher's dispatch: nothing may escape from here.
        if not self._streams:
            return
        try:
            line = event_line(kind, data, self.reactor.monotonic(), True)
            loop = self.loop
            for stream in list(self._streams):
                console = stream.console
                if stream.closed or loop is None or console is None:
                    self._streams.remove(stream)
                    continue
                status = json_line(console.status())
                loop.call_soon_threadsafe(stream.push, "log", line)
                loop.call_soon_threadsafe(stream.push, "status", status)
        except RuntimeError:  # the loop has closed: the server is stopping
            self._streams.clear()
        except Exception:
            log.exception("web: event %s not sent to the live clients", kind)


def luck_row(reply: dict[str, Any], side: str | None) -> dict[str, Any]:
    """The `luck show` reply's row for ``side`` (None: the side in play), with the side in
    play, its dry streak and the seed."""
    data = reply["data"]
    want = data["side"] if side is None else side
    row = next(r for r in reply["sides"] if r["side"] == want)
    return {**row, "in_play": data["side"], "dry_streak": data["dry_streak"],
            "seed": data["seed"]}

