"""The bridge: every request runs on the reactor thread, a hung reactor is a 503 and never a
hung server (and a request given up on never runs), the number waiting is bounded, web
sessions are kept for the most recent clients, and their `debug on` lapses as the serial
console's does (on a manual reactor: no waiting)."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path

import pytest
from webunit import WAIT, WebUnit

from launcher.core import config
from launcher.firmware.console import Console
from launcher.sim.rig import SimRig
from launcher.web.bridge import Bridge, Unavailable


def presses(unit: WebUnit) -> int:
    return unit.on_reactor(lambda: unit.app.machine.memory.counters.get("presses", 0))


def test_every_line_runs_on_the_reactor_thread(unit: WebUnit,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    handle = Console.handle_line

    def spy(self: Console, line: str | bytes) -> list[str]:
        threads.append(threading.current_thread().name)
        return handle(self, line)

    monkeypatch.setattr(Console, "handle_line", spy)
    unit.ask("GET", "/api/status")
    unit.ask("POST", "/api/press")
    unit.command("luck show")
    unit.ask("GET", "/api/luck?side=mild")
    assert threads == ["reactor"] * 4


class Hung:
    """The reactor stuck in a callback until released."""

    def __init__(self, unit: WebUnit) -> None:
        self.release = threading.Event()
        entered = threading.Event()

        def stuck() -> None:
            entered.set()
            self.release.wait(WAIT)

        unit.reactor.post(stuck)
        assert entered.wait(WAIT)


def test_a_hung_reactor_is_a_503_and_the_press_never_plays(tmp_path: Path) -> None:
    unit = WebUnit(tmp_path, timeout=0.3)
    try:
        before = presses(unit)
        hung = Hung(unit)
        try:
            a = unit.ask("POST", "/api/press")
            assert a.status == 503 and a.json["error"] == "unavailable", a
            assert "did not answer within 0.3 s" in a.json["message"]
            assert "was not run" in a.json["message"]
            assert unit.ask("GET", "/api/status").status == 503
            assert unit.ask("GET", "/api/events").status == 503
        finally:
            hung.release.set()
        assert presses(unit) == before  # the press it gave up on was dropped, not queued
        assert unit.ask("GET", "/api/status").status == 200  # and the web is well again
    finally:
        unit.close()


def test_requests_waiting_for_the_reactor_are_bounded(unit: WebUnit) -> None:
    bridge = Bridge(unit.app, unit.serial.config, timeout=0.3, waiting=3)

    async def many() -> list[object]:
        calls = [bridge.command("t", "status") for _ in range(4)]
        return await asyncio.gather(*calls, return_exceptions=True)

    hung = Hung(unit)
    try:
        got = asyncio.run(many())
    finally:
        hung.release.set()
    refused = [str(g) for g in got if isinstance(g, Unavailable)]
    assert len(refused) == 4, got
    assert sum("3 requests already wait" in r for r in refused) == 1, refused
    unit.on_reactor(bridge.close)


def test_sessions_beyond_the_limit_close_the_least_recent(unit: WebUnit) -> None:
    bridge = Bridge(unit.app, unit.serial.config, sessions=2)

    async def run() -> list[str]:
        for tid in ("a", "b"):
            await bridge.command(tid, "debug on")
        await bridge.command("a", "status")  # a is now the more recent
        await bridge.command("c", "status")  # b goes
        out = []
        for tid in ("a", "b"):
            _, reply = await bridge.command(tid, "status")
            out.append(reply["data"]["debug"])
        return out

    try:
        # b's session was closed: it comes back fresh, and evicts c.
        assert asyncio.run(run()) == ["on", "off"]
    finally:
        unit.on_reactor(bridge.close)


def test_an_unexpected_exception_is_a_500_without_its_traceback(
        unit: WebUnit, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    async def broken(tid: str, line: str) -> tuple[int, dict]:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(unit.bridge, "command", broken)
    with caplog.at_level(logging.ERROR, logger="launcher.web"):
        a = unit.ask("GET", "/api/status")
    assert a.status == 500 and a.json == {"error": "internal",
                                          "message": "an internal error (logged)"}, a
    assert b"Traceback" not in a.body and b"secret" not in a.body
    (record,) = [r for r in caplog.records if r.name == "launcher.web"]
    assert record.exc_info is not None and "GET /api/status" in record.getMessage()


def test_a_web_sessions_debug_mode_lapses_as_the_consoles_does() -> None:
    rig = SimRig(seed=1)
    serial = Console(rig.app, raw_config=config.default_raw())
    bridge = Bridge(rig.app, serial.config)
    try:
        web = bridge.console("phone")  # the reactor thread's side: the rig's own thread here
        assert json.loads(web.handle_line("debug on")[-1])["data"] == {"debug": "on"}
        idle = serial.config.debug_idle
        rig.advance(idle - 1)
        assert json.loads(web.handle_line("status")[-1])["data"]["debug"] == "on"
        rig.advance(idle + 1)  # no line for longer than console.debug_idle_s
        assert json.loads(web.handle_line("status")[-1])["data"]["debug"] == "off"
        assert bridge.console("phone") is web  # the same session, its debug mode lapsed
    finally:
        bridge.close()
        serial.close()
        rig.close()


def test_a_bug_on_the_reactor_side_faults_the_launcher(unit: WebUnit,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> str:
        raise RuntimeError("pairing bug")

    monkeypatch.setattr(unit.pairing, "open", broken)
    a = unit.ask("POST", "/api/pair", token=None)
    assert a.status == 500 and a.json["error"] == "internal" and b"pairing bug" not in a.body
    status = unit.ask("GET", "/api/status").json
    assert status["state"] == "fault" and status["fault"] == "internal", status
