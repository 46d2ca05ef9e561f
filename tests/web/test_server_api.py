"""The API over the real firmware: status, press, console lines and their errors, a console
session per token, pairing, luck, the live stream and its limit, and the panel's files."""

from __future__ import annotations

import json
import time
from pathlib import Path

from webunit import WAIT, WebUnit

from launcher.firmware.registry import E_DEBUG, E_UNKNOWN, E_USAGE
from launcher.web.server import COOKIE


def test_press_answers_the_consoles_press(unit: WebUnit) -> None:
    before = unit.on_reactor(lambda: unit.app.machine.memory.counters.get("presses", 0))
    a = unit.ask("POST", "/api/press")
    assert a.status == 200 and set(a.json) == {"state"}, a
    after = unit.on_reactor(lambda: unit.app.machine.memory.counters.get("presses", 0))
    assert after == before + 1


def test_a_command_is_the_consoles_json_line(unit: WebUnit) -> None:
    a = unit.command("load 40")
    assert a.status == 200 and a.json == {"ok": True, "data": {"inventory": 40}}, a
    assert unit.serial_says("inventory").startswith("ok inventory=40 ")
    rows = unit.command("log 3").json
    assert rows["ok"] and len(rows["events"]) == 3  # rows come as the console gives them


def test_a_command_with_an_error_is_400_with_the_consoles_error(unit: WebUnit) -> None:
    for line, code in (("fly", E_UNKNOWN), ("load", E_USAGE), ("motor run 100", E_DEBUG)):
        a = unit.command(line)
        assert a.status == 400, a
        assert a.json["ok"] is False and a.json["error"] == code and a.json["message"], a
    a = unit.command("load 9999")
    assert a.status == 400 and "within 0..200" in a.json["message"], a
    a = unit.command("status\nmotor run 100")  # one line only: the console refuses the rest
    assert a.status == 400 and a.json["error"] == "line", a
    a = unit.command("ok")  # reads like the console's own output: not a command
    assert a.status == 400 and a.json["error"] == "line", a


def test_each_token_is_a_session_of_its_own(unit: WebUnit) -> None:
    other = unit.tokens.issue()[1]
    assert unit.command("debug on").json["data"] == {"debug": "on"}
    assert unit.ask("GET", "/api/status").json["debug"] == "on"
    assert unit.ask("GET", "/api/status", token=other).json["debug"] == "off"
    refused = unit.command("motor run 50", token=other)
    assert refused.status == 400 and refused.json["error"] == E_DEBUG
    # Nor does the serial console's session share it.
    assert unit.serial_says("motor run 50").startswith(f"error {E_DEBUG} ")
    assert unit.command("json off").json["error"] == "unavailable"  # JSON it stays


def test_a_value_set_from_the_web_shows_on_the_serial_console(unit: WebUnit) -> None:
    assert unit.command("config set timing.sleep_after_s 200").status == 200
    assert unit.serial_says("config get timing.sleep_after_s") == "ok timing.sleep_after_s=200"
    assert unit.serial_says("luck set wild hazard [0.5, 1.0]").startswith("ok ")
    got = unit.command("config get luck.wild.hazard").json["data"]
    assert got == {"luck.wild.hazard": [0.5, 1.0]}
    assert unit.ask("GET", "/api/luck?side=wild").json["hazard"] == [0.5, 1.0]
    # One save writes both.
    saved = unit.command("config save").json["data"]
    assert saved["saved"] == 2 and saved["written"] is True
    assert "sleep_after_s = 200" in unit.config_path.read_text(encoding="utf-8")


def test_luck_gives_a_sides_row(shared: WebUnit) -> None:
    for side in ("mild", "wild"):
        a = shared.ask("GET", f"/api/luck?side={side}")
        assert a.status == 200 and a.json["side"] == side, a
        assert len(a.json["sizes"]) == len(a.json["weights"]) and a.json["mean_shot"] > 0
    here = shared.ask("GET", "/api/luck").json
    assert here["side"] == here["in_play"]
    a = shared.ask("GET", "/api/luck?side=spicy")
    assert a.status == 400 and a.json["error"] == "value" and "mild" in a.json["message"]


def test_pairing_gives_a_token_once(unit: WebUnit) -> None:
    opened = unit.ask("POST", "/api/pair", token=None)
    assert opened.status == 201 and opened.json["expires_s"] == 30.0, opened
    pid = opened.json["id"]
    assert unit.ask("GET", f"/api/pair/{pid}", token=None).json == {"state": "pending"}
    unit.on_reactor(lambda: unit.pairing.confirm(pid))
    got = unit.ask("GET", f"/api/pair/{pid}", token=None)
    assert got.status == 200, got
    token = got.json["token"]
    cookie = got.headers["Set-Cookie"]
    assert cookie.startswith(f"{COOKIE}={token};")
    for part in ("HttpOnly", "SameSite=Strict", "Path=/"):
        assert part in cookie, cookie
    assert "Secure" not in cookie  # plain HTTP: a Secure cookie would never come back
    again = unit.ask("GET", f"/api/pair/{pid}", token=None)
    assert again.status == 410 and again.json["state"] == "taken", again
    assert unit.ask("GET", "/api/status", token=token).status == 200
    assert unit.ask("GET", "/api/status", token=None,
                    headers={"Cookie": f"{COOKIE}={token}"}).status == 200
    unknown = unit.ask("GET", "/api/pair/nope", token=None)
    assert unknown.status == 404 and unknown.json["error"] == "pair"


def test_pairing_windows_are_rate_limited(unit: WebUnit) -> None:
    for _ in range(unit.pairing.limit):
        assert unit.ask("POST", "/api/pair", token=None).status == 201
    a = unit.ask("POST", "/api/pair", token=None)
    assert a.status == 429 and a.json["error"] == "rate" and a.json["message"], a


def test_a_stopped_unit_refuses_pairing_as_unavailable_not_as_a_rate(unit: WebUnit) -> None:
    unit.pairing.stopped = True
    a = unit.ask("POST", "/api/pair", token=None)
    assert a.status == 503 and a.json == {"error": "unavailable",
                                          "message": "the launcher is stopped for a restart"}, a


class Events:
    """A live stream read line by line (the socket's timeout fails a hang)."""

    def __init__(self, unit: WebUnit, token: str | None = None) -> None:
        self.conn = unit.connect()
        self.conn.request("GET", "/api/events",
                          headers={"Authorization": f"Bearer {token or unit.token}"})
        self.resp = self.conn.getresponse()
        self.deadline = time.monotonic() + WAIT

    def next(self) -> tuple[str, str]:
        """The next event: (kind, data)."""
        kind = data = ""
        while True:
            assert time.monotonic() < self.deadline, "no event in time (a hang)"
            line = self.resp.fp.readline().decode()
            assert line, "the stream ended"
            line = line.rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif line == "" and kind:
                return kind, data

    def until(self, want: str, data_has: str = "") -> dict:
        for _ in range(500):
            kind, data = self.next()
            if kind == want and data_has in data:
                return json.loads(data)
        raise AssertionError(f"no {want} event with {data_has!r}")

    def close(self) -> None:
        self.conn.close()


def test_a_live_client_hears_a_press(unit: WebUnit) -> None:
    e = Events(unit)
    try:
        assert e.resp.status == 200
        assert e.resp.headers["Content-Type"] == "text/event-stream"
        assert e.resp.headers["X-Content-Type-Options"] == "nosniff"
        first = e.until("status")  # on connect
        assert first["state"] == "ready" and first["debug"] == "off"
        assert first["inventory"] == 84
        assert unit.command("profile deal 2").status == 200  # every press shoots 2 cards
        e.until("log", '"event":"profile"')
        unit.ask("POST", "/api/press")
        shot = e.until("log", '"event":"shoot"')
        assert shot["data"]["cards"] == 2 and shot["t"] > 0
        status = e.until("status", '"inventory":82')  # after the last card is out
        assert {"state", "side", "escalation", "lid", "motor"} <= set(status)
    finally:
        e.close()


def test_live_clients_are_limited(tmp_path: Path) -> None:
    unit = WebUnit(tmp_path, max_streams=2)
    streams = []
    try:
        for _ in range(2):
            streams.append(Events(unit))
            assert streams[-1].resp.status == 200
            streams[-1].until("status")
        a = unit.ask("GET", "/api/events")
        assert a.status == 503 and a.json["error"] == "busy", a
        streams.pop().close()
        # Its slot is free once the server has seen it go: a new one is let in.
        for _ in range(int(WAIT * 10)):
            again = Events(unit)
            if again.resp.status == 200:
                break
            again.resp.read()
            again.close()
        else:
            raise AssertionError("the closed stream's slot never came free")
        streams.append(again)
        again.until("status")
    finally:
        for s in streams:
            s.close()
        unit.close()


def test_the_panels_files(tmp_path: Path) -> None:
    static = tmp_path / "static"
    static.mkdir()
    (static / "index.html").write_text("<!doctype html><title>launcher</title>")
    (static / "panel.js").write_text("'use strict';")
    (static / "notes.txt").write_text("not served")
    unit = WebUnit(tmp_path, static=static)
    try:
        page = unit.ask("GET", "/", token=None)
        assert page.status == 200 and page.body.startswith(b"<!doctype html>")
        assert page.headers["Content-Type"] == "text/html; charset=utf-8"
        js = unit.ask("GET", "/static/panel.js", token=None)
        assert js.status == 200 and js.headers.get_content_type() == "text/javascript"
        for path in ("/static/notes.txt", "/static/..%2Fpanel.js", "/static/%2e%2e%2fx",
                     "/static/index.html/x"):
            a = unit.ask("GET", path, token=None)
            assert a.status == 404 and a.json["error"] == "not_found", (path, a)
    finally:
        unit.close()
