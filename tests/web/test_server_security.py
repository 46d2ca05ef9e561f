"""The server's gates: every route refused without a token (the list taken from the app's
own router), cross-origin changes refused, failed tokens rate-limited, the security headers
on every answer, the limits on bodies and headers, and no traceback ever sent."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from webunit import WAIT, WebUnit

from bench import web_fuzz
from bench.web_fuzz import concrete
from launcher.web.server import COOKIE, HEADERS, PUBLIC, Limits


def routes(unit: WebUnit) -> list[tuple[str, str]]:
    return web_fuzz.routes(unit.server)


def test_the_public_routes_are_the_page_and_pairing(shared: WebUnit) -> None:
    every = set(routes(shared))
    assert every >= PUBLIC
    assert {("GET", "/"), ("GET", "/static/{name}"), ("POST", "/api/pair"),
                      ("GET", "/api/pair/{pid}")} == PUBLIC
    assert len(every - PUBLIC) >= 5  # status, press, command, events, luck...


def test_every_other_route_is_refused_without_a_token(shared: WebUnit) -> None:
    closed = [(m, r) for m, r in routes(shared) if (m, r) not in PUBLIC]
    for method, route in closed:
        for token in (None, "not-a-token"):
            a = shared.ask(method, concrete(route), token=token)
            assert a.status == 401, (method, route, token, a)
            assert a.json["error"] == "token" and a.json["message"], a


def test_an_unknown_path_under_the_api_is_401_not_404(shared: WebUnit) -> None:
    # Without a token nothing tells which routes exist.
    assert shared.ask("GET", "/api/nothing-here", token=None).status == 401
    assert shared.ask("GET", "/api/nothing-here").status == 404


def test_a_status_with_a_token_and_with_the_cookie(shared: WebUnit) -> None:
    a = shared.ask("GET", "/api/status")
    assert a.status == 200 and a.json["state"] and a.json["debug"] == "off"
    b = shared.ask("GET", "/api/status", token=None,
                   headers={"Cookie": f"{COOKIE}={shared.token}"})
    assert b.status == 200 and b.json["side"] in ("mild", "wild")


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Origin": "https://127.0.0.1"},  # another scheme and port is another origin
    {"Origin": ""},
    {"Referer": "http://evil.example/panel"},
    {},  # neither: refused too
], ids=["other-host", "null", "other-scheme", "empty", "referer", "none"])
def test_a_cross_origin_post_is_refused(shared: WebUnit, headers: dict[str, str]) -> None:
    before = shared.on_reactor(lambda: shared.app.machine.memory.counters.get("presses", 0))
    c = shared.connect()
    h = {"Authorization": f"Bearer {shared.token}", **headers}
    c.request("POST", "/api/press", headers=h)
    r = c.getresponse()
    body = r.read()
    c.close()
    assert r.status == 403, body
    assert b'"origin"' in body
    after = shared.on_reactor(lambda: shared.app.machine.memory.counters.get("presses", 0))
    assert after == before  # nothing pressed
    # Pairing is a change too.
    c = shared.connect()
    c.request("POST", "/api/pair", headers=headers)
    assert c.getresponse().status == 403
    c.close()


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080",
                                  "launcher.local.evil.example", "127.0.0.1.nip.io"])
def test_another_sites_name_is_refused_though_its_origin_agrees(shared: WebUnit,
                                                                 host: str) -> None:
    """DNS rebinding: a page of another site whose name now points at the unit. Its Origin
    and Host agree, so only the name gives it away: it may neither open a window someone's
    hold would confirm, nor poll one for its token."""
    for method, path in (("POST", "/api/pair"), ("GET", "/api/pair/x"),
                         ("GET", "/api/status")):
        c = shared.connect()
        c.request(method, path, headers={"Host": host, "Origin": f"http://{host}"})
        r = c.getresponse()
        body = r.read()
        c.close()
        assert r.status == 400 and b'"host"' in body, (method, path, r.status, body)


@pytest.mark.parametrize("host", ["launcher.local", "launcher.local.:8080", "LAUNCHER.LOCAL",
                                  "localhost:8080", "192.168.1.20", "[fe80::1]:8080"])
def test_the_units_own_names_pass_the_host_check(shared: WebUnit, host: str) -> None:
    a = shared.ask("GET", "/api/status", headers={"Host": host})
    assert a.status == 200, a


def test_a_same_origin_referer_passes(shared: WebUnit) -> None:
    a = shared.ask("POST", "/api/command", {"line": "status"}, origin=False,
                   headers={"Referer": f"{shared.origin}/panel?x=1"})
    assert a.status == 200, a


def test_failed_tokens_are_rate_limited_by_address(tmp_path: Path) -> None:
    clock = [0.0]
    unit = WebUnit(tmp_path, limits=Limits(fails=5, fails_s=60.0), now=lambda: clock[0])
    try:
        for _ in range(5):
            assert unit.ask("GET", "/api/status", token="wrong").status == 401
        # Now even the right token is refused: a guess that hit would not be told apart.
        a = unit.ask("GET", "/api/status")
        assert a.status == 429 and a.json["error"] == "rate", a
        checks = unit.tokens.checks
        assert unit.ask("GET", "/api/status", token="wrong").status == 429
        assert unit.tokens.checks == checks  # refused unread
        # Unknown pairings count too.
        assert unit.ask("GET", "/api/pair/guess", token=None).status == 429
        clock[0] = 60.5  # the window has passed
        assert unit.ask("GET", "/api/status").status == 200
        # No token at all is not a guess: never counted.
        for _ in range(10):
            assert unit.ask("GET", "/api/status", token=None).status == 401
        assert unit.ask("GET", "/api/status").status == 200
    finally:
        unit.close()


def test_security_headers_on_every_answer(shared: WebUnit) -> None:
    answers = [shared.ask("GET", "/api/status"), shared.ask("GET", "/api/status", token=None),
               shared.ask("GET", "/nowhere"), shared.ask("PUT", "/"),
               shared.ask("POST", "/api/press", headers={"Origin": "http://evil.example"}),
               shared.ask("GET", "/"), shared.ask("GET", "/static/none.js"),
               shared.command("no-such-command")]
    for a in answers:
        for name, value in HEADERS.items():
            assert a.headers.get(name) == value, (a, name)
        assert a.headers.get_content_type() == "application/json" or a.status == 200, a


def raw(unit: WebUnit, data: bytes) -> bytes:
    """Bytes sent on a socket of their own; everything the server answers until it closes."""
    with socket.create_connection(("127.0.0.1", unit.port), timeout=WAIT) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    return out


def head_and_body(answer: bytes) -> tuple[str, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.decode("latin-1"), body


@pytest.mark.parametrize("request_bytes", [
    b"BLAH / HTTP/1.1\r\nHost: x\r\n\r\n",
    b"\x16\x03\x01\x00\xa5\x01\x00\x00",  # a TLS hello on the plain port
    b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",  # request line too long
    b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 5000 + b"\r\n\r\n",  # a header too long
    b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(100))
    + b"\r\n",  # too many headers
    b"POST /api/command HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
], ids=["method", "tls", "line", "header", "headers", "length"])
def test_what_the_parser_refuses_is_answered_in_json(shared: WebUnit,
                                                     request_bytes: bytes) -> None:
    head, body = head_and_body(raw(shared, request_bytes + b"\r\n"))
    # Too many headers: aiohttp's parser refuses them from 3.9 on, the server itself on 3.8.
    assert head.split(" ")[1] in ("400", "431"), head
    assert any(f'"error": "{code}"' in body.decode() for code in ("request", "headers")), body
    assert "application/json" in head and "X-Content-Type-Options: nosniff" in head, head


def test_a_header_under_the_limit_is_read(shared: WebUnit) -> None:
    # The limits above are the server's own, not aiohttp's defaults (which would take 8 KB).
    a = shared.ask("GET", "/api/status", headers={"X-Big": "a" * 3000})
    assert a.status == 200


def test_a_body_too_big_is_413(shared: WebUnit) -> None:
    big = {"line": "status", "pad": "x" * (Limits().body + 1)}
    a = shared.ask("POST", "/api/command", big)
    assert a.status == 413 and a.json["error"] == "too_large", a
    assert str(Limits().body) in a.json["message"]
    a = shared.ask("POST", "/api/command", {"line": "status", "pad": "x" * 1000})
    assert a.status == 200  # well under it: read


def test_bad_bodies_are_named(shared: WebUnit) -> None:
    cases = [(b"{not json", "json"), (b"[1, 2]", "value"), (b'{"line": 3}', "value"),
             (b'{"lines": "status"}', "value"), (b"\xff\xfe", "json"),
             # Too deep for Python 3.11's decoder (RecursionError: "json"); 3.13's reads it,
             # and a list is not the body's shape ("value"). Either way a 400 that names it.
             (b"[" * 5000 + b"]" * 5000, ("json", "value"))]
    for body, code in cases:
        a = shared.ask("POST", "/api/command", body,
                       headers={"Content-Type": "application/json"})
        want = code if isinstance(code, tuple) else (code,)
        assert a.status == 400 and a.json["error"] in want, (body[:20], a)


def test_a_method_a_route_does_not_take(shared: WebUnit) -> None:
    a = shared.ask("DELETE", "/api/status")
    assert a.status == 405 and a.json["error"] == "method", a
    assert "GET" in a.headers["Allow"]
