"""The tests' consoles: an in-process session on a rig, and the test's ends of the console's
ports (pty peers, socket peers, taps, a reactor thread).

The rig's manual reactor is driven by the test thread (or by one pump thread); transport
threads only post to it. Waits are blocking reads on queues with timeouts, never sleeps."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import io
import os
import queue
import select
import socket
import struct
import termios
import threading
import tty
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import serial

from launcher.cli import console_client as console_cli
from launcher.firmware.console import Console
from launcher.firmware.transport import (
    PTY_LOOK,
    TICK,
    LineFramer,
    PtyTransport,
    SerialTransport,
)
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras


class Session:
    """A console on a SimRig, with its event lines collected."""

    def __init__(self, **kw: Any) -> None:
        store = kw.pop("store", None)
        self.rig = SimRig(store=store)
        self.events: list[str] = []
        if "sim" not in kw:
            kw.update(console_extras(self.rig.sim))
        self.console = Console(self.rig.app, write=self.events.append, **kw)

    def __call__(self, line: str | bytes) -> list[str]:
        out = self.console.handle_line(line)
        self.rig.advance(0)
        return out

    def final(self, line: str | bytes) -> str:
        out = self(line)
        assert out, f"no reply to {line!r}"
        return out[-1]

    def close(self) -> None:
        self.console.close()
        self.rig.close()


def is_final(line: str) -> bool:
    return line == "ok" or line.startswith(("ok ", "error "))


WAIT = 10.0  # seconds a test waits for something that should come at once


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


class OnMaster(NamedTuple):
    """A rig whose console's port is the master end of a pty; a client opens the slave."""

    rig: SimRig
    transport: SerialTransport
    master: MasterPort
    slave: int
    wake: queue.Queue[str]

    @property
    def path(self) -> str:
        return os.ttyname(self.slave)

    def reactor_thread(self) -> ReactorThread:
        return ReactorThread(self.rig, self.transport, self.wake)


@contextlib.contextmanager
def firmware_on_master() -> Iterator[OnMaster]:
    """The firmware on a pty's master end, stopped and closed however the test ends."""
    rig = SimRig()
    wake = wakeful(rig)
    master, slave = os.openpty()
    tty.setraw(slave)
    port = MasterPort(master)
    t = SerialTransport(Console(rig.app, sim=rig.sim), rig.reactor, "pty-master",
                        opener=lambda: port)
    try:
        yield OnMaster(rig, t, port, slave, wake)
    finally:
        t.stop()
        os.close(slave)
        rig.close()


def console_command(*argv: str) -> argparse.Namespace:
    """``launcher console ARGV...``, parsed as the command line parses it."""
    parser = argparse.ArgumentParser(prog="launcher")
    console_cli.register(parser.add_subparsers())
    return parser.parse_args(["console", *argv])
