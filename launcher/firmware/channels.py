"""Byte channels that a console session runs over: a pyserial port, stdin and stdout, a pty.

Each is read by one thread and written by another (launcher.firmware.transport's
sessions). A read blocks until bytes come, with no timeout, so an idle console never
wakes the process; ``cancel`` ends a blocked read or write from another thread (through
pyserial's abort pipe, or a wake pipe of our own). A write to a port nobody reads gives
up after ``WRITE_TIMEOUT`` and drops what it could not write.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import select
import termios
import threading
from typing import Any, BinaryIO, Protocol

import serial

log = logging.getLogger("launcher.console")

WRITE_TIMEOUT = 2.0  # s: a port nobody reads (USB gadget with no host) drops output after this


class Channel(Protocol):
    """A byte pipe a session runs over."""

    def read(self) -> bytes | None: ...  # b"": nothing yet; None: end of input
    def write(self, data: bytes) -> None: ...
    def cancel(self) -> None: ...  # unblock a read or write from another thread
    def close(self) -> None: ...


class SerialChannel:
    """A pyserial port (device or URL); a read blocks until bytes come or ``cancel``."""

    def __init__(self, port: Any) -> None:
        self.port = port
        self.write_timeouts = 0

    def read(self) -> bytes | None:
        waiting = self.port.in_waiting
        return self.port.read(min(max(waiting, 1), 4096))

    def write(self, data: bytes) -> None:
        try:
            self.port.write(data)
        except serial.SerialTimeoutException:
            # Nobody is reading (a USB gadget without a host): drop it, keep the port.
            self.write_timeouts += 1

    def cancel(self) -> None:
        for name in ("cancel_read", "cancel_write"):
            cancel = getattr(self.port, name, None)
            if cancel is not None:
                # A port that is already gone needs no unblocking: the reader notices.
                with contextlib.suppress(OSError, serial.SerialException):
                    cancel()

    def close(self) -> None:
        try:
            self.port.close()
        except (OSError, serial.SerialException) as exc:
            log.debug("console: closing the port: %s", exc)


class _FdChannel:
    """Reads a file descriptor; a read waits for it or for a wake pipe that ``cancel``
    writes to: no timeout, so an idle console never wakes the process."""

    def __init__(self, infd: int) -> None:
        self.infd = infd
        self._lock = threading.Lock()  # cancel (any thread) against close (the reader)
        self._wake_r, self._wake_w = os.pipe()

    def read(self) -> bytes | None:
        wake = self._wake_r
        ready, _, _ = select.select([self.infd, wake], [], [])
        if wake in ready:
            with self._lock, contextlib.suppress(OSError):
                os.read(wake, 64)
            return b""  # cancelled: the reader looks at its stop flag
        try:
            data = os.read(self.infd, 4096)
        except BlockingIOError:  # a non-blocking descriptor that another reader emptied
            return b""
        return data or None

    def cancel(self) -> None:
        with self._lock:
            if self._wake_w >= 0:
                with contextlib.suppress(OSError):  # a full pipe is awake already
                    os.write(self._wake_w, b"x")

    def close(self) -> None:
        # Only the wake pipe is ours here.
        with self._lock:
            for fd in (self._wake_r, self._wake_w):
                if fd >= 0:
                    os.close(fd)
            self._wake_r = self._wake_w = -1


class StreamChannel(_FdChannel):
    """A readable file descriptor (stdin) and a binary stream (stdout); both belong to the
    process, and stay open after ``close``."""

    def __init__(self, infd: int, out: BinaryIO) -> None:
        super().__init__(infd)
        self.out = out

    def write(self, data: bytes) -> None:
        self.out.write(data)
        self.out.flush()


class PtyChannel:
    """A new pseudo-terminal: its slave (``path``) is the console's serial port for whoever
    opens it, as /dev/serial0 is on a Pi; this end holds only the master.

    The slave is not held open here, so the kernel tells when the last client has closed
    it: the master then reports a hang-up (POLLHUP), and its reads fail with EIO once the
    client's last bytes are read. ``connected`` asks whether a client holds the slave now;
    ``connection`` is one client's channel, whose reads end (None) when that client goes.
    """

    def __init__(self, write_timeout: float = WRITE_TIMEOUT) -> None:
        import tty

        self.write_timeout = write_timeout
        master, slave = os.openpty()
        # Raw, so the firmware does not read its own output back as echo; the pty keeps the
        # modes while the master is open, and a client (pyserial, miniterm) sets them again.
        tty.setraw(slave)
        self.path = os.ttyname(slave)
        os.close(slave)
        os.set_blocking(master, False)
        self.fd = master
        self.write_timeouts = 0

    def connected(self) -> bool:
        """Whether a client has the slave open (no hang-up on the master)."""
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        return not any(ev & select.POLLHUP for _, ev in poller.poll(0))

    def connection(self) -> _PtyConnection:
        """A channel for the client that has the slave open now.

        Output the client before it left did not read is still queued in the slave: it
        is dropped first, so the new client starts at the banner. (pyserial drops it too
        as it opens the port, but not every client is pyserial.)
        """
        with contextlib.suppress(OSError):
            slave = os.open(self.path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
            try:
                termios.tcflush(slave, termios.TCIFLUSH)
            finally:
                os.close(slave)  # the client holds it too: no hang-up
        return _PtyConnection(self)

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


class _PtyConnection(_FdChannel):
    """One client of a ``PtyChannel``: reads end when it closes the slave. Closing this
    closes only its wake pipe: the pty stays for the next client.

    Once a read has seen the client go, nothing more is written: the master cannot tell
    one client from the next, so output still queued for this one (an event of its debug
    run, say) would reach whoever opens the pty after it, ahead of that client's banner.
    What was written before the read saw it is still in the slave, and ``connection``
    drops it for the next client; the lock makes "seen gone" and "write" one or the other.
    """

    def __init__(self, pty: PtyChannel) -> None:
        super().__init__(pty.fd)
        self.pty = pty
        self._gone = False
        self._gone_lock = threading.Lock()
        self.dropped_after_hangup = 0  # bytes not written because the client had gone

    def read(self) -> bytes | None:
        try:
            return super().read()
        except OSError as exc:
            if exc.errno == errno.EIO:
                with self._gone_lock:
                    self._gone = True
                return None  # the client closed the slave, and its last bytes are read
            raise

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        pty = self.pty
        while view:
            _, ready, _ = select.select([], [self.infd], [], pty.write_timeout)
            if not ready:
                pty.write_timeouts += 1  # nobody has read for a while: drop the rest
                return
            with self._gone_lock:
                if self._gone:
                    self.dropped_after_hangup += len(view)
                    return
                with contextlib.suppress(BlockingIOError):
                    view = view[os.write(self.infd, view):]
