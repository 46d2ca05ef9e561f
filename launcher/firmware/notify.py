"""systemd notifications (sd_notify) over $NOTIFY_SOCKET, and a watchdog pinged by the reactor.

The protocol is one datagram of ``KEY=value`` lines to the AF_UNIX socket named in
``$NOTIFY_SOCKET`` (a leading ``@`` means the abstract namespace). Outside systemd the
variable is unset and every call is a cheap no-op, so the same code runs on a laptop.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Callable, Mapping

from launcher.core.reactor import NEVER, Reactor, Timer

log = logging.getLogger(__name__)


class Notifier:
    """Sends sd_notify messages; ``enabled`` is False when not started by systemd."""

    def __init__(self, address: str | None) -> None:
        self.address = address or None
        self._sock: socket.socket | None = None
        self._warned = False
        if self.address is not None and not self.address.startswith(("/", "@")):
            # e.g. systemd 254's vsock: addresses; not needed on a Pi, so say so once.
            log.warning("NOTIFY_SOCKET %r is not a unix socket path; not notifying", address)
            self.address = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Notifier:
        env = os.environ if env is None else env
        return cls(env.get("NOTIFY_SOCKET"))

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *fields: str) -> bool:
        """Send ``fields`` (each ``KEY=value``) as one message; False if it could not go."""
        if self.address is None:
            return False
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        message = "\n".join(fields).encode("utf-8")
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto(message, target)
        except OSError as exc:
            # Never fatal: a lost manager socket must not take the launcher down with it;
            # if it is the watchdog that cannot get through, systemd restarts us anyway.
            if not self._warned:
                log.warning("sd_notify to %s failed: %s", self.address, exc)
                self._warned = True
            return False
        return True

    def ready(self, status: str | None = None) -> bool:
        """Start-up is complete: the hardware is initialised and the launcher can shoot."""
        return self.send("READY=1", *_status(status))

    def status(self, text: str) -> bool:
        """The one-line state shown by ``systemctl status``."""
        return self.send(*_status(text))

    def stopping(self, status: str | None = None) -> bool:
        return self.send("STOPPING=1", *_status(status))

    def watchdog(self) -> bool:
        return self.send("WATCHDOG=1")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _status(text: str | None) -> tuple[str, ...]:
    if text is None:
        return ()
    return ("STATUS=" + " ".join(text.splitlines()),)


def watchdog_timeout(env: Mapping[str, str] | None = None, pid: int | None = None) -> float | None:
    """The watchdog timeout in seconds asked for by systemd (``WatchdogSec=``), or None.

    ``WATCHDOG_PID``, when set, names the process the watchdog is meant for; a child that
    inherited the environment must not ping on its parent's behalf.
    """
    env = os.environ if env is None else env
    usec = env.get("WATCHDOG_USEC", "")
    if not usec:
        return None
    try:
        value = int(usec)
    except ValueError:
        log.warning("WATCHDOG_USEC=%r is not a number; watchdog off", usec)
        return None
    if value <= 0:
        return None
    owner = env.get("WATCHDOG_PID", "")
    if owner and owner != str(os.getpid() if pid is None else pid):
        return None
    return value / 1_000_000


class Watchdog:
    """Pings systemd's watchdog from a reactor timer, every half of the timeout, while every
    other thread a safety layer runs on is alive too.

    The pings are only as alive as the reactor: a callback that blocks, or a loop that
    stops turning, stops them, and systemd restarts the service. That is the point, so
    never move this onto a thread of its own. Before each ping it asks ``dead_layers``
    (the guard thread, the pin library's callback thread): while any is dead, no ping goes
    out, so systemd kills the firmware and safe-stop drives the pins low.
    """

    def __init__(self, reactor: Reactor, notifier: Notifier, timeout: float,
                 dead_layers: Callable[[], list[str]] = list) -> None:
        if timeout <= 0:
            raise ValueError(f"watchdog timeout must be above 0, not {timeout}")
        self.reactor = reactor
        self.notifier = notifier
        self.interval = timeout / 2
        self.dead_layers = dead_layers
        self.pings = 0
        self.withheld = 0  # pings not sent because a layer was dead
        self._timer: Timer | None = None

    @classmethod
    def from_env(
        cls, reactor: Reactor, notifier: Notifier, env: Mapping[str, str] | None = None,
        dead_layers: Callable[[], list[str]] = list,
    ) -> Watchdog | None:
        """A watchdog if systemd asked for one (and can be told), else None."""
        timeout = watchdog_timeout(env)
        if timeout is None or not notifier.enabled:
            return None
        return cls(reactor, notifier, timeout, dead_layers)

    @property
    def running(self) -> bool:
        return self._timer is not None

    def start(self) -> None:
        """Ping now, then every ``interval`` seconds of reactor time."""
        if self._timer is None:
            self._timer = self.reactor.register_timer(
                self._ping, self.reactor.monotonic(), name="sd-watchdog"
            )

    def stop(self) -> None:
        if self._timer is not None:
            self.reactor.unregister_timer(self._timer)
            self._timer = None

    def _ping(self, eventtime: float) -> float:
        dead = self.dead_layers()
        if dead:
            if not self.withheld:
                log.error("not feeding the watchdog: %s (systemd restarts the firmware)",
                          "; ".join(dead))
            self.withheld += 1
        else:
            self.notifier.watchdog()
            self.pings += 1
        return eventtime + self.interval if self._timer is not None else NEVER
