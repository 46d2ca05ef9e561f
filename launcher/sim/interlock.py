"""The firmware on a real reactor thread over plain mock pins: the interlocks in wall time.

The lid's edge is delivered on the thread that moves the pin, as lgpio's callback thread
delivers it; a callback posted to the reactor blocks it, sleeping (the GIL free) or
spinning (the GIL held, handed over only each switch interval). ``bench/interlock.py``
and ``tests/firmware/test_interlock_threads.py`` measure with it.

On a loaded machine the whole process (reactor, guard and this harness alike) can stall
for longer than a lease before a try has begun: the guard then ends the shot's run, as it
should, before the reactor was blocked or the lid moved. Such a try measures nothing; it
is counted in ``Unit.stalls`` and made again; more than ``MAX_STALLS`` of the tries asked
for fail the measurement.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gpiozero.pins.mock import MockFactory, MockPWMPin

from hal.gpio import build_board
from launcher.core import config
from launcher.core import machine as m
from launcher.core.profiles import parse_profile
from launcher.core.reactor import RealReactor
from launcher.firmware.app import build_app
from launcher.firmware.state import StateStore
from launcher.sim.rig import CueLog

MAX_STALLS = 0.5  # of a measurement's tries, made again: more, and it is too busy to measure


class Stalled(Exception):
    """The shot's run lapsed before the try began: the process stalled longer than a lease."""


class Unit:
    """The firmware on a real reactor thread over plain mock pins (no physics)."""

    def __init__(self, lease: float | None = None) -> None:
        s = config.load()
        motor = s.motor if lease is None else replace(s.motor, lease=lease)
        # Plain mock pins: no copper behind them to drive the read-backs (the simulator's
        # circuit does that; here only the threads are measured).
        pins = replace(s.pins, power_contact_sense=None, sleep_sense=None)
        self.settings = replace(s, motor=motor, pins=pins,
                                timing=replace(s.timing, mash_guard=0.0, debounce=0.005))
        self.factory = MockFactory(pin_class=MockPWMPin)
        self.pins = self.settings.pins
        self.board = build_board(self.pins, self.factory, name="mock")
        for name in ("button", "lid_open", "exit_beam"):
            self.pin(name).drive_high()  # released, not open, no card (active low)
        for name in ("lid_closed", "home", "yellow_back"):
            self.pin(name).drive_low()
        self.reactor = RealReactor()
        self.stalls = 0  # tries made again: their run lapsed before the try began
        self.blocked_at, self.blocked_running = 0.0, False
        self.app = build_app(self.settings, self.reactor, random.Random(1), self.board,
                             cues=CueLog(), store=StateStore(None))
        self.app.load(100_000)
        self.app.use_profile(parse_profile("deal 30"))  # every press a long shot
        self.app.start()
        self.app.actuators.start_guard()
        self.thread = threading.Thread(target=self.reactor.run, name="reactor", daemon=True)
        self.thread.start()

    def pin(self, name: str) -> Any:
        return self.factory.pin(getattr(self.pins, name))

    def on_reactor(self, fn: Callable[[], object]) -> object:
        """Run ``fn`` on the reactor thread and wait for its answer."""
        done = threading.Event()
        box: list[object] = []

        def call() -> None:
            box.append(fn())
            done.set()

        self.reactor.post(call)
        if not done.wait(5.0):
            raise RuntimeError("the reactor did not answer")
        return box[0]

    def until(self, cond: Callable[[], bool], timeout: float = 2.0) -> None:
        end = time.monotonic() + timeout
        waiter = threading.Event()
        while not cond():
            if time.monotonic() > end:
                raise RuntimeError("timed out")
            waiter.wait(0.0002)

    def running(self) -> bool:
        """Driven forward (braking, IN1 = IN2 = 1, is stopped)."""
        return (self.pin("motor_in1").state > 0 and self.pin("motor_in2").state == 0
                and self.pin("motor_sleep").state == 1)

    def shoot(self) -> None:
        """Ready, lid closed: press, and wait until the roller runs; it still runs on return.

        Raises ``Stalled`` if its run lapsed first, seen or not: the process stalled longer
        than a lease (the unit is then faulted, and ``ready_again`` clears it).
        """
        counted = self.app.actuators.lapses
        self.pin("button").drive_low()
        self.until(lambda: self.running() or self.app.actuators.lapses != counted)
        self.pin("button").drive_high()
        # Let the debounce see the release: a press and release within its window are
        # contact bounce, and the next try's press would be swallowed with it.
        end = time.monotonic() + self.settings.timing.debounce * 2
        self.until(lambda: time.monotonic() > end)
        self.check_running(counted)

    def check_running(self, counted: int) -> None:
        """Raise ``Stalled`` unless the roller runs and no run lapsed since ``counted``."""
        if self.app.actuators.lapses != counted or not self.running():
            self.lapsed_before(counted)

    def lapsed_before(self, counted: int) -> None:
        """The roller stopped before the try began: wait for its lapse, raise ``Stalled``.

        Only a lapse stops a 30-card shot this soon (the beam sees no card, and the card
        timeout is seconds away); a run stopped any other way times out here.
        """
        self.until(lambda: self.app.actuators.lapses != counted)
        raise Stalled

    def stalled(self, since: int, tries: int) -> None:
        """A try's run lapsed before it began: count it; more than ``MAX_STALLS`` of
        ``tries`` since the count was ``since`` fail the measurement."""
        self.stalls += 1
        if self.stalls - since > MAX_STALLS * tries:
            raise RuntimeError(f"{self.stalls - since} runs lapsed before their try began: "
                               "the machine is too busy to measure")

    def block(self, how: str) -> threading.Event:
        """Block the reactor thread (``sleep`` or ``spin``) until the event is set.

        What the reactor saw as it blocked is kept: ``blocked_at`` (``perf_counter``), and
        whether the roller ran then (``blocked_running``).
        """
        release, entered = threading.Event(), threading.Event()

        def stuck() -> None:
            self.blocked_running = self.running()
            self.blocked_at = time.perf_counter()
            entered.set()
            if how == "sleep":
                release.wait(10.0)
            else:
                while not release.is_set():
                    pass

        self.reactor.post(stuck)
        if not entered.wait(5.0):
            raise RuntimeError("the reactor did not take the blocking callback")
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


def _tries(unit: Unit, tries: int,
           attempt: Callable[[list[threading.Event]], float]) -> list[float]:
    """``tries`` figures of ``attempt``, each from a ready unit. A try that stalled is made
    again (``Unit.stalled``); a reactor it blocked (its release put in the list it is
    given) is let go however the try ended."""
    times: list[float] = []
    since = unit.stalls
    while len(times) < tries:
        unit.ready_again()
        held: list[threading.Event] = []
        try:
            times.append(attempt(held))
        except Stalled:
            unit.stalled(since, tries)
        finally:
            for release in held:
                release.set()
    return times


def lid_stops(unit: Unit, how: str | None, tries: int) -> list[float]:
    """Seconds from the lid's edge to the roller's pins low, each try mid-shot; ``how``:
    the reactor ``sleep``ing or ``spin``ning meanwhile, or None (free)."""

    def attempt(held: list[threading.Event]) -> float:
        unit.shoot()
        counted = unit.app.actuators.lapses
        if how:
            held.append(unit.block(how))
        unit.check_running(counted)
        t0 = time.perf_counter()
        unit.pin("lid_closed").drive_high()  # the lid leaves closed: the edge, this thread
        t = time.perf_counter() - t0  # the callback ran inside drive_high
        if unit.pin("motor_in1").state or unit.pin("motor_sleep").state:
            raise AssertionError("the roller still driven after the lid's edge")
        if unit.app.actuators.lapses != counted:
            raise Stalled  # the lease, not the lid, may have stopped it
        return t

    return _tries(unit, tries, attempt)


def lapses(unit: Unit, how: str, tries: int) -> list[float]:
    """Seconds from the reactor blocking mid-shot to the roller stopped by its lease."""

    def attempt(held: list[threading.Event]) -> float:
        unit.shoot()
        counted = unit.app.actuators.lapses
        release = unit.block(how)
        held.append(release)
        if not unit.blocked_running:  # it lapsed before the reactor blocked
            unit.lapsed_before(counted)
        unit.until(lambda: not unit.running())
        t = time.perf_counter() - unit.blocked_at  # from the reactor's own blocking
        release.set()
        unit.until(lambda: unit.app.machine.state is m.FAULT)  # the lapse, reported
        if unit.app.actuators.lapses != counted + 1:
            raise AssertionError("the roller stopped, but not by its lease")
        return t

    return _tries(unit, tries, attempt)
