"""Console transports over real ports: pty pairs, loop://, pipes; flood, unplug, the client.

The rig's manual reactor is driven by the test thread (or by one pump thread); transport
threads only post to it. Waits are blocking reads on queues with timeouts, never sleeps.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import io
import itertools
import json
import logging
import os
import queue
import select
import socket
import struct
import termios
import threading
import tty
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import serial
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from launcher.cli import console_client as console_cli
from launcher.core import machine as m
from launcher.core.reactor import NEVER
from launcher.firmware.channels import PtyChannel
from launcher.firmware.console import Console
from launcher.firmware.transport import (
    BUDGET,
    INBOX_LINES,
    OUTBOX_LINES,
    PTY_LOOK,
    RETRY,
    TICK,
    LineFramer,
    Overlong,
    PtyTransport,
    SerialTransport,
    StreamTransport,
)
from launcher.sim.rig import SimRig

WAIT = 10.0  # seconds a test waits for something that should come at once


# --- the framer --------------------------------------------------------------------------


def test_framer_ends_lines_at_cr_lf_and_crlf() -> None:
    f = LineFramer()
    assert f.feed(b"a\nb\rc\r\nd") == [b"a", b"b", b"c"]
    assert f.pending == 1
    assert f.feed(b"\r") == [b"d"]
    assert f.feed(b"\n") == []  # the LF of a CR LF split across reads
    assert f.feed(b"\n") == [b""]
    assert f.feed(b"\r\r\n\n") == [b"", b"", b""]


def test_framer_cuts_long_lines_and_keeps_only_their_size() -> None:
    f = LineFramer(limit=8)
    assert f.feed(b"12345678\n") == [b"12345678"]
    assert f.feed(b"123456789\n") == [Overlong(9)]
    assert f.feed(b"x" * 5000) == []
    assert len(f._buf) <= 9  # a long line is not kept in memory
    assert f.feed(b"y" * 5000 + b"\nok\n") == [Overlong(10000), b"ok"]


# --- harness -----------------------------------------------------------------------------


def wakeful(rig: SimRig) -> queue.Queue[str]:
    """A queue that gets an item whenever another thread posts to the rig's reactor."""
    wake: queue.Queue[str] = queue.Queue()
    post = rig.reactor.post

    def posted(callback: Callable[[], object]) -> None:
        post(callback)
        wake.put("post")

    rig.reactor.post = posted  # type: ignore[method-assign]
    return wake


class PtyPeer:
    """The test's end of a pty pair: it writes to the master and collects lines from it."""

    def __init__(self, wake: queue.Queue[str]) -> None:
        self.master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo before the firmware opens (and configures) it
        self.name = os.ttyname(self._slave)
        self.wake = wake
        self.lines: list[str] = []
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._collect, name="pty-peer", daemon=True)
        self._thread.start()

    def _collect(self) -> None:
        buf = b""
        while True:
            ready, _, _ = select.select([self.master, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            buf += data
            while b"\r\n" in buf:
                line, buf = buf.split(b"\r\n", 1)
                self.lines.append(line.decode("utf-8"))
                self.wake.put("line")

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def unplug(self) -> None:
        if self._stop_w < 0:
            return
        os.write(self._stop_w, b"x")
        self._thread.join(WAIT)
        for fd in (self.master, self._slave, self._stop_r, self._stop_w):
            os.close(fd)
        self._stop_w = -1

    close = unplug


def pump(rig: SimRig, transport: Any, wake: queue.Queue[str], until: Callable[[], bool]) -> None:
    """Run the reactor until ``until()``; block on the wake queue whenever nothing is queued."""
    while not until():
        rig.advance(TICK)
        if until():
            return
        if not transport.inbox.pending:
            try:
                wake.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"nothing happened for {WAIT}s") from None


class Fixture:
    """A rig, a console and a pty peer; the transport is made by each test."""

    def __init__(self) -> None:
        self.rig = SimRig()
        self.wake = wakeful(self.rig)
        self.console = Console(self.rig.app, sim=self.rig.sim)
        self.peer = PtyPeer(self.wake)
        self.transport: Any = None

    def serial(self, url: str | None = None, **kw: Any) -> SerialTransport:
        self.transport = SerialTransport(self.console, self.rig.reactor, url or self.peer.name,
                                         **kw)
        return self.transport

    def pump(self, until: Callable[[], bool]) -> None:
        pump(self.rig, self.transport, self.wake, until)

    def lines_after(self, n: int) -> Callable[[], bool]:
        return lambda: len(self.peer.lines) >= n

    def ask(self, line: str, finals: int = 1) -> list[str]:
        """Send a line; the lines that came back up to its final line(s)."""
        start = len(self.peer.lines)
        self.peer.send(line.encode("utf-8") + b"\r\n")

        def done() -> bool:
            return sum(console_cli.is_final(x) for x in self.peer.lines[start:]) >= finals

        self.pump(done)
        return self.peer.lines[start:]

    def close(self) -> None:
        if self.transport is not None:
            self.transport.stop()
        self.peer.close()
        self.rig.close()


@pytest.fixture
def fx() -> Iterator[Fixture]:
    f = Fixture()
    yield f
    f.close()


# --- a real serial.Serial on a pty -------------------------------------------------------


def test_pty_banner_then_commands_with_crlf(fx: Fixture) -> None:
    t = fx.serial()
    assert t.start()
    assert isinstance(t.session.channel.port, serial.Serial)  # type: ignore[union-attr]
    assert t.session.channel.port.baudrate == 115200  # type: ignore[union-attr]
    fx.pump(fx.lines_after(1))
    assert fx.peer.lines[0] == fx.console.banner()
    assert fx.ask("status")[-1].startswith("ok state=ready side=mild ")
    start = len(fx.peer.lines)
    assert fx.ask("lid full")[0] == "ok lid=full"
    fx.pump(fx.lines_after(start + 7))
    assert fx.peer.lines[start:] == [
        "ok lid=full",
        "# event state from=ready to=lid_open on=lid_left_closed",
        "# event cue name=lid_open", "# event lid position=open",
        "# event led pattern=fast_blink",
        "# event state from=lid_open to=rotating on=lid_full", "# event lid position=full"]


def test_bytes_sent_before_the_port_opened_are_lost(fx: Fixture) -> None:
    """Why clients wait for the banner: Serial.open() drops what came before it."""
    fx.peer.send(b"load 5\r\n")
    t = fx.serial()
    assert t.start()
    fx.pump(fx.lines_after(1))
    assert fx.ask("load 6") == ["# event loaded cards=6", "ok inventory=6"]
    assert fx.peer.lines == [fx.console.banner(), "# event loaded cards=6", "ok inventory=6"]


def test_pty_bad_lines_get_errors_and_the_console_goes_on(fx: Fixture) -> None:
    fx.serial().start()
    fx.pump(fx.lines_after(1))
    assert fx.ask("x" * 300) == ["error line too long (300 bytes; at most 256)"]
    assert fx.ask("y" * 100_000) == ["error line too long (100000 bytes; at most 256)"]
    assert fx.ask("\xff\xfe".encode("latin-1").decode("latin-1")) == ["error unknown no command "
                                                                      "'ÿþ'; `help` lists them"]
    fx.peer.send(b"\xff\xfe\r\n")
    fx.pump(fx.lines_after(len(fx.peer.lines) + 1))
    assert fx.peer.lines[-1] == "error line not UTF-8 (byte 0xff at offset 0)"
    assert fx.ask("sta\x1btus") == ["error line control character U+001B at offset 3"]
    assert fx.ask("status")[-1].startswith("ok state=ready")


def test_unplug_and_replug_reopens_the_port_from_a_reactor_timer(
        fx: Fixture, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    link = tmp_path / "ttyLAUNCHER"  # as udev's /dev/serial/by-id names do
    link.symlink_to(fx.peer.name)
    t = fx.serial(str(link))
    assert t.start()
    fx.pump(fx.lines_after(1))
    fx.ask("debug on")
    # Unplug: the port fails under the reader; the transport notices and waits.
    fx.peer.unplug()
    link.unlink()
    with caplog.at_level(logging.WARNING, logger="launcher.console"):
        fx.pump(lambda: t.session is None)
        assert fx.rig.now < t._timer.waketime <= fx.rig.now + RETRY
        assert not fx.console.session.debug  # a lost connection ends debug mode
        tries = [t._timer.waketime]
        for _ in range(3):
            fx.rig.advance(t._timer.waketime - fx.rig.now)
            tries.append(t._timer.waketime)
        assert t.session is None
        # Backing off: an asleep launcher without its cable is not woken every second.
        gaps = [b - a for a, b in itertools.pairwise(tries)]
        assert gaps == pytest.approx([2 * RETRY, 4 * RETRY, 8 * RETRY])
    assert caplog.text.count("cannot open") == 1  # one complaint, not one a second
    # Replug: a new device behind the same name; the next retry opens it and greets.
    fx.peer = PtyPeer(fx.wake)
    link.symlink_to(fx.peer.name)
    fx.rig.advance(t._timer.waketime - fx.rig.now)
    assert t.session is not None and t.opens == 2
    fx.pump(fx.lines_after(1))
    assert fx.peer.lines[0] == fx.console.banner()
    assert fx.ask("status")[-1].endswith(" debug=off")
    assert t._timer.waketime == NEVER


class HeldClose:
    """A real pyserial port whose ``close`` waits until the test lets it go on.

    pyserial's socket:// close sleeps 0.3 s, and a writer stuck in a write holds the reader
    for up to WRITE_TIMEOUT: a loss that reached the reactor only after the close would
    stop a debug run late. With the close held, the run must end while it is held.
    """

    def __init__(self, port: Any) -> None:
        self._port = port
        self.closing = threading.Event()
        self.go_on = threading.Event()
        self.held_too_long = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._port, name)

    def close(self) -> None:
        self.closing.set()
        self.held_too_long = not self.go_on.wait(WAIT)
        self._port.close()


def _lose_the_peer_mid_debug_run(rig: SimRig, t: SerialTransport, wake: queue.Queue[str],
                                 send: Callable[[bytes], None], drop: Callable[[], None],
                                 held: list[HeldClose]) -> None:
    send(b"debug on\r\nmotor run 250\r\n")
    pump(rig, t, wake, lambda: rig.state == m.DEBUG_RUN)
    started = rig.now
    drop()
    pump(rig, t, wake, lambda: rig.state == m.READY)
    _, data = rig.app.events("debug_run_end")[-1]
    assert data["end"] == "stopped" and rig.now - started < 0.25  # not by its own timer
    assert rig.app.board.motor.speed == 0 and not t.console.session.debug
    held[0].go_on.set()  # only now may the port close
    assert held[0].closing.wait(WAIT) and t.session is None
    t.stop()
    assert not held[0].held_too_long


def test_a_lost_socket_url_ends_a_debug_run_before_the_port_closes() -> None:
    """socket:// (a loopback TCP peer): the peer hangs up mid-run; the run stops at once."""
    rig = SimRig()
    wake = wakeful(rig)
    server = socket.create_server(("127.0.0.1", 0))
    url = f"socket://127.0.0.1:{server.getsockname()[1]}"
    held: list[HeldClose] = []
    t = SerialTransport(Console(rig.app, sim=rig.sim), rig.reactor, url)
    t._opener = lambda: held.append(HeldClose(SerialTransport._open(t))) or held[-1]
    try:
        assert t.start()
        server.settimeout(WAIT)
        peer, _ = server.accept()
        _lose_the_peer_mid_debug_run(rig, t, wake, peer.sendall, peer.close, held)
    finally:
        held and held[0].go_on.set()
        t.stop()
        server.close()
        rig.close()


def test_a_lost_pty_ends_a_debug_run_before_the_port_closes(fx: Fixture) -> None:
    held: list[HeldClose] = []
    t = fx.serial()
    t._opener = lambda: held.append(HeldClose(SerialTransport._open(t))) or held[-1]
    try:
        assert t.start()
        fx.pump(fx.lines_after(1))
        _lose_the_peer_mid_debug_run(fx.rig, t, fx.wake, fx.peer.send, fx.peer.unplug, held)
    finally:
        held and held[0].go_on.set()


def test_stopping_the_transport_ends_a_debug_run_before_the_port_closes(fx: Fixture) -> None:
    """The owner's stop (SIGTERM): the run ends first, and its end event still gets out."""
    held: list[HeldClose] = []
    t = fx.serial()
    t._opener = lambda: held.append(HeldClose(SerialTransport._open(t))) or held[-1]
    stopper = threading.Thread(target=t.stop, name="owner-stop", daemon=True)
    try:
        assert t.start()
        fx.pump(fx.lines_after(1))
        fx.ask("debug on")
        fx.ask("motor run 250", finals=1)
        assert fx.rig.state == m.DEBUG_RUN
        stopper.start()
        assert held[0].closing.wait(WAIT)  # the port is closing, held there ...
        assert fx.rig.state == m.READY  # ... and the run is over already
        assert fx.rig.app.events("debug_run_end")[-1][1]["end"] == "stopped"
        held[0].go_on.set()
        stopper.join(WAIT)
        while not any(x.startswith("# event debug_run_end end=stopped ") for x in fx.peer.lines):
            fx.wake.get(timeout=WAIT)  # flushed before the port closed; the peer reads it
    finally:
        held and held[0].go_on.set()
        fx.transport = None


def test_end_of_input_ends_a_debug_run_on_stdin_too() -> None:
    rig = SimRig()
    wake = wakeful(rig)
    rfd, wfd = os.pipe()
    t = StreamTransport(Console(rig.app, sim=rig.sim), rig.reactor, rfd, Out(wake))
    try:
        t.start()
        os.write(wfd, b"debug on\nmotor run 250\n")
        pump(rig, t, wake, lambda: rig.state == m.DEBUG_RUN)
        os.close(wfd)
        pump(rig, t, wake, lambda: rig.state == m.READY)
        assert rig.app.events("debug_run_end")[-1][1]["end"] == "stopped"
    finally:
        t.stop()
        os.close(rfd)
        rig.close()


def test_a_second_opener_of_the_port_is_locked_out(fx: Fixture) -> None:
    """Two readers of one tty would each get half of every line; the second one waits."""
    assert fx.serial().start()
    other_rig = SimRig()
    other = SerialTransport(Console(other_rig.app), other_rig.reactor, fx.peer.name)
    try:
        assert not other.start()
        with pytest.raises(serial.SerialException, match="exclusively lock"):
            serial.serial_for_url(fx.peer.name, exclusive=True)
        fx.transport.stop()
        fx.transport = None
        other_rig.advance(RETRY)
        assert other.session is not None  # the port is free again: the retry takes it
    finally:
        other.stop()
        other_rig.close()


def test_open_failure_retries_on_a_timer() -> None:
    rig = SimRig()
    console = Console(rig.app)
    attempts: list[float] = []

    def opener() -> Any:
        attempts.append(rig.now)
        if len(attempts) < 4:
            raise serial.SerialException("no such port")
        return serial.serial_for_url("loop://", timeout=0.2)

    t = SerialTransport(console, rig.reactor, "/dev/nothing", opener=opener)
    try:
        assert not t.start()
        rig.advance(RETRY * 7 + 0.001)
        # 1, 2, 4 ... seconds apart, at most RETRY_MAX: a missing port costs next to nothing.
        assert attempts == pytest.approx([0.0, RETRY, 3 * RETRY, 7 * RETRY])
        assert t.session is not None
    finally:
        t.stop()
        rig.close()


def test_close_flushes_the_last_reply(fx: Fixture) -> None:
    """reboot-safe: the owner closes the transport after the reply; the reply gets out."""
    asked: list[bool] = []
    fx.console.reboot = lambda: asked.append(True)
    t = fx.serial()
    t.start()
    fx.pump(fx.lines_after(1))
    fx.peer.send(b"reboot-safe\r\n")
    fx.pump(lambda: bool(asked))
    t.stop()
    fx.transport = None
    while not any(x.startswith("ok restart=requested") for x in fx.peer.lines):
        fx.wake.get(timeout=WAIT)
    assert fx.rig.app.board.motor.speed == 0
    fx.rig.close = fx.rig.sim.board.close  # type: ignore[method-assign]  # already stopped


# --- a session per client ----------------------------------------------------------------
# Issue 31: on `launcher run --simulated`'s pty, client 1 sent `debug on` and left; client 2
# got debug=on, and client 3 ran `motor run 300` and moved gated keys without a `debug on`
# of its own. `json on` carried over the same way, and a debug run outlived its client.


class LineReader:
    """The test's end of a port (a pyserial port or a socket): a thread collects its lines."""

    def __init__(self, read: Callable[[], bytes], write: Callable[[bytes], object],
                 wake: queue.Queue[str], stop: Callable[[], None]) -> None:
        self._read, self._write, self._stop_read = read, write, stop
        self.wake = wake
        self.lines: list[str] = []
        self._stopping = False
        self._thread = threading.Thread(target=self._collect, name="line-reader", daemon=True)
        self._thread.start()

    def _collect(self) -> None:
        framer = LineFramer(limit=1 << 16)
        while not self._stopping:
            try:
                data = self._read()
            except (OSError, serial.SerialException):
                return
            if not data and self._stopping:
                return
            for item in framer.feed(data):
                assert isinstance(item, bytes)
                if item:
                    self.lines.append(item.decode("utf-8"))
                    self.wake.put("line")

    def send(self, line: str) -> None:
        self._write(line.encode("utf-8") + b"\r\n")

    def stop(self) -> None:
        self._stopping = True
        self._stop_read()
        self._thread.join(WAIT)


def pyserial_client(path: str, wake: queue.Queue[str]) -> tuple[LineReader, serial.Serial]:
    """A client of the firmware's own pty, opened by pyserial as `launcher console` does."""
    port = serial.Serial(path, timeout=None, exclusive=True)
    return LineReader(lambda: port.read(max(1, port.in_waiting)), port.write, wake,
                      port.cancel_read), port


class PtyUnit:
    """A rig with its console on a pty of its own, as `launcher run --simulated` has it."""

    def __init__(self) -> None:
        self.rig = SimRig()
        self.wake = wakeful(self.rig)
        self.console = Console(self.rig.app, sim=self.rig.sim)
        self.transport = PtyTransport(self.console, self.rig.reactor)
        self.transport.start()
        self.client: LineReader | None = None
        self._port: serial.Serial | None = None

    def pump(self, until: Callable[[], bool]) -> None:
        pump(self.rig, self.transport, self.wake, until)

    def connect(self) -> LineReader:
        """A new client opens the pty; the firmware sees it at its next look, and greets."""
        t = self.transport
        before = t.sessions
        self.client, self._port = pyserial_client(t.path, self.wake)
        for _ in range(100):
            self.rig.advance(PTY_LOOK)
            if t.sessions > before:
                break
            for ended in t._ended_sessions:  # the last client's threads are still ending
                ended.join()
        assert t.sessions == before + 1, "the firmware did not see the new client"
        self.pump(lambda: bool(self.client and self.client.lines))
        assert self.client.lines[0] == self.console.banner()
        return self.client

    def leave(self) -> None:
        """The client closes the pty; the firmware sees it go."""
        assert self.client is not None and self._port is not None
        self.client.stop()
        self._port.close()
        self.client = self._port = None
        self.pump(lambda: self.transport.session is None)

    def ask(self, line: str) -> str:
        client = self.client
        assert client is not None
        start = len(client.lines)
        client.send(line)
        self.pump(lambda: any(console_cli.is_final(x) for x in client.lines[start:]))
        return next(x for x in client.lines[start:] if console_cli.is_final(x))

    def close(self) -> None:
        if self.client is not None:
            self.leave()
        self.transport.stop()
        self.rig.close()


@pytest.fixture
def unit() -> Iterator[PtyUnit]:
    u = PtyUnit()
    yield u
    u.close()


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


class SocketPeer:
    """The server end of the firmware's ``socket://`` console: one accepted connection."""

    def __init__(self, server: socket.socket, wake: queue.Queue[str]) -> None:
        server.settimeout(WAIT)
        self.sock, _ = server.accept()
        self.reader = LineReader(lambda: self.sock.recv(4096), self.sock.sendall, wake,
                                 self._shut)

    def _shut(self) -> None:
        with contextlib.suppress(OSError):  # the firmware may have hung up first
            self.sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        if self.sock.fileno() >= 0:
            self.reader.stop()
            self.sock.close()


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
    idle = fx.rig.app.settings.console.debug_idle
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
    rig = SimRig()
    t, _, slave, wake = firmware_on_master(rig)
    try:
        t.start()
        with ReactorThread(rig, t, wake):
            before = serial.Serial(os.ttyname(slave), timeout=WAIT)
            before.write(b"debug on\r\njson on\r\n")
            while before.read_until(b"\n") != b'{"ok":true,"data":{"json":"on"}}\r\n':
                pass
            before.close()
            parser = argparse.ArgumentParser(prog="launcher")
            console_cli.register(parser.add_subparsers())
            args = parser.parse_args(["console", os.ttyname(slave), "--wait", "5"])
            monkeypatch.setattr("sys.stdin", io.StringIO("status\nmotor run 100\n"))
            code = args.func(args)
        out = capsys.readouterr().out.splitlines()
        assert code == 1  # the motor run was refused
        assert out[0].startswith("ok state=ready ") and out[0].endswith(" debug=off")
        assert out[1].startswith("error debug motor run ")
        assert not [x for x in out if "session=" in x]  # the handshake is not the output
    finally:
        t.stop()
        os.close(slave)
        rig.close()


# --- loop:// ------------------------------------------------------------------------------


class Tap:
    """A pyserial port whose writes the test can see."""

    def __init__(self, port: Any) -> None:
        self._port = port
        self.written: queue.Queue[bytes] = queue.Queue()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._port, name)

    def write(self, data: bytes) -> int:
        self.written.put(data)
        return self._port.write(data)


def test_loop_url_talks_to_itself_without_an_echo_storm() -> None:
    """On loop:// every reply comes back as input, as on a TX-RX jumper; none is answered."""
    rig = SimRig()
    wake = wakeful(rig)
    console = Console(rig.app, sim=rig.sim)
    t = SerialTransport(console, rig.reactor, "loop://")
    try:
        assert t.start()
        port = t.session.channel.port  # type: ignore[union-attr]
        assert type(port).__module__ == "serial.urlhandler.protocol_loop"
        pump(rig, t, wake, lambda: console.counters["echoes"] == 1)  # the banner came back
        port.write(b"load 3\n")
        # The event line and the reply both come back, and are not answered.
        pump(rig, t, wake, lambda: console.counters["echoes"] == 3)
        port.write(b"version\n")
        pump(rig, t, wake, lambda: console.counters["echoes"] == 4)
        assert console.counters["lines"] == 2
        assert console.counters["errors"] == 0
        assert rig.app.machine.memory.inventory == 3
    finally:
        t.stop()
        rig.close()


def test_loop_url_replies_are_what_was_asked() -> None:
    rig = SimRig()
    wake = wakeful(rig)
    console = Console(rig.app, sim=rig.sim)
    tap = Tap(serial.serial_for_url("loop://", timeout=0.2))
    t = SerialTransport(console, rig.reactor, "loop://", opener=lambda: tap)
    seen: list[bytes] = []

    def replies(n: int) -> Callable[[], bool]:
        def enough() -> bool:
            with contextlib.suppress(queue.Empty):
                while True:
                    seen.append(tap.written.get_nowait())
            return b"".join(seen).count(b"\r\n") >= n
        return enough

    try:
        t.start()
        tap._port.write(b"status\r\nlog 1\r\n")
        pump(rig, t, wake, replies(4))
        text = b"".join(seen).decode().splitlines()
        assert text[0] == console.banner()
        assert text[1].startswith("ok state=ready side=mild")
        assert text[2:] == ["// 0.000 led pattern=on", "ok events=1"]  # the start's last
    finally:
        t.stop()
        rig.close()


# --- stdin / stdout ---------------------------------------------------------------------


class Out(io.RawIOBase):
    """A binary output stream that wakes the test when written to."""

    def __init__(self, wake: queue.Queue[str]) -> None:
        self.data = bytearray()
        self.wake = wake

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        self.data += bytes(b)
        self.wake.put("out")
        return len(b)


def test_stream_transport_on_a_pipe_and_end_of_input() -> None:
    rig = SimRig()
    wake = wakeful(rig)
    console = Console(rig.app, sim=rig.sim)
    rfd, wfd = os.pipe()
    out = Out(wake)
    ended: list[bool] = []
    t = StreamTransport(console, rig.reactor, rfd, out, on_eof=lambda: ended.append(True))
    try:
        t.start()
        os.write(wfd, b"load 2\nbogus\n")
        pump(rig, t, wake, lambda: out.data.count(b"\n") >= 4)
        assert out.data.decode().splitlines() == [
            console.banner(), "# event loaded cards=2", "ok inventory=2",
            "error unknown no command 'bogus'; `help` lists them"]
        os.close(wfd)
        pump(rig, t, wake, lambda: bool(ended))
        assert t.session is None
    finally:
        t.stop()
        os.close(rfd)
        rig.close()


# --- flood -------------------------------------------------------------------------------


def test_flood_is_taken_a_budget_per_tick_and_everything_is_answered(fx: Fixture) -> None:
    """2000 lines at once: the inbox stays bounded, each tick takes at most BUDGET lines, the
    reactor gets one wake-up per batch (not per line), and a timer of the launcher's own
    fires on time in between; every line still gets its answer, in order."""
    n = 2000
    t = fx.serial()
    t.start()
    fx.pump(fx.lines_after(1))
    handled_at_probe: list[int] = []
    probe_times: list[float] = []

    def probe(eventtime: float) -> float:
        probe_times.append(eventtime)
        handled_at_probe.append(t.inbox.handled)
        return eventtime + TICK

    fx.rig.reactor.register_timer(probe, fx.rig.now + TICK, "probe")
    payload = b"".join(f"load {i % 200}\r\n".encode() for i in range(n))
    feeder = threading.Thread(target=fx.peer.send, args=(payload,), name="feeder")
    feeder.start()
    try:
        fx.pump(lambda: sum(x.startswith("ok inventory=") for x in fx.peer.lines) >= n)
    finally:
        feeder.join(WAIT)
    replies = [x for x in fx.peer.lines if x.startswith("ok inventory=")]
    assert replies == [f"ok inventory={i % 200}" for i in range(n)]
    assert t.inbox.deepest <= INBOX_LINES
    assert t.inbox.largest_batch <= BUDGET
    # One wake-up each time the inbox goes from empty to not empty, never one per line.
    assert t.inbox.wakes <= t.inbox.emptied + 1
    steps = [b - a for a, b in itertools.pairwise(handled_at_probe)]
    assert max(steps) <= 2 * BUDGET
    assert len(probe_times) >= n // (2 * BUDGET)
    # The output never backed up far enough to drop even an event line.
    assert t.dropped == 0
    assert sum(x.startswith("# event loaded") for x in fx.peer.lines) == n


class GatedPort:
    """A port whose writes block until the test opens the gate (nobody reading the line)."""

    def __init__(self, wake: queue.Queue[str]) -> None:
        self.incoming: queue.Queue[bytes] = queue.Queue()
        self.gate = threading.Event()
        self.written = bytearray()
        self.wake = wake
        self.closed = False

    @property
    def in_waiting(self) -> int:
        return 0

    def read(self, size: int) -> bytes:
        try:
            return self.incoming.get(timeout=0.2)
        except queue.Empty:
            return b""

    def write(self, data: bytes) -> int:
        self.gate.wait(WAIT)
        self.written += data
        self.wake.put("written")
        return len(data)

    def cancel_read(self) -> None:
        self.incoming.put(b"")

    def cancel_write(self) -> None:
        self.gate.set()

    def close(self) -> None:
        self.closed = True


def test_output_backpressure_pauses_input_and_drops_only_events() -> None:
    rig = SimRig()
    wake = wakeful(rig)
    console = Console(rig.app, sim=rig.sim)
    port = GatedPort(wake)
    t = SerialTransport(console, rig.reactor, "gated", opener=lambda: port)
    try:
        t.start()
        n_help = 20
        port.incoming.put(b"help\n" * n_help)
        # Each help is ~31 lines; the outbox passes its high-water mark after three.
        pump(rig, t, wake, lambda: t.inbox.handled >= 3)
        for _ in range(50):
            rig.advance(TICK)
        assert t.inbox.handled < n_help  # input waits while the output is stuck
        session = t.session
        assert session is not None
        for i in range(OUTBOX_LINES * 2):
            rig.app.load(i % 50)  # each makes a `# event loaded` line
        assert t.dropped > 0
        assert len(session.outbox) <= OUTBOX_LINES + 40
        port.gate.set()
        pump(rig, t, wake, lambda: port.written.count(b"ok commands=") >= n_help)
        text = port.written.decode()
        assert text.count(f"ok commands={len(console.commands)}") == n_help  # none dropped
        assert "# event console_dropped lines=" in text
    finally:
        port.gate.set()
        t.stop()
        rig.close()


def test_a_write_timeout_drops_output_but_keeps_the_port() -> None:
    rig = SimRig()
    wake = wakeful(rig)
    console = Console(rig.app)
    loop = serial.serial_for_url("loop://", timeout=0.2)
    failures = [True]

    class Slow(Tap):
        def write(self, data: bytes) -> int:
            if failures:
                failures.pop()
                raise serial.SerialTimeoutException("write timeout")
            return super().write(data)

    port = Slow(loop)
    t = SerialTransport(console, rig.reactor, "slow", opener=lambda: port)
    try:
        t.start()  # the banner's write times out
        loop.write(b"load 4\n")
        pump(rig, t, wake, lambda: rig.app.machine.memory.inventory == 4)
        got = b""
        while b"ok inventory=4" not in got:
            got += port.written.get(timeout=WAIT)
        assert t.session is not None and t.session.alive
        assert t.session.channel.write_timeouts == 1  # type: ignore[attr-defined]
    finally:
        t.stop()
        rig.close()


# --- the client ---------------------------------------------------------------------------


class MasterPort:
    """The master end of a pty as a pyserial-like port, for the firmware side."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.written: queue.Queue[bytes] = queue.Queue()

    @property
    def in_waiting(self) -> int:
        raw = fcntl.ioctl(self.fd, termios.FIONREAD, b"\0\0\0\0")
        return int(struct.unpack("i", raw)[0])

    def read(self, size: int) -> bytes:
        ready, _, _ = select.select([self.fd], [], [], 0.2)
        return os.read(self.fd, size) if ready else b""

    def write(self, data: bytes) -> int:
        n = os.write(self.fd, data)
        self.written.put(data)
        return n

    def close(self) -> None:
        os.close(self.fd)


class ReactorThread:
    """One thread that owns the rig's reactor, as the firmware's main loop would."""

    def __init__(self, rig: SimRig, transport: Any, wake: queue.Queue[str]) -> None:
        self.rig = rig
        self.transport = transport
        self.wake = wake
        self._stop = False
        self.thread = threading.Thread(target=self._run, name="reactor", daemon=True)

    def _run(self) -> None:
        while not self._stop:
            with contextlib.suppress(queue.Empty):
                self.wake.get(timeout=0.5)
            self.rig.advance(TICK)
            while self.transport.inbox.pending:
                self.rig.advance(TICK)

    def __enter__(self) -> ReactorThread:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self.wake.put("stop")
        self.thread.join(WAIT)


def firmware_on_master(rig: SimRig) -> tuple[SerialTransport, MasterPort, int, queue.Queue[str]]:
    wake = wakeful(rig)
    master, slave = os.openpty()
    tty.setraw(slave)
    console = Console(rig.app, sim=rig.sim)
    port = MasterPort(master)
    t = SerialTransport(console, rig.reactor, "pty-master", opener=lambda: port)
    return t, port, slave, wake


def test_a_pty_of_its_own_sees_each_client_leave_and_drops_unread_output() -> None:
    channel = PtyChannel(write_timeout=0.05)
    try:
        assert not channel.connected()  # nobody has the slave open; this end holds none
        for _ in range(2):  # a client comes, talks and goes; then the next one
            client = serial.Serial(channel.path, timeout=WAIT, exclusive=True)
            assert channel.connected()
            conn = channel.connection()
            client.write(b"status\r\n")
            assert conn.read() == b"status\r\n"
            conn.write(b"ok state=ready\r\n")
            assert client.read_until(b"\n") == b"ok state=ready\r\n"
            conn.write(b"# event never read by this client\r\n")
            client.close()
            assert not channel.connected()
            assert conn.read() is None  # the client left: its session's input has ended
            conn.close()
        # A client that has not read for a while: output piles up, then is dropped.
        client = os.open(channel.path, os.O_RDWR | os.O_NOCTTY)
        conn = channel.connection()
        while channel.write_timeouts == 0:
            conn.write(b"# event dry side=mild streak=1\r\n" * 64)
        # cancel ends a read that nothing would end otherwise.
        conn.cancel()
        assert conn.read() == b""
        conn.close()
        os.close(client)
    finally:
        channel.close()


def test_a_new_pty_client_does_not_see_what_the_last_one_left_unread() -> None:
    """Output queued for a client that left is dropped before the next one's banner."""
    channel = PtyChannel()
    try:
        first = os.open(channel.path, os.O_RDWR | os.O_NOCTTY)
        conn = channel.connection()
        conn.write(b"ok debug=on\r\n")  # never read
        os.close(first)
        conn.close()
        second = os.open(channel.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        channel.connection().close()
        with pytest.raises(BlockingIOError):
            os.read(second, 64)  # not pyserial (which flushes at open): a bare open()
        os.close(second)
    finally:
        channel.close()


def test_output_after_a_pty_client_left_never_reaches_the_next_one() -> None:
    """Seen in make test-loaded: an event of client 1's debug run, queued as it left and
    written after client 2 had opened the pty, was client 2's first line. Once a read has
    seen the hang-up, the old connection writes nothing more (the master cannot tell one
    client from the next)."""
    channel = PtyChannel()
    try:
        first = os.open(channel.path, os.O_RDWR | os.O_NOCTTY)
        old = channel.connection()
        os.close(first)
        assert old.read() is None  # the firmware has seen client 1 go ...
        second = os.open(channel.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        old.write(b"# event state from=debug_run to=ready on=timeout_debug\r\n")  # ... late
        assert old.dropped_after_hangup == 56
        new = channel.connection()
        new.write(b"# launcher console\r\n")
        assert os.read(second, 256) == b"# launcher console\r\n"
        for conn in (old, new):
            conn.close()
        os.close(second)
    finally:
        channel.close()


def test_client_waits_for_the_banner_then_talks(capsys: pytest.CaptureFixture[str]) -> None:
    rig = SimRig()
    t, _, slave, wake = firmware_on_master(rig)
    # The client has its port open before the firmware greets.
    port = serial.serial_for_url(os.ttyname(slave), baudrate=115200, timeout=0.2)
    client = console_cli.Client(port)
    client.start()
    out = io.StringIO()
    try:
        with ReactorThread(rig, t, wake):
            rig.reactor.post(t.start)
            assert client.connect(5) == t.console.banner()
            assert out.getvalue() == ""  # the handshake is not the script's output
            status = client.batch(io.StringIO("load 3\nstatus\n\nbogus\n"), out)
        lines = out.getvalue().splitlines()
        assert status == 1
        assert "# event loaded cards=3" in lines and "ok inventory=3" in lines
        assert lines[-1] == "error unknown no command 'bogus'; `help` lists them"
    finally:
        client.close()
        t.stop()
        os.close(slave)
        rig.close()


def test_launcher_console_command_asks_when_the_banner_was_missed(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The firmware greeted before the client opened the port (and open() flushed it)."""
    rig = SimRig()
    t, master, slave, wake = firmware_on_master(rig)
    try:
        t.start()
        assert master.written.get(timeout=WAIT).startswith(b"# launcher ")
        with ReactorThread(rig, t, wake):
            parser = argparse.ArgumentParser(prog="launcher")
            console_cli.register(parser.add_subparsers())
            args = parser.parse_args(["console", os.ttyname(slave), "--wait", "5"])
            monkeypatch.setattr("sys.stdin", io.StringIO("load 8\nstatus\n"))
            code = args.func(args)
        out = capsys.readouterr().out.splitlines()
        assert code == 0
        # The answer to its own `version` is not printed: the output is the script's.
        assert out[0] == "# event loaded cards=8" and "ok inventory=8" in out
        assert not [x for x in out if "firmware=" in x]
        assert out[-1].startswith("ok state=ready") and "inventory=8" in out[-1]
    finally:
        t.stop()
        os.close(slave)
        rig.close()


def test_launcher_console_without_a_launcher(capsys: pytest.CaptureFixture[str]) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        parser = argparse.ArgumentParser(prog="launcher")
        console_cli.register(parser.add_subparsers())
        args = parser.parse_args(["console", os.ttyname(slave), "--wait", "1"])
        assert args.func(args) == 2
        assert "no answer" in capsys.readouterr().err
        args = parser.parse_args(["console", "/dev/does-not-exist"])
        assert args.func(args) == 2
        assert "cannot open /dev/does-not-exist" in capsys.readouterr().err
    finally:
        os.close(master)
        os.close(slave)


def test_console_subcommand_arguments() -> None:
    parser = argparse.ArgumentParser(prog="launcher")
    console_cli.register(parser.add_subparsers())
    args = parser.parse_args(["console", "/dev/serial0"])
    assert (args.port, args.baud, args.wait) == ("/dev/serial0", 115200, 10)
    args = parser.parse_args(["console", "socket://pi:7000", "--baud", "9600"])
    assert args.baud == 9600 and args.func is console_cli.run


@pytest.mark.parametrize(("line", "final", "error"), [
    ("ok", True, False), ("ok a=1", True, False), ("error value x", True, True),
    ('{"ok":true,"data":{}}', True, False), ('{"ok":false,"error":"x"}', True, True),
    ("# event shot cards=3", False, False), ("// row", False, False),
    ('{"event":"shot"}', False, False), ("okay", False, False), ('{"ok', False, False),
])
def test_client_tells_final_lines(line: str, final: bool, error: bool) -> None:
    assert console_cli.is_final(line) is final
    assert console_cli.is_error(line) is error
