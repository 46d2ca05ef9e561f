"""The console on loop://, on stdin/stdout, and under a flood or a stuck output."""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import threading
from collections.abc import Callable

import serial
from consoles import (
    WAIT,
    Fixture,
    Out,
    Tap,
    pump,
    wakeful,
)

from launcher.firmware.console import Console
from launcher.firmware.transport import (
    BUDGET,
    INBOX_LINES,
    OUTBOX_LINES,
    TICK,
    SerialTransport,
    StreamTransport,
)
from launcher.sim.rig import SimRig

# --- loop:// ------------------------------------------------------------------------------


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
