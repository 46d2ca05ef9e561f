"""SIGTERM and SIGINT reach the firmware through ``relay_signals``: the stop is asked from the
relay's own thread, never in the handler, on the thread the signal found (the reactor's,
maybe holding the locks a stop takes: CI's run of a6d4e45 hung so)."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from launcher.core.reactor import RealReactor
from launcher.firmware.runner import relay_signals

Heard = tuple[list[tuple[int, str]], threading.Event, object]


@pytest.fixture
def heard() -> Iterator[Heard]:
    """The signals relayed, by the thread that relayed each; set once one came."""
    got: list[tuple[int, str]] = []
    came = threading.Event()

    def on_signal(signum: int) -> None:
        got.append((signum, threading.current_thread().name))
        came.set()

    put_back = relay_signals(on_signal)
    try:
        yield got, came, put_back
    finally:
        put_back()


def test_a_signal_is_relayed_from_the_signals_thread(heard: Heard) -> None:
    got, came, _ = heard
    os.kill(os.getpid(), signal.SIGTERM)  # handled on this (the main) thread
    assert came.wait(60), "the relay never called on_signal"
    assert got == [(signal.SIGTERM, "signals")]


def test_sigterm_stops_a_running_reactor_through_the_relay() -> None:
    """The whole path: the signal, its handler on this thread, the relay, the reactor's stop
    posted from the relay's thread; the reactor (on a thread of its own here) returns."""
    reactor = RealReactor()
    put_back = relay_signals(lambda signum: reactor.stop())
    running = threading.Event()
    reactor.post(running.set)
    ran = threading.Thread(target=reactor.run, name="reactor", daemon=True)
    try:
        ran.start()
        assert running.wait(60), "the reactor never ran"
        os.kill(os.getpid(), signal.SIGTERM)
        ran.join(60)
        assert not ran.is_alive(), "the relayed stop never reached the reactor"
    finally:
        put_back()


def test_put_back_restores_the_handlers_and_ends_the_thread() -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    put_back = relay_signals(lambda signum: None)
    assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    put_back()
    assert {s: signal.getsignal(s) for s in before} == before
    assert "signals" not in [t.name for t in threading.enumerate()]
