"""The phone panel's HTTP server (docs/web.md): aiohttp on a thread and loop of its own.

It owns no hardware and no state of the launcher: each request is a console line, a
pairing step or a live stream, handed to the firmware through the bridge
(launcher.web.bridge), which runs it on the reactor. What is here is the web's own:

- who may ask: every route under ``/api/`` but pairing needs a token (``Authorization:
  Bearer`` or the HttpOnly, SameSite=Strict cookie the pairing sets); wrong tokens and
  unknown pairings are counted by address, which is answered 429 once it has sent
  ``Limits.fails`` of them within ``Limits.fails_s``;
- where from: a POST must come from the page's own origin (Origin, else Referer);
- how much: bounded bodies, request lines and headers, a deadline for a request's head
  and body, at most ``max_streams`` live clients and ``Limits.connections`` connections;
- what goes out: JSON only for the API and its errors (never a traceback: an unexpected
  exception is logged and answered 500 ``{"error": "internal"}``), the security headers on
  every answer, the panel's files from ``static/``.

The deadlines are the network's, read from the loop's clock, as any socket timeout; the
launcher's own time is the reactor's, and the failed-token window reads it too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ipaddress
import json
import logging
import socket
import ssl
import threading
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from aiohttp import web

from launcher.core import config
from launcher.core.errors import LauncherError
from launcher.web.bridge import STREAM_LINES, Bridge, Stream, Unavailable

log = logging.getLogger("launcher.web")

STATIC = Path(__file__).with_name("static")
COOKIE = "launcher_token"
# The cookie outlives a browser's restart; the token itself lapses after [web] token_days
# unused, checked by the token store. 400 days is the longest a browser keeps one.
COOKIE_AGE = 400 * 86400
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Server": "launcher",  # not aiohttp's name and version
}
# The panel's files by suffix; nothing else in static/ is served.
TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css",
         ".svg": "image/svg+xml", ".png": "image/png", ".ico": "image/x-icon"}
# The routes that need no token: the page, its files, and pairing (method, route).
PUBLIC = frozenset({("GET", "/"), ("GET", "/static/{name}"), ("POST", "/api/pair"),
                    ("GET", "/api/pair/{pid}")})
# The token's id the request came with, set by the token middleware for its handler.
_TID: ContextVar[str] = ContextVar("launcher_web_tid")
START_WAIT = 30.0  # s start() waits for the socket (it takes milliseconds)


@dataclass(frozen=True)
class Limits:
    """What one client may take of the unit (tests shrink them)."""

    body: int = 16 * 1024  # bytes of a request body (a console line is at most 256)
    line: int = 4096  # bytes of the request line
    field: int = 4096  # bytes of one header
    headers: int = 48  # headers a request
    head_s: float = 10.0  # s from a connection (or its last answer) to a whole request head
    body_s: float = 10.0  # s for a body to arrive
    keepalive_s: float = 15.0  # s an idle connection stays open
    write_s: float = 10.0  # s a live stream's write may wait for a slow reader
    ping_s: float = 20.0  # s between a live stream's keep-alive comments
    stream_s: float = 600.0  # s a live stream lasts; the browser reconnects at once
    stream_lines: int = STREAM_LINES  # events queued for a live client; beyond, it is dropped
    connections: int = 64  # open at once; more are closed as they come
    fails: int = 10  # failed tokens an address may send ...
    fails_s: float = 60.0  # ... within this many seconds, then 429 until they age out
    stop_s: float = 5.0  # s stop() gives requests under way


class Tokens(Protocol):
    """The token store (launcher.web.tokens), as the server uses it."""

    def issue(self) -> tuple[str, str]: ...
    def check(self, token: str) -> str | None: ...


class WebError(LauncherError, OSError):
    """The server could not start: the message names the address and the cause."""


class Refused(Exception):
    """A request answered with a JSON error: status, code and message."""

    def __init__(self, status: int, code: str, message: str,
                 extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message
        self.extra = extra or {}


def error(status: int, code: str, message: str, **extra: Any) -> web.Response:
    """The JSON answer of a refused request."""
    return web.json_response({"error": code, "message": message, **extra}, status=status)


class Fails:
    """Failed tokens by address, within a window of the reactor's time."""

    def __init__(self, limit: int, window: float, now: Callable[[], float],
                 addresses: int = 1024) -> None:
        self.limit, self.window, self.now = limit, window, now
        self.addresses = addresses
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, peer: str) -> deque[float]:
        times = self._seen.setdefault(peer, deque())
        self._seen.move_to_end(peer)
        edge = self.now() - self.window
        while times and times[0] <= edge:
            times.popleft()
        while len(self._seen) > self.addresses:  # the oldest address is forgotten
            self._seen.popitem(last=False)
        return times

    def locked(self, peer: str) -> bool:
        return len(self._recent(peer)) >= self.limit

    def failed(self, peer: str) -> None:
        self._recent(peer).append(self.now())


class _Handler(web.RequestHandler):
    """aiohttp's connection handler, with a deadline for each request's head, a cap on
    connections, and a JSON answer to a request its parser refused."""

    def __init__(self, server: WebServer, manager: web.Server, **kw: Any) -> None:
        super().__init__(manager, **kw)
        self.owner = server
        self.refused = False
        self.deadline: asyncio.TimerHandle | None = None
        self.conn: asyncio.BaseTransport | None = None
        # Called when the client goes: a live stream ends at once, not at its next write.
        self.on_lost: list[Callable[[], None]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.owner.connections >= self.owner.limits.connections:
            self.refused = True
            transport.abort()
            return
        self.owner.connections += 1
        self.conn = transport
        super().connection_made(transport)
        self.idle()

    def connection_lost(self, exc: BaseException | None) -> None:
        if self.refused:
            return
        self.owner.connections -= 1
        self.busy()
        self.conn = None
        for hook in self.on_lost:
            hook()
        super().connection_lost(exc)

    def idle(self) -> None:
        """Waiting for a request: its head must come within ``head_s``."""
        self.busy()
        loop = asyncio.get_running_loop()
        self.deadline = loop.call_later(self.owner.limits.head_s, self._late)

    def busy(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _late(self) -> None:
        self.deadline = None
        if self.conn is not None:
            log.debug("web: a request's head came too slowly; connection closed")
            self.conn.close()

    def handle_error(self, request: Any, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        if status >= 500:
            super().handle_error(request, status, exc, message)  # logs it, as a bug
            resp = error(status, "internal", "an internal error (logged)")
        else:
            log.debug("web: a request the parser refused: %s", exc)
            resp = error(status, "request", "not a request this server reads (bad HTTP, or "
                                            "a request line or header too long)")
        resp.headers.update(HEADERS)
        resp.force_close()
        return resp


class WebServer:
    """The panel's server on ``host``:``port`` (0: a free port, read ``port`` after start)."""

    def __init__(self, bridge: Bridge, tokens: Tokens, host: str, port: int, *,
                 max_streams: int = 8, tls: tuple[Path, Path] | None = None,
                 static: Path = STATIC, limits: Limits | None = None,
                 now: Callable[[], float] | None = None) -> None:
        """``tls``: (certificate, key) files for HTTPS; ``now``: the clock of the
        failed-token window (default: the reactor's)."""
        self.bridge = bridge
        self.tokens = tokens
        self.host = host
        self.port = port
        self.max_streams = max_streams
        self.tls = tls
        self.static = static
        self.limits = limits = limits or Limits()
        self.fails = Fails(limits.fails, limits.fails_s, now or bridge.reactor.monotonic)
        self.connections = 0
        self.streams: set[Stream] = set()
        self._files = _files(static)
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        # The token store's one thread: its checks and writes, in turn, off the loop.
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    # -- the owner's thread ------------------------------------------------------------------

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'https' if self.tls else 'http'}://{host}:{self.port}/"

    def start(self) -> None:
        """Listen; returns once the socket is open (``port`` is then the real one), or
        raises ``WebError`` saying what stopped it (the address in use, a certificate that
        does not load)."""
        self._thread = thread = threading.Thread(target=self._main, name="web", daemon=True)
        thread.start()
        if not self._ready.wait(START_WAIT):
            raise WebError(f"web: not listening on {self.host}:{self.port} after "
                           f"{START_WAIT:g} s")
        exc = self._error
        if exc is not None:
            thread.join()
            self._thread = None
            if isinstance(exc, OSError):
                raise WebError(f"web: cannot listen on {self.host}:{self.port}"
                               f"{' with ' + str(self.tls[0]) if self.tls else ''}: "
                               f"{exc.strerror or exc}") from exc
            raise exc

    def stop(self) -> None:
        """Stop listening, end the live streams and the requests under way, and join."""
        loop, stop, thread = self._loop, self._stop, self._thread
        if thread is None:
            return
        if loop is not None and stop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already ended
                loop.call_soon_threadsafe(stop.set)
        thread.join()
        self._thread = None

    # -- the web's thread --------------------------------------------------------------------

    def _main(self) -> None:
        try:
            asyncio.run(self._serve())
        except BaseException as exc:
            if not self._ready.is_set():
                self._error = exc
                self._ready.set()
            else:
                log.exception("web: the server stopped on an error")

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._stop = asyncio.Event()
        ctx = self._ssl() if self.tls else None
        lim = self.limits
        self._pool = pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="web-tokens")
        runner = web.AppRunner(self.make_app(), access_log=None)
        listening = None
        try:
            await loop.run_in_executor(pool, _nothing)  # its thread, now, not mid-request
            await runner.setup()
            manager = runner.server
            assert manager is not None
            kw = {"loop": loop, "access_log": None, "keepalive_timeout": lim.keepalive_s,
                  "max_line_size": lim.line, "max_field_size": lim.field,
                  "max_headers": lim.headers, "auto_decompress": False}
            # One made now: an argument this version of aiohttp does not take stops the
            # start, rather than every connection.
            _Handler(self, manager, **kw)
            listening = await loop.create_server(
                lambda: _Handler(self, manager, **kw), self.host, self.port, ssl=ctx,
                reuse_address=True, ssl_handshake_timeout=lim.head_s if ctx else None)
            self.port = listening.sockets[0].getsockname()[1]
            self.bridge.loop = loop
            self._ready.set()
            await self._stop.wait()
        finally:
            self.bridge.loop = None
            if listening is not None:
                listening.close()
            for stream in list(self.streams):
                stream.end()
            if runner.server is not None:
                await runner.server.shutdown(lim.stop_s)
            await runner.cleanup()
            pool.shutdown(wait=True)

    def _ssl(self) -> ssl.SSLContext:
        assert self.tls is not None
        cert, key = self.tls
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(cert, key)
        return ctx

    # -- the app ---------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        """The routes and the middlewares (outermost first: head deadline, errors, host,
        token, origin)."""
        app = web.Application(client_max_size=self.limits.body,
                              middlewares=[self._deadline, self._errors, self._host,
                                           self._auth, self._origin])
        app.on_response_prepare.append(_headers)
        r = app.router
        r.add_get("/", self._index, allow_head=False)
        r.add_get("/static/{name}", self._file, allow_head=False)
        r.add_post("/api/pair", self._pair_open)
        r.add_get("/api/pair/{pid}", self._pair_poll, allow_head=False)
        r.add_get("/api/status", self._status, allow_head=False)
        r.add_post("/api/press", self._press)
        r.add_post("/api/command", self._command)
        r.add_get("/api/events", self._events, allow_head=False)
        r.add_get("/api/luck", self._luck, allow_head=False)
        return app

    @web.middleware
    async def _errors(self, request: web.Request, handler: _Next) -> web.StreamResponse:
        resp = await self._answer(request, handler)
        # A body no one read (refused, or not wanted) is read to its end and dropped before
        # the next request (aiohttp 3.8 stopped reading a connection whose unread body had
        # filled its buffer, and the next request was never answered); a body too big, or
        # too slow, ends the connection with the answer instead.
        if request.body_exists and (resp.status == 413 or not await self._drained(request)):
            resp.force_close()
        return resp

    async def _drained(self, request: web.Request) -> bool:
        """Whether the unread body was read to its end: not if it was too slow, or if the
        client went (a reset or a broken pipe is the client's leaving, not the server's
        error, and is not logged as one)."""
        try:
            await asyncio.wait_for(request.release(), self.limits.body_s)
        except (TimeoutError, ConnectionError):
            return False
        return True

    async def _answer(self, request: web.Request, handler: _Next) -> web.StreamResponse:
        try:
            if len(request.raw_headers) > self.limits.headers:
                # aiohttp's parser counts them from 3.9 on; 3.8's takes any number.
                raise Refused(431, "headers", f"more than {self.limits.headers} headers")
            return await handler(request)
        except Refused as exc:
            return error(exc.status, exc.code, exc.message, **exc.extra)
        except Unavailable as exc:
            return error(503, "unavailable", str(exc))
        except web.HTTPException as exc:
            resp = error(exc.status, _CODES.get(exc.status, "request"), self._say(exc))
            if "Allow" in exc.headers:
                resp.headers["Allow"] = exc.headers["Allow"]
            return resp
        except ConnectionError:
            return error(400, "request", "the connection was lost")  # read by no one
        except Exception:
            log.exception("web: %s %s failed", request.method, request.path)
            return error(500, "internal", "an internal error (logged)")

    def _say(self, exc: web.HTTPException) -> str:
        if exc.status == 404:
            return "no such page or route"
        if exc.status == 405:
            return f"this route does not take that method (it takes {exc.headers.get('Allow')})"
        if exc.status == 413:
            return f"the body is larger than {self.limits.body} bytes"
        return exc.reason

    @web.middleware
    async def _deadline(self, request: web.Request, handler: _Next) -> web.StreamResponse:
        proto = request.protocol
        if isinstance(proto, _Handler):
            proto.busy()
        try:
            return await handler(request)
        finally:
            if isinstance(proto, _Handler) and proto.conn is not None:
                proto.idle()

    @web.middleware
    async def _auth(self, request: web.Request, handler: _Next) -> web.StreamResponse:
        if not request.path.startswith("/api/") or _public(request):
            return await handler(request)
        token = _token(request)
        if token is None:
            raise Refused(401, "token", "this device is not paired: pair it with the "
                                        "launcher's button (POST /api/pair)")
        peer = request.remote or "unknown"
        if self.fails.locked(peer):
            raise Refused(429, "rate", "too many wrong tokens from this address: wait a "
                                       "minute")
        tid = await self._check(token)
        if tid is None:
            self.fails.failed(peer)
            raise Refused(401, "token", "the token is not valid (mistyped, revoked, or unused "
                                        "for too long): pair again")
        held = _TID.set(tid)
        try:
            return await handler(request)
        finally:
            _TID.reset(held)

    @web.middleware
    async def _host(self, request: web.Request, handler: _Next) -> web.StreamResponse:
        if request.path.startswith("/api/") and not _known_host(request.host):
            # DNS rebinding: a page of another site whose name now points at the unit would
            # pass the same-origin check (its Origin and Host agree). It may not open a
            # pairing window someone's hold confirms, nor poll for its token.
            raise Refused(400, "host", "the API answers the unit's own names only (an "
                                       "address, localhost, NAME.local or its host name)")
        return await handler(request)

    @web.middleware
    async def _origin(self, request: web.Request, handler: _Next) -> web.StreamResponse:
        # A route that did not match (404, 405) changes nothing: it is answered as such.
        if (request.method not in ("GET", "HEAD", "OPTIONS")
                and request.match_info.http_exception is None and not _same_origin(request)):
            raise Refused(403, "origin", "a change must come from the panel's own page "
                                         "(Origin or Referer of this host)")
        return await handler(request)

    async def _check(self, token: str) -> str | None:
        try:
            return await self._tokens_do(self.tokens.check, token)
        except OSError as exc:
            raise Refused(503, "io", f"the token store cannot be read: {exc}") from None

    async def _tokens_do(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    # -- the routes ------------------------------------------------------------------------

    async def _index(self, request: web.Request) -> web.Response:
        return self._serve_file("index.html")

    async def _file(self, request: web.Request) -> web.Response:
        return self._serve_file(request.match_info["name"])

    def _serve_file(self, name: str) -> web.Response:
        found = self._files.get(name)
        if found is None:
            raise Refused(404, "not_found", f"no file {name!r} in the panel")
        body, ctype = found
        resp = web.Response(body=body, content_type=ctype,
                            charset="utf-8" if ctype.startswith("text/") else None)
        resp.headers["Cache-Control"] = "no-cache"
        return resp

    async def _pair_open(self, request: web.Request) -> web.Response:
        status, body = await self.bridge.pair_open()
        return web.json_response(body, status=status)

    async def _pair_poll(self, request: web.Request) -> web.Response:
        peer = request.remote or "unknown"
        if self.fails.locked(peer):
            raise Refused(429, "rate", "too many unknown pairings from this address: wait a "
                                       "minute")
        state = await self.bridge.pair_state(request.match_info["pid"])
        if state == "pending":
            return web.json_response({"state": state}, status=202)
        if state in ("expired", "taken"):
            raise Refused(410, "pair", f"this pairing is {state}: start again",
                          {"state": state})
        if state != "granted":
            self.fails.failed(peer)
            raise Refused(404, "pair", "no such pairing")
        try:
            _, token = await self._tokens_do(self.tokens.issue)
        except OSError as exc:
            raise Refused(503, "io", f"the token store cannot be written: {exc}") from None
        resp = web.json_response({"token": token})
        resp.set_cookie(COOKIE, token, max_age=COOKIE_AGE, path="/", httponly=True,
                        samesite="Strict", secure=self.tls is not None)
        return resp

    async def _status(self, request: web.Request) -> web.Response:
        return await self._line_data(request, "status")

    async def _press(self, request: web.Request) -> web.Response:
        return await self._line_data(request, "press")

    async def _line_data(self, request: web.Request, line: str) -> web.Response:
        status, reply = await self.bridge.command(_TID.get(), line)
        return web.json_response(reply["data"] if status == 200 else reply, status=status)

    async def _command(self, request: web.Request) -> web.Response:
        body = await self._json(request)
        line = body.get("line")
        if not isinstance(line, str):
            raise Refused(400, "value", 'the body must be {"line": "a console line"}')
        status, reply = await self.bridge.command(_TID.get(), line)
        return web.json_response(reply, status=status)

    async def _luck(self, request: web.Request) -> web.Response:
        side = request.query.get("side")
        if side is not None and side not in config.SIDES:
            raise Refused(400, "value", f"side must be one of {', '.join(config.SIDES)}")
        status, body = await self.bridge.luck(_TID.get(), side)
        return web.json_response(body, status=status)

    async def _events(self, request: web.Request) -> web.StreamResponse:
        if len(self.streams) >= self.max_streams:
            raise Refused(503, "busy", f"{self.max_streams} live clients already (the "
                                       "most at once: [web] max_streams)")
        stream = Stream(_TID.get(), self.limits.stream_lines)
        self.streams.add(stream)
        proto = request.protocol
        if isinstance(proto, _Handler):
            proto.on_lost.append(stream.end)
        try:
            first = await self.bridge.open_stream(stream)
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               "Cache-Control": "no-store"})
            await resp.prepare(request)
            try:
                await self._send(resp, f"retry: 2000\n\nevent: status\ndata: {first}\n\n")
                await self._relay(stream, resp)
            except ConnectionError:
                pass  # the client went away
            except TimeoutError:
                # It stopped reading: no more waiting on it, not even for the stream's end.
                if request.transport is not None:
                    request.transport.abort()
            return resp
        finally:
            self.streams.discard(stream)
            self.bridge.close_stream(stream)

    async def _relay(self, stream: Stream, resp: web.StreamResponse) -> None:
        lim = self.limits
        loop = asyncio.get_running_loop()
        end = loop.time() + lim.stream_s
        while not stream.closed and loop.time() < end:
            try:
                batch = await asyncio.wait_for(stream.take(), lim.ping_s)
            except TimeoutError:
                await self._send(resp, ": ping\n\n")
                continue
            if stream.closed:
                return
            if stream.overflowed:
                log.info("web: a live client fell %d events behind; dropped", stream.limit)
                return
            await self._send(resp, "".join(f"event: {kind}\ndata: {text}\n\n"
                                           for kind, text in batch))

    async def _send(self, resp: web.StreamResponse, text: str) -> None:
        await asyncio.wait_for(resp.write(text.encode("utf-8")), self.limits.write_s)

    async def _json(self, request: web.Request) -> dict[str, Any]:
        try:
            raw = await asyncio.wait_for(request.read(), self.limits.body_s)
        except TimeoutError:
            raise Refused(408, "timeout", f"the body did not come within "
                                          f"{self.limits.body_s:g} s") from None
        except web.RequestPayloadError:
            raise Refused(400, "request", "the body was cut short") from None
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            raise Refused(400, "json", "the body is not JSON") from None
        if not isinstance(body, dict):
            raise Refused(400, "value", 'the body must be {"line": "a console line"}')
        return body


_Next = Callable[[web.Request], Awaitable[web.StreamResponse]]

_CODES = {400: "request", 401: "token", 403: "origin", 404: "not_found", 405: "method",
          408: "timeout", 413: "too_large", 429: "rate", 431: "headers", 503: "unavailable"}


def _nothing() -> None:
    return None


def _files(folder: Path) -> dict[str, tuple[bytes, str]]:
    """The panel's files, read once: name -> (content, type)."""
    if not folder.is_dir():
        return {}
    return {p.name: (p.read_bytes(), TYPES[p.suffix]) for p in sorted(folder.iterdir())
            if p.is_file() and p.suffix in TYPES}


async def _headers(request: web.Request, resp: web.StreamResponse) -> None:
    resp.headers.update(HEADERS)
    if request.path.startswith("/api/") and "Cache-Control" not in resp.headers:
        resp.headers["Cache-Control"] = "no-store"


def _public(request: web.Request) -> bool:
    resource = request.match_info.route.resource
    return resource is not None and (request.method, resource.canonical) in PUBLIC


def _token(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.cookies.get(COOKIE) or None


def _known_host(host: str) -> bool:
    """Whether a request's Host names this unit: an address, ``localhost``, a ``.local``
    name (avahi's) or the machine's own host name; never another site's."""
    name = host.strip().lower()
    if name.startswith("["):  # [IPv6]:port
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    name = name.removesuffix(".")
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    return name in ("localhost", socket.gethostname().lower()) or name.endswith(".local")


def _same_origin(request: web.Request) -> bool:
    """Whether the request's Origin (else Referer) is this host's own origin."""
    want = f"{request.scheme}://{request.host}".lower()
    origin = request.headers.get("Origin")
    if origin is not None:
        return origin.lower() == want
    referer = request.headers.get("Referer")
    if not referer:
        return False
    try:
        parts = urlsplit(referer)
    except ValueError:
        return False
    return f"{parts.scheme}://{parts.netloc}".lower() == want
