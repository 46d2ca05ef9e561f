"""The interlocks with the reactor thread blocked, on a real reactor thread and wall time.

The firmware runs on a ``RealReactor`` in a thread of its own, over mock pins whose edges
call the firmware on the thread that drives them (as lgpio's callback thread does). A
callback posted to the reactor then blocks it, sleeping (the GIL free) or spinning (the
GIL held, handed over only each switch interval), and the test moves the lid or waits.
Each figure is over ``TRIES`` tries; the median and the worst are printed, and the 95th
percentile is asserted (the worst of 200 tries is the OS's on a shared 2-core machine).
"""

from __future__ import annotations

import random
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from hal.gpio import build_board
from launcher.core import config
from launcher.core import machine as m
from launcher.core.profiles import parse_profile
from launcher.core.reactor import RealReactor
from launcher.firmware.app import Launcher
from launcher.firmware.runner import SWITCH_INTERVAL, tune_switch_interval
from launcher.sim.rig import CueLog

TRIES = 200
LID_STOP_LIMIT = 0.001  # s: the lid edge to the roller's pins low, in 95 tries of 100
PREEMPTED_LIMIT = 0.01  # s: the worst try, which a busy shared machine may preempt
LEASE = 0.02  # s: a short lease, so that 200 lapses take seconds
LAPSE_SLACK = 0.005  # s: the guard thread's own wake-up and the poll, typically (median)
LAPSE_SLACK_P95 = 0.025  # s: ... and in 95 tries of 100, on a busy shared machine


class Unit:
    """The firmware on a real reactor thread over plain mock pins (no physics)."""

    def __init__(self) -> None:
        s = config.load()
        self.settings = replace(s, motor=replace(s.motor, lease=LEASE),
                                timing=replace(s.timing, mash_guard=0.0, debounce=0.005))
        self.factory = MockFactory(pin_class=MockPWMPin)
        self.pins = self.settings.pins
        self.board = build_board(self.pins, self.factory, name="mock")
        for name in ("button", "lid_open", "exit_beam"):
            self.pin(name).drive_high()  # released, not open, no card (active low)
        for name in ("lid_closed", "home", "yellow_back"):
            self.pin(name).drive_low()
        self.reactor = RealReactor()
        self.app = Launcher(self.board, self.reactor, self.settings, random.Random(1),
                            CueLog())
        self.app.load(100_000)
        self.app.use_profile(parse_profile("deal 30"))  # every press a long shot
        self.app.start()
        self.app.actuators.start_guard()
        self.thread = threading.Thread(target=self.reactor.run, name="reactor", daemon=True)
        self.thread.start()

    def pin(self, name: str):
        return self.factory.pin(getattr(self.pins, name))

    def on_reactor(self, fn: Callable[[], object]) -> object:
        """Run ``fn`` on the reactor thread and wait for its answer."""
        done = threading.Event()
        box: list[object] = []

        def call() -> None:
            box.append(fn())
            done.set()

        self.reactor.post(call)
        assert done.wait(5.0), "the reactor did not answer"
        return box[0]

    def until(self, cond: Callable[[], bool], timeout: float = 2.0) -> None:
        end = time.monotonic() + timeout
        waiter = threading.Event()
        while not cond():
            assert time.monotonic() < end, "timed out"
            waiter.wait(0.0002)

    def running(self) -> bool:
        return (self.pin("motor_in1").state > 0 and self.pin("motor_in2").state == 0
                and self.pin("motor_sleep").state == 1)  # driven forward, not braking

    def shoot(self) -> None:
        """Ready, lid closed: press, and wait until the roller runs."""
        self.pin("button").drive_low()
        self.until(self.running)
        self.pin("button").drive_high()
        # Let the debounce see the release: a press and release within its window are
        # contact bounce, and the next try's press would be swallowed with it.
        end = time.monotonic() + self.settings.timing.debounce * 2
        self.until(lambda: time.monotonic() > end)

    def block(self, how: str) -> threading.Event:
        """Block the reactor thread (``sleep`` or ``spin``) until the event is set."""
        release, entered = threading.Event(), threading.Event()

        def stuck() -> None:
            entered.set()
            if how == "sleep":
                release.wait(10.0)
            else:
                while not release.is_set():
                    pass

        self.reactor.post(stuck)
        assert entered.wait(5.0)
        return release

    def ready_again(self) -> None:
        """Lid closed, fault cleared, ready to shoot."""
        self.pin("lid_closed").drive_low()
        self.on_reactor(lambda: None)  # the lid's edge has been handled

        def ready() -> bool:
            if self.app.machine.state is m.FAULT:
                self.app.clear_fault()
            return self.app.machine.state is m.READY

        self.until(lambda: bool(self.on_reactor(ready)))

    def close(self) -> None:
        self.on_reactor(self.app.stop)
        self.reactor.stop()
        self.thread.join(5.0)
        self.board.close()
        self.factory.close()


@pytest.fixture
def unit() -> Iterator[Unit]:
    before = sys.getswitchinterval()
    tune_switch_interval()  # as `launcher run` does
    u = Unit()
    try:
        yield u
    finally:
        u.close()
        sys.setswitchinterval(before)


def report(name: str, xs: list[float]) -> None:
    p95 = statistics.quantiles(xs, n=20)[18]
    print(f"\n{name}: {len(xs)} tries, p50 {statistics.median(xs) * 1e3:.3f} ms, "
          f"p95 {p95 * 1e3:.3f} ms, max {max(xs) * 1e3:.3f} ms")


@pytest.mark.parametrize("how", ["sleep", "spin"])
def test_the_lid_stops_the_roller_within_1_ms_while_the_reactor_is_blocked(unit: Unit,
                                                                            how: str):
    assert sys.getswitchinterval() == SWITCH_INTERVAL
    times: list[float] = []
    for _ in range(TRIES):
        unit.ready_again()
        unit.shoot()
        release = unit.block(how)
        t0 = time.perf_counter()
        unit.pin("lid_closed").drive_high()  # the lid leaves closed: the edge, this thread
        times.append(time.perf_counter() - t0)  # the callback ran inside drive_high
        assert unit.pin("motor_in1").state == 0 and unit.pin("motor_sleep").state == 0
        release.set()
        assert unit.pin("motor_in2").state == 0
    report(f"lid edge -> roller off, reactor {how}ing", times)
    assert statistics.quantiles(times, n=20)[18] < LID_STOP_LIMIT
    assert max(times) < PREEMPTED_LIMIT


@pytest.mark.parametrize("how", ["sleep", "spin"])
def test_the_roller_stops_by_itself_within_its_lease_while_the_reactor_is_blocked(
        unit: Unit, how: str):
    times: list[float] = []
    for _ in range(TRIES):
        unit.ready_again()
        unit.shoot()
        release = unit.block(how)
        t0 = time.perf_counter()
        unit.until(lambda: not unit.running())  # braking (IN1 = IN2 = 1) is stopped
        times.append(time.perf_counter() - t0)
        release.set()
        unit.until(lambda: unit.app.machine.state is m.FAULT)  # the lapse, reported
    report(f"reactor {how}ing -> roller stopped by its lease ({LEASE * 1e3:.0f} ms)", times)
    # The last renewal came at most a quarter lease before the block: the lapse follows
    # within the lease, plus the guard thread's wake-up (the OS's, on a busy machine).
    assert statistics.median(times) <= LEASE + LAPSE_SLACK
    assert statistics.quantiles(times, n=20)[18] <= LEASE + LAPSE_SLACK_P95
    assert unit.app.actuators.lapses == TRIES
