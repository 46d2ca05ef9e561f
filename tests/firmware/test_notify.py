"""sd_notify over a real AF_UNIX datagram socket, and the reactor-driven watchdog."""

from __future__ import annotations

import itertools
import logging
import os
import socket
from pathlib import Path

import pytest

from launcher.core.reactor import NEVER, ManualReactor, RealReactor
from launcher.firmware.notify import Notifier, Watchdog, watchdog_timeout


class FakeSystemd:
    """The manager's end of $NOTIFY_SOCKET: a bound datagram socket we read without waiting."""

    def __init__(self, address: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(address)
        self.sock.setblocking(False)

    def messages(self) -> list[dict[str, str]]:
        out = []
        while True:
            try:
                data = self.sock.recv(4096)
            except BlockingIOError:
                return out
            out.append(dict(line.split("=", 1) for line in data.decode().split("\n")))

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "notify"
    fake = FakeSystemd(str(path))
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    yield fake
    fake.close()


def test_ready_is_sent_with_a_status(systemd):
    notifier = Notifier.from_env()
    assert notifier.enabled
    assert notifier.ready("armed, Mild side, 14 cards")
    assert systemd.messages() == [{"READY": "1", "STATUS": "armed, Mild side, 14 cards"}]
    notifier.close()


def test_status_stopping_and_watchdog_messages(systemd):
    notifier = Notifier.from_env()
    notifier.status("jam fault\nopen the lid")
    notifier.stopping()
    notifier.watchdog()
    assert systemd.messages() == [
        {"STATUS": "jam fault open the lid"},  # one line: systemctl shows one line
        {"STOPPING": "1"},
        {"WATCHDOG": "1"},
    ]
    notifier.close()


def test_abstract_socket_address(monkeypatch):
    name = f"launcher-test-{os.getpid()}"
    fake = FakeSystemd("\0" + name)
    monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
    notifier = Notifier.from_env()
    assert notifier.ready()
    assert fake.messages() == [{"READY": "1"}]
    notifier.close()
    fake.close()


def test_without_systemd_everything_is_a_no_op(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    notifier = Notifier.from_env()
    assert not notifier.enabled
    assert notifier.ready("x") is False
    assert Watchdog.from_env(ManualReactor(), notifier, {"WATCHDOG_USEC": "1000000"}) is None


def test_a_vanished_socket_is_logged_once_and_not_raised(systemd, tmp_path, caplog):
    notifier = Notifier.from_env()
    systemd.close()
    (tmp_path / "notify").unlink()
    with caplog.at_level(logging.WARNING, logger="launcher.firmware.notify"):
        assert notifier.ready() is False
        assert notifier.watchdog() is False
    assert len([r for r in caplog.records if "sd_notify" in r.getMessage()]) == 1
    notifier.close()


@pytest.mark.parametrize(("env", "expected"), [
    ({}, None),
    ({"WATCHDOG_USEC": "10000000"}, 10.0),
    ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "4242"}, 10.0),
    ({"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"}, None),  # meant for another process
    ({"WATCHDOG_USEC": "0"}, None),
    ({"WATCHDOG_USEC": "ten"}, None),
])
def test_watchdog_timeout_from_the_environment(env, expected):
    assert watchdog_timeout(env, pid=4242) == expected


def test_pings_arrive_every_half_timeout_as_the_reactor_advances(systemd):
    reactor = ManualReactor()
    notifier = Notifier.from_env()
    watchdog = Watchdog.from_env(reactor, notifier, {"WATCHDOG_USEC": "2000000"})
    assert watchdog is not None and watchdog.interval == 1.0
    watchdog.start()
    arrivals: list[float] = []
    for _ in range(40):
        reactor.advance(0.25)
        # advance(0) runs nothing new: time has not moved, so no ping may come from it.
        reactor.advance(0)
        arrivals += [reactor.monotonic()] * len(systemd.messages())
    assert arrivals == [0.25, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
    watchdog.stop()
    reactor.advance(5)
    assert systemd.messages() == []
    notifier.close()


TICK = 1 / 64


class SimulatedClock:
    """Time for the production reactor that only moves when the test (or a callback) says."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_blocked_reactor_stops_the_pings(systemd):
    """The production loop, on simulated time: a callback stuck for 30 s silences the watchdog.

    A ticker timer stands for time passing while the loop is idle: it moves the clock by
    1/64 s (exact in binary) and is due again at once, so the loop never sleeps for real;
    each tick stamps the pings that reached the fake systemd. The hog callback at
    t=10.5 blocks the loop for 30 s of that time, as a stuck read would. Nothing else
    runs meanwhile, so the watchdog timer cannot fire: systemd sees a 30 s gap, far
    past WatchdogSec=2.
    """
    clock = SimulatedClock()
    reactor = RealReactor(clock=clock)
    notifier = Notifier.from_env()
    watchdog = Watchdog(reactor, notifier, timeout=2.0)
    arrivals: list[float] = []

    def tick(eventtime: float) -> float:
        arrivals.extend([clock.now] * len(systemd.messages()))
        clock.now += TICK
        return clock.now

    def hog(eventtime: float) -> float:
        clock.now += 30.0
        return NEVER

    def end(eventtime: float) -> float:
        reactor.stop()
        return NEVER

    reactor.register_timer(tick, 0.0, "tick")
    reactor.register_timer(hog, 10.5, "hog")
    reactor.register_timer(end, 50.0, "end")
    watchdog.start()
    reactor.run()

    gaps = [(b - a, a, b) for a, b in itertools.pairwise(arrivals)]
    before = [a for a in arrivals if a < 10.5]
    after = [a for a in arrivals if a > 10.5]
    # Before the block: a ping every second (stamped at the next tick).
    assert before == [n + TICK for n in range(11)]
    # The block: no ping from 10 s until the hog returned at 40.5 s.
    longest, start, stop = max(gaps)
    assert longest >= 30.0 > watchdog.interval * 2
    assert (start, stop) == (10.0 + TICK, 40.5 + TICK)
    # When the loop turns again, so do the pings (systemd would have restarted us by now).
    assert after == [40.5 + n + TICK for n in range(10)]
    notifier.close()
