"""Random requests against the real server over the real firmware: paths, methods, headers,
tokens, origins, bodies (console lines, bad JSON, random bytes, huge ones) and bytes that
are not HTTP at all. None may be answered 500, none may carry a traceback, every error is
JSON with its code and message, and the launcher ends in no internal fault.

Seeded (random.Random): a failure names its seed and request number, and replays. The
default suite sends 10,000 requests; the slow tier ten times as many, of other seeds
(`make test-slow`).
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import string
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pytest
from webunit import WAIT, WebUnit

from launcher.web.server import COOKIE, Limits

LINES = ["status", "press", "help", "luck show", "inventory", "stats", "log 5", "side", "pins",
         "version", "profile dealer", "profile deal 3", "profile gin", "profile deal 99",
         "load 30", "load -1", "sleep", "wake", "clear", "debug on", "debug off",
         "motor run 50", "rotate", "json off", "json on", "session new", "seed 7",
         "luck set mild hazard [0.4, 1.0]", "luck set wild sizes [1, 2]",
         "config get timing.jam_timeout_ms", "config set timing.sleep_after_s 120",
         "config set motor.speed 0.5", "config set state.path /etc/passwd", "config save",
         "sounds list", "lid open", "lid close", "lid full", "jam", "unjam", "cards 5",
         "selftest", "reboot-safe", "help luck", "", " ", "ok", "# event x", "\x1b[2J",
         "a" * 300, "status\nmotor run 100", "\u202e\u0000"]
PATHS = ["/", "/static/panel.js", "/static/index.html", "/api/status", "/api/press",
         "/api/command", "/api/events", "/api/luck", "/api/luck?side=wild",
         "/api/luck?side=mild&side=wild", "/api/pair", "/api/pair/abc", "/api/", "/api",
         "/static/", "/static/../../etc/passwd", "/static/%2e%2e/x", "/%00", "/api/status/",
         "//api/status", "/API/STATUS", "/api/status?x=" + "y" * 2000, "/favicon.ico"]
METHODS = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "CONNECT",
           "FOO"]
# The routes as a client of the API calls them, most of the requests' starting point.
CALLS = [("GET", "/api/status"), ("POST", "/api/press"), ("POST", "/api/command"),
         ("POST", "/api/command"), ("POST", "/api/command"), ("GET", "/api/luck?side=mild"),
         ("GET", "/api/luck"), ("POST", "/api/pair"), ("GET", "/api/pair/abc"), ("GET", "/"),
         ("GET", "/static/panel.js"), ("GET", "/api/events")]


@dataclass
class Tally:
    statuses: dict[int, int] = field(default_factory=dict)
    raw: int = 0


def word(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits + "-_.~")
                   for _ in range(rng.randint(0, n)))


def path_of(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.6:
        return rng.choice(PATHS)
    if r < 0.8:
        return "/" + "/".join(quote(word(rng, 12)) for _ in range(rng.randint(1, 5)))
    if r < 0.9:
        return f"/api/pair/{quote(word(rng, 40))}"
    junk = "".join(chr(rng.randint(1, 0x10FFFF)) for _ in range(rng.randint(1, 30)))
    return "/" + quote(junk.encode("utf-8", "surrogatepass"), safe="/?=&")


def body_of(rng: random.Random) -> bytes | None:
    r = rng.random()
    if r < 0.2:
        return None
    if r < 0.55:
        line = rng.choice(LINES) if rng.random() < 0.8 else word(rng, 50)
        return json.dumps({"line": line}).encode()
    if r < 0.65:
        return json.dumps(rng.choice([{"line": 5}, {"line": None}, [], "status", 3,
                                      {"line": ["status"]}, {}])).encode()
    if r < 0.75:
        return rng.choice([b"{", b'{"line": "sta', b"\xff\xfe\x00", b"null", b"[" * 3000,
                           b'{"line": "' + b"\\ud800" + b'"}'])
    if r < 0.85:
        return rng.randbytes(rng.randint(1, 4000))
    if r < 0.97:
        return b"x" * rng.randint(16 * 1024, 200 * 1024)  # beyond the limit
    return b"{" * (2 * 1024 * 1024)  # two megabytes


def headers_of(rng: random.Random, unit: WebUnit) -> dict[str, str]:
    h: dict[str, str] = {}
    r = rng.random()
    if r < 0.65:
        h["Authorization"] = f"Bearer {unit.token}"
    elif r < 0.72:
        h["Cookie"] = f"{COOKIE}={unit.token}"
    elif r < 0.8:
        h["Authorization"] = rng.choice(["Bearer", "Bearer ", "Basic abc", "bearer x" * 50,
                                         f"Bearer {word(rng, 60)}", "Bearer " + "A" * 3000])
    elif r < 0.85:
        h["Cookie"] = rng.choice([f"{COOKIE}=", f"{COOKIE}={word(rng, 50)}", "a=b; c",
                                  f"{COOKIE}=\"x\"; {COOKIE}=y"])
    r = rng.random()
    if r < 0.75:
        h["Origin"] = unit.origin
    elif r < 0.82:
        h["Origin"] = rng.choice(["http://evil.example", "null", "", unit.origin + "/x",
                                  word(rng, 30)])
    elif r < 0.9:
        h["Referer"] = rng.choice([unit.origin + "/", "http://evil.example/", "::::",
                                   "http://[::1", word(rng, 30)])
    if rng.random() < 0.3:
        h["Content-Type"] = rng.choice(["application/json", "text/plain", "multipart/form-data",
                                        "application/json; charset=latin-1", word(rng, 20)])
    for _ in range(rng.randint(0, 3)):
        h[f"X-{word(rng, 10) or 'a'}"] = word(rng, rng.choice([10, 100, 5000]))
    if rng.random() < 0.05:
        h["Content-Encoding"] = "gzip"
    if rng.random() < 0.05:
        h["Expect"] = "100-continue"
    return h


def not_http(rng: random.Random, unit: WebUnit) -> bytes:
    """Bytes on a socket of their own: broken request lines, lengths and framings."""
    ok = f"Host: 127.0.0.1:{unit.port}\r\nAuthorization: Bearer {unit.token}\r\n"
    return rng.choice([
        rng.randbytes(rng.randint(1, 2000)),
        f"GET /api/status HTTP/1.1\r\n{ok}Content-Length: -5\r\n\r\n".encode(),
        f"POST /api/command HTTP/1.1\r\n{ok}Origin: {unit.origin}\r\n"
        "Transfer-Encoding: chunked\r\n\r\nzz\r\n".encode(),
        f"POST /api/command HTTP/1.1\r\n{ok}Origin: {unit.origin}\r\nContent-Length: 4\r\n"
        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n".encode(),
        b"GET /api/status HTTP/9.9\r\n\r\n",
        b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\n: empty\r\n\r\n",
        f"GET /api/status HTTP/1.1\r\n{ok}\r\n".encode() * rng.randint(2, 20),  # pipelined
        b"\r\n\r\n\r\n",
        b"GET / HTTP/1.0\r\n\r\n",
        f"GET /api/status HTTP/1.1\r\n{ok}X: \x00\x01\r\n\r\n".encode(),
    ])


def check(i: int, seed: int, status: int, body: bytes, tally: Tally) -> None:
    where = f"seed {seed}, request {i}"
    tally.statuses[status] = tally.statuses.get(status, 0) + 1
    assert status != 500, f"{where}: 500 {body[:300]!r}"
    assert b"Traceback" not in body and b'File "' not in body, f"{where}: {body[:300]!r}"
    if status >= 400 and body:
        got = json.loads(body)
        assert isinstance(got.get("error"), str) and isinstance(got.get("message"), str), (
            f"{where}: {body[:300]!r}")


def send_raw(data: bytes, unit: WebUnit) -> list[tuple[int, bytes]]:
    """The answers (status, body) to raw bytes, read until the server closes."""
    out = b""
    with socket.create_connection(("127.0.0.1", unit.port), timeout=WAIT) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            while chunk := s.recv(65536):
                out += chunk
        except (ConnectionResetError, BrokenPipeError):
            pass  # the server closed on us, and what it said is in ``out``
    answers = []
    while out.startswith(b"HTTP/1."):
        head, _, rest = out.partition(b"\r\n\r\n")
        status = int(head.split(b" ")[1])
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        answers.append((status, rest[:length]))
        out = rest[length:]
    return answers


def fuzz(unit: WebUnit, n: int, seed: int) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    conn: http.client.HTTPConnection | None = None
    for i in range(n):
        if rng.random() < 0.05:
            tally.raw += 1
            for status, body in send_raw(not_http(rng, unit), unit):
                check(i, seed, status, body, tally)
            continue
        if rng.random() < 0.7:
            method, path = rng.choice(CALLS)
            if rng.random() < 0.1:
                method = rng.choice(METHODS)
        else:
            method, path = rng.choice(METHODS), path_of(rng)
        body, headers = body_of(rng), headers_of(rng, unit)
        if conn is None:
            conn = unit.connect()
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            status = r.status
            data = r.read() if path != "/api/events" or status != 200 else b""
        except (ConnectionError, http.client.HTTPException, BrokenPipeError):
            conn.close()
            conn = None
            continue  # the server closed after an answer, or mid-body after refusing it
        if status == 200 and path == "/api/events":
            conn.close()  # a live stream: not read to its end
            conn = None
            continue
        if r.will_close:
            conn.close()
            conn = None
        check(i, seed, status, data, tally)
    if conn is not None:
        conn.close()
    return tally


def run_fuzz(tmp_path: Path, n: int, seed: int) -> None:
    # Failed tokens limited only far beyond what the fuzz sends, so that its requests reach
    # the routes (the limit has a test of its own).
    unit = WebUnit(tmp_path, limits=Limits(fails=10**9))
    try:
        tally = fuzz(unit, n, seed)
        status = unit.ask("GET", "/api/status")
        assert status.status == 200, status
        assert status.json["fault"] != "internal", status.json
        # The requests reached the routes and their refusals alike.
        for code in (200, 400, 401, 403, 404, 405, 413):
            assert tally.statuses.get(code, 0) > 0, (code, tally)
        assert tally.raw > n // 40
        print(f"fuzz: {n} requests, seed {seed}: {sorted(tally.statuses.items())}, "
              f"{tally.raw} not HTTP")
    finally:
        unit.close()


def test_ten_thousand_random_requests(tmp_path: Path) -> None:
    # 13 s on the 2-core development machine at a load of 2 (pytest --durations): the
    # default suite's.
    run_fuzz(tmp_path, 10_000, seed=4343)


@pytest.mark.slow
def test_a_hundred_thousand_random_requests_of_other_seeds(tmp_path: Path) -> None:
    for seed in range(10):
        (tmp_path / str(seed)).mkdir()
        run_fuzz(tmp_path / str(seed), 10_000, seed=seed)
