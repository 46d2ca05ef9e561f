"""The console on a real serial port: the framer, a pyserial port on a pty pair, unplug and
replug, a lost peer mid-run, the lock, open retries, the last reply at close."""

from __future__ import annotations

import itertools
import logging
import os
import queue
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import serial
from consoles import (
    WAIT,
    Fixture,
    Out,
    PtyPeer,
    pump,
    wakeful,
)

from launcher.core import machine as m
from launcher.core.reactor import NEVER
from launcher.firmware.console import Console
from launcher.firmware.transport import (
    RETRY,
    LineFramer,
    Overlong,
    SerialTransport,
    StreamTransport,
)
from launcher.sim.rig import SimRig

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
