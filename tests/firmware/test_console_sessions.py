"""A console session per client: pty clients coming and going, socket:// clients, a bare
serial line where `debug on` lapses and the client asks for a fresh session."""

from __future__ import annotations

import io
import json
import socket

import pytest
import serial
from consoles import (
    WAIT,
    Fixture,
    PtyUnit,
    SocketPeer,
    console_command,
    firmware_on_master,
    pump,
    wakeful,
)
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from launcher.cli import console_client as console_cli
from launcher.core import machine as m
from launcher.firmware.console import Console
from launcher.firmware.transport import (
    RETRY,
    SerialTransport,
)
from launcher.sim.rig import SimRig

# --- a session per client ----------------------------------------------------------------
# Issue 31: on `launcher run --simulated`'s pty, client 1 sent `debug on` and left; client 2
# got debug=on, and client 3 ran `motor run 300` and moved gated keys without a `debug on`
# of its own. `json on` carried over the same way, and a debug run outlived its client.


def test_each_pty_client_starts_in_text_mode_with_debug_off(unit: PtyUnit) -> None:
    unit.connect()
    assert unit.ask("debug on") == "ok debug=on"
    assert unit.ask("json on") == '{"ok":true,"data":{"json":"on"}}'
    unit.leave()
    assert not unit.console.session.debug and not unit.console.session.json  # as soon as it left
    unit.connect()
    status = unit.ask("status")
    assert status.startswith("ok state=ready ") and status.endswith(" debug=off")
    assert unit.ask("motor run 300").startswith("error debug ")
    assert unit.ask("config set timing.max_run_ms 15000").startswith("error debug ")
    assert unit.rig.app.board.motor.speed == 0


def test_a_debug_run_does_not_outlive_its_pty_client(unit: PtyUnit) -> None:
    unit.connect()
    unit.ask("debug on")
    assert unit.ask("motor run 300") == "ok motor=on ms=300 speed=0.85"
    started = unit.rig.now
    unit.leave()
    assert unit.rig.state == m.READY and unit.rig.now - started < 0.3
    assert unit.rig.app.events("debug_run_end")[-1][1]["end"] == "stopped"


def test_a_pty_without_a_client_keeps_running_and_drops_its_events(unit: PtyUnit) -> None:
    """Nobody connected: events go nowhere (no session), and the next client starts at
    the banner, not at what happened before it came."""
    unit.rig.app.load(7)
    assert unit.transport.session is None
    client = unit.connect()
    assert client.lines == [unit.console.banner()]
    assert unit.ask("inventory").startswith("ok inventory=7 ")


GATED_LINES = ("motor run 40", "config set timing.max_run_ms 9000", "config set motor.speed 0.9",
               "rotate")


def _error_code(reply: str) -> str | None:
    if reply.startswith("{"):
        obj = json.loads(reply)
        return None if obj["ok"] else obj["error"]
    return reply.split()[1] if reply.startswith("error ") else None


class ClientsComeAndGo(RuleBasedStateMachine):
    """Clients connect to the pty and leave between commands; none ever gets a gated
    command through without a `debug on` of its own, nor starts in JSON mode."""

    def __init__(self) -> None:
        super().__init__()
        self.unit = PtyUnit()
        self.connected = False
        self.own_debug = False
        self.json = False

    @precondition(lambda self: not self.connected)
    @rule()
    def connect(self) -> None:
        self.unit.connect()
        self.connected, self.own_debug, self.json = True, False, False
        assert not self.unit.ask("status").startswith("{")  # text, whatever the last left

    @precondition(lambda self: self.connected)
    @rule()
    def leave(self) -> None:
        self.unit.leave()
        self.connected = False

    @precondition(lambda self: self.connected)
    @rule(on=st.booleans())
    def debug(self, on: bool) -> None:
        assert _error_code(self.unit.ask(f"debug {'on' if on else 'off'}")) is None
        self.own_debug = on

    @precondition(lambda self: self.connected)
    @rule(on=st.booleans())
    def json_mode(self, on: bool) -> None:
        assert _error_code(self.unit.ask(f"json {'on' if on else 'off'}")) is None
        self.json = on

    @precondition(lambda self: self.connected)
    @rule(line=st.sampled_from(GATED_LINES))
    def gated(self, line: str) -> None:
        code = _error_code(self.unit.ask(line))
        if self.own_debug:
            assert code != "debug"  # it may still be refused for the state (a run going on)
        else:
            assert code == "debug", line

    @precondition(lambda self: self.connected)
    @rule()
    def status(self) -> None:
        reply = self.unit.ask("status")
        assert reply.startswith("{") == self.json
        debug = json.loads(reply)["data"]["debug"] if self.json else reply.rsplit("=", 1)[1]
        assert debug == ("on" if self.own_debug else "off")

    def teardown(self) -> None:
        self.unit.close()


ClientsComeAndGo.TestCase.settings = settings(
    max_examples=12, stateful_step_count=14, deadline=None,
    suppress_health_check=[HealthCheck.too_slow])
test_pty_clients_never_inherit_a_session = ClientsComeAndGo.TestCase


def test_a_second_socket_client_starts_fresh_and_a_debug_run_ends_with_the_first() -> None:
    rig = SimRig()
    wake = wakeful(rig)
    server = socket.create_server(("127.0.0.1", 0))
    console = Console(rig.app, sim=rig.sim)
    t = SerialTransport(console, rig.reactor, f"socket://127.0.0.1:{server.getsockname()[1]}")
    peers: list[SocketPeer] = []

    def ask(peer: SocketPeer, line: str) -> str:
        start = len(peer.reader.lines)
        peer.reader.send(line)
        pump(rig, t, wake, lambda: any(console_cli.is_final(x)
                                       for x in peer.reader.lines[start:]))
        return next(x for x in peer.reader.lines[start:] if console_cli.is_final(x))

    try:
        assert t.start()
        peers.append(SocketPeer(server, wake))
        ask(peers[0], "debug on")
        ask(peers[0], "json on")
        assert ask(peers[0], "motor run 300").startswith('{"ok":true')
        started = rig.now
        peers[0].close()
        pump(rig, t, wake, lambda: t.session is None)
        assert rig.state == m.READY and rig.now - started < 0.3  # the run ended with it
        rig.advance(RETRY)  # the firmware connects again: the server's next client
        peers.append(SocketPeer(server, wake))
        status = ask(peers[1], "status")
        assert status.startswith("ok state=ready ") and status.endswith(" debug=off")
        assert ask(peers[1], "motor run 300").startswith("error debug ")
    finally:
        t.stop()
        for peer in peers:
            peer.close()
        server.close()
        rig.close()


def test_debug_lapses_after_debug_idle_s_on_a_bare_serial_line(fx: Fixture) -> None:
    """A pty pair standing in for the Pi's UART: the firmware has the slave as its port
    and cannot tell who is at the other end, so `debug on` lapses by itself."""
    fx.serial().start()
    fx.pump(fx.lines_after(1))
    idle = fx.console.config.debug_idle
    assert idle == 120
    assert fx.ask("debug on") == ["ok debug=on"]
    fx.rig.advance(idle - 0.5)
    fx.ask("status")  # a line: the idle time starts again
    fx.rig.advance(idle - 0.1)
    assert fx.console.session.debug
    fx.rig.advance(0.2)
    assert not fx.console.session.debug
    fx.pump(lambda: "# event debug_off reason=idle idle_s=120" in fx.peer.lines)
    assert fx.ask("motor run 100")[-1].startswith("error debug ")


def test_the_client_asks_for_a_fresh_session_on_a_bare_line(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The last person left debug and JSON on; `launcher console` does not inherit them."""
    with firmware_on_master() as unit:
        unit.transport.start()
        with unit.reactor_thread():
            before = serial.Serial(unit.path, timeout=WAIT)
            before.write(b"debug on\r\njson on\r\n")
            while before.read_until(b"\n") != b'{"ok":true,"data":{"json":"on"}}\r\n':
                pass
            before.close()
            args = console_command(unit.path, "--wait", "5")
            monkeypatch.setattr("sys.stdin", io.StringIO("status\nmotor run 100\n"))
            code = args.func(args)
    out = capsys.readouterr().out.splitlines()
    assert code == 1  # the motor run was refused
    assert out[0].startswith("ok state=ready ") and out[0].endswith(" debug=off")
    assert out[1].startswith("error debug motor run ")
    assert not [x for x in out if "session=" in x]  # the handshake is not the output
