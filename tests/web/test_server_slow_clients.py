"""Slow and greedy clients: a request head that never ends, a body that never comes, too
many connections, and a live client that falls behind are each cut off, and the server
answers the next client as before.

The limits are shrunk to fractions of a second, and aiohttp's own keep-alive pushed far
beyond them, so that only the server's own deadline can end what it ends. Each test waits
for the server to act (the socket closing, the answer coming) with a socket timeout that
only fails when the safeguard is off.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import replace
from pathlib import Path

from webunit import WAIT, WebUnit

from launcher.web.server import Limits

QUICK = Limits(head_s=0.5, body_s=0.5, keepalive_s=120.0)
NOTICE = 10.0  # s: far beyond QUICK's deadlines, far below the keep-alive


def connect(unit: WebUnit) -> socket.socket:
    return socket.create_connection(("127.0.0.1", unit.port), timeout=NOTICE)


def until_closed(s: socket.socket) -> bytes:
    """Everything the server sends until it closes (socket.timeout if it never does)."""
    out = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return out
        if not chunk:
            return out
        out += chunk


def test_a_head_that_never_ends_is_cut_off(tmp_path: Path) -> None:
    unit = WebUnit(tmp_path, limits=QUICK)
    try:
        with connect(unit) as s:
            s.sendall(b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            assert until_closed(s) == b""  # closed, unanswered
        with connect(unit) as s:  # a connection that never sends a byte, too
            assert until_closed(s) == b""
        # After an answer the next head has its deadline again.
        with connect(unit) as s:
            s.sendall(f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                      f"{unit.token}\r\n\r\n".encode())
            got = until_closed(s)
            assert got.startswith(b"HTTP/1.1 200 ") and got.count(b"HTTP/1.1") == 1
        assert unit.ask("GET", "/api/status").status == 200
    finally:
        unit.close()


def test_a_body_that_never_comes_is_408(tmp_path: Path) -> None:
    unit = WebUnit(tmp_path, limits=QUICK)
    try:
        with connect(unit) as s:
            s.sendall(f"POST /api/command HTTP/1.1\r\nHost: 127.0.0.1:{unit.port}\r\n"
                      f"Origin: {unit.origin}\r\nAuthorization: Bearer {unit.token}\r\n"
                      "Content-Length: 100\r\n\r\n{\"line\": ".encode())
            got = until_closed(s)
        assert got.startswith(b"HTTP/1.1 408 "), got
        assert b'"error": "timeout"' in got
    finally:
        unit.close()


def test_connections_beyond_the_limit_are_closed_as_they_come(tmp_path: Path) -> None:
    unit = WebUnit(tmp_path, limits=replace(QUICK, head_s=60.0, connections=3))
    held = [connect(unit) for _ in range(3)]
    try:
        with connect(unit) as extra:
            assert until_closed(extra) == b""
        held.pop().close()
        for _ in range(1000):  # until the server has seen it go
            with connect(unit) as again:
                again.sendall(f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              f"Connection: close\r\n"
                              f"Authorization: Bearer {unit.token}\r\n\r\n".encode())
                if until_closed(again).startswith(b"HTTP/1.1 200 "):
                    break
        else:
            raise AssertionError("a freed connection was never taken again")
    finally:
        for s in held:
            s.close()
        unit.close()


def test_a_live_client_that_falls_behind_is_dropped(tmp_path: Path) -> None:
    unit = WebUnit(tmp_path, limits=replace(QUICK, stream_lines=4))
    try:
        unit.command("profile deal 3")
        with connect(unit) as s:
            s.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      f"Authorization: Bearer {unit.token}\r\n\r\n".encode())
            first = s.recv(65536)
            assert first.startswith(b"HTTP/1.1 200 "), first
            # The web's loop held up (a busy phone's share of it) while a press makes its
            # burst of events: more than 4 are queued before the client's handler runs.
            loop = unit.server._loop
            assert loop is not None
            held, free = threading.Event(), threading.Event()

            def hold() -> None:
                held.set()
                free.wait(WAIT)

            loop.call_soon_threadsafe(hold)
            assert held.wait(WAIT)
            unit.on_reactor(unit.app.press)
            free.set()
            rest = until_closed(s)
        assert rest.endswith(b"0\r\n\r\n"), rest[-200:]  # the stream's end, not a timeout
        assert b"event: log" not in rest  # dropped: nothing of the burst sent
        assert unit.ask("GET", "/api/status").status == 200
    finally:
        unit.close()
