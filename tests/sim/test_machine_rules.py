"""The simulated launcher under random use: a hypothesis rule-based state machine.

Rules do what people and hardware do (presses and mashing, the lid at any moment, even
inside a debounce window, loads, jams and stalls, sensor glitches, time jumps, sleep and
wake, console commands with debug runs); the invariants are checked after every step on
the manual reactor. `make test` runs a short tier; `make test-slow` runs 10,000 examples.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from hal.sim import HALL_LAG
from launcher.core import config
from launcher.core import machine as m
from launcher.firmware.console import Console
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras

TIMER_BOUND = 40  # live reactor timers: the firmware's, the simulator's, the console's
EPS = 1e-9


class LauncherUnderUse(RuleBasedStateMachine):
    """One simulated unit, its console, and what the test has seen happen to it."""

    @initialize(seed=st.integers(0, 2**16), cards=st.integers(0, 40))
    def start(self, seed: int, cards: int) -> None:
        self.rig = self.make_rig(seed)
        self.console = Console(self.rig.app, **console_extras(self.rig.sim))
        self.loaded = 0
        self.count_true = True  # False after a slipping roller: "empty" may then be wrong
        self.load(cards)
        self.max_run = self.rig.settings.timing.max_run
        self.run_started: float | None = None
        self.violations: list[str] = []
        motor = self.rig.app.board.motor
        forward, stop = motor.forward, motor.stop

        # Watch the adapter itself: every run command must find the lid pin closed.
        def watched_forward(speed: float) -> None:
            if not self.rig.app.board.lid_closed.is_active:
                self.violations.append(f"motor driven with the lid open at {self.rig.now}")
            if self.run_started is None:
                self.run_started = self.rig.now
            forward(speed)

        def watched_stop(brake: bool = True) -> None:
            self._end_run()
            stop(brake)

        motor.forward = watched_forward  # type: ignore[method-assign]
        motor.stop = watched_stop  # type: ignore[method-assign]
        # Watch the idle timer: every (time armed, wake time) of it, and the sleeps seen.
        due = self.rig.app.timer_due("idle")  # armed at start, before this watch
        self.idle_arms: list[tuple[float, float]] = [
            (due - self.rig.settings.timing.sleep_after, due)]
        self.sleeps_checked = 0
        set_timer = self.rig.app._set_timer

        def watched_set_timer(name: str, at: float | None) -> None:
            if name == "idle" and at is not None:
                self.idle_arms.append((self.rig.now, at))
            set_timer(name, at)

        self.rig.app._set_timer = watched_set_timer  # type: ignore[method-assign]

    def make_rig(self, seed: int) -> SimRig:
        return SimRig(seed=seed)

    def teardown(self) -> None:
        rig = getattr(self, "rig", None)
        if rig is not None:
            self.console.close()
            rig.close()

    # -- helpers --

    def _end_run(self) -> None:
        if self.run_started is not None:
            ran = self.rig.now - self.run_started
            if ran > self.max_run + EPS:
                self.violations.append(f"motor ran {ran:.3f} s > max_run {self.max_run}")
            self.run_started = None

    def load(self, cards: int) -> None:
        self.rig.sim.load(f"c{self.loaded + i}" for i in range(cards))
        self.loaded += cards
        self.rig.app.load(len(self.rig.sim.cartridge))
        self.count_true = not self.rig.sim.roller_stalled
        self.rig.advance(0)

    def settle(self) -> None:
        self.rig.advance(0)

    # -- rules: people --

    @rule()
    def press(self) -> None:
        before = self.rig.app.machine.memory.counters.get("presses", 0)
        decisions = len(self.rig.app.events("dry")) + len(self.rig.app.events("shoot"))
        self.rig.sim.press()
        self.settle()
        after = self.rig.app.machine.memory.counters.get("presses", 0)
        made = len(self.rig.app.events("dry")) + len(self.rig.app.events("shoot")) - decisions
        assert after - before <= 1 and made == after - before

    @rule()
    def mash(self) -> None:
        for _ in range(3):
            self.rig.sim.press(hold=0.01)
            self.rig.advance(0.02)

    @rule(where=st.sampled_from(["ajar", "full", "closed"]),
          inside=st.floats(0.0, 0.03))
    def lid(self, where: str, inside: float) -> None:
        sim = self.rig.sim
        if where == "closed":
            sim.close_lid()
        else:
            sim.open_lid(full=where == "full")
        self.rig.advance(inside)  # the next step may land inside this edge's debounce window

    @rule(cards=st.integers(1, 30))
    @precondition(lambda self: self.rig.state in (m.READY, m.LID_OPEN))
    def reload(self, cards: int) -> None:
        self.load(cards)

    @rule()
    def take_cards(self) -> None:
        self.rig.sim.take()

    # -- rules: hardware trouble --

    @rule(trouble=st.sampled_from(["jam", "unjam", "stall_rotator", "unstall_rotator",
                                   "stall_roller", "unstall_roller"]))
    def trouble(self, trouble: str) -> None:
        sim = self.rig.sim
        match trouble:
            case "jam":
                sim.jam()
            case "unjam":
                sim.clear_jam()
            case "stall_rotator" | "unstall_rotator":
                sim.stall_rotator(trouble == "stall_rotator")
            case "stall_roller" | "unstall_roller":
                sim.stall_roller(trouble == "stall_roller")
                # A roller that slips sends no card to the beam: the firmware then believes
                # the launcher empty (by design), until the next load tells it otherwise.
                self.count_true = self.count_true and trouble == "unstall_roller"
        self.settle()

    @rule(sensor=st.sampled_from(["home", "yellow_back", "exit_beam"]),
          level=st.booleans(), length=st.floats(0.0, 0.2))
    def glitch(self, sensor: str, level: bool, length: float) -> None:
        if sensor == "exit_beam":
            # A flickering beam looks like a card passing: the count may be wrong from here
            # until the next load (a real sensor glitch miscounts the same way).
            self.count_true = False
        self.rig.sim.stick(sensor, level)
        self.rig.advance(length)
        self.rig.sim.stick(sensor, None)
        self.settle()

    # -- rules: time --

    @rule(seconds=st.one_of(st.floats(0.0, 0.5), st.floats(0.0, 400.0)))
    def time_passes(self, seconds: float) -> None:
        self.rig.advance(seconds)

    # -- rules: the console --

    @rule(line=st.sampled_from([
        "sleep", "wake", "clear", "status", "press", "debug on", "debug off",
        "motor run 50", "motor run 300", "rotate", "load 5", "inventory", "side",
        "luck show", "json on", "json off", "stats", "log 5",
    ]))
    def console_line(self, line: str) -> None:
        out = self.console.handle_line(line)
        assert len([x for x in out if x == "ok" or x.startswith(("ok ", "error ", '{"ok"'))]) == 1
        assert all(x.isprintable() for x in out)
        if line == "load 5":
            if self.rig.state in (m.READY, m.LID_OPEN):
                self.load(0)  # tell the firmware the true count again, as a person would
            else:
                self.count_true = False  # a wrong count typed mid-shot: wrong until a reload
        self.settle()

    # -- invariants --

    @invariant()
    def the_motor_is_safe(self) -> None:
        if not hasattr(self, "rig"):
            return
        sim, rig = self.rig.sim, self.rig
        assert not self.violations, self.violations
        if not rig.app.board.lid_closed.is_active:
            assert rig.app.board.motor.speed == 0
        if self.run_started is not None:
            assert rig.now - self.run_started <= self.max_run + EPS
        if rig.state in (m.FAULT, m.ASLEEP):
            assert not sim.motor_running and not sim.level("rotator")

    @invariant()
    def the_rotator_rests_outside_a_turn(self) -> None:
        """Outside a turn its inputs are low, but for the brief brake of a turn stopped by
        the lid (it ends by itself after motor.brake_ms)."""
        if hasattr(self, "rig") and self.rig.state not in m.TURNING:
            sim, act = self.rig.sim, self.rig.app.actuators
            assert not self.rig.app.board.rotator.is_active
            if act.turn != "brake":
                assert sim.level("rotator") == 0 and sim.level("rotator_in2") == 0

    @invariant()
    def the_rotator_turns_only_with_the_lid_fully_open(self) -> None:
        if hasattr(self, "rig") and self.rig.app.board.rotator.is_active:
            assert self.rig.sim.lid == "full"

    @invariant()
    def the_driver_sleeps_when_nothing_is_driven(self) -> None:
        """nSLEEP is high only while a channel is driven or braking; with the lid off its
        switch, only for the rotator."""
        if not hasattr(self, "rig"):
            return
        act, sim = self.rig.app.actuators, self.rig.sim
        if act.roller == "idle" and act.turn == "idle":
            assert sim.level("motor_sleep") == 0
        if not self.rig.app.board.lid_closed.is_active:
            assert act.roller == "idle"
            if act.turn == "idle":
                assert sim.level("motor_sleep") == 0

    @invariant()
    def the_led_and_the_sound_are_what_the_state_needs(self) -> None:
        if not hasattr(self, "rig"):
            return
        app = self.rig.app
        # The LED is what the state's entry sent (the machine's led_of, with its part).
        assert app.led.pattern == m.led_of(app.machine.at, app.machine.memory)
        assert self.rig.cues.asleep == (app.machine.state == m.ASLEEP)

    @invariant()
    def ready_means_the_side_the_sensor_reads(self) -> None:
        """Unless a stopped turn waits for the lid: then the cartridge is between sides."""
        if (hasattr(self, "rig") and self.rig.state == m.READY
                and not self.rig.app.machine.turn_owed):
            sensed = "mild" if self.rig.app.board.yellow_back.is_active else "wild"
            assert self.rig.app.machine.memory.side == sensed

    @invariant()
    def sleep_starts_exactly_at_the_idle_limit(self) -> None:
        if not hasattr(self, "rig"):
            return
        limit = self.rig.settings.timing.sleep_after
        idle_sleeps = [t for t, kind, data in self.rig.app.history
                       if kind == "state" and data["on"] == m.T_IDLE and data["to"] == m.ASLEEP]
        for t in idle_sleeps[self.sleeps_checked:]:
            armed, at = [arm for arm in self.idle_arms if arm[0] <= t + EPS][-1]
            assert abs(at - t) < EPS and abs(at - armed - limit) < EPS, (armed, at, t)
        self.sleeps_checked = len(idle_sleeps)
        # And never late: an idle timer that is due has fired.
        if self.rig.state in (m.READY, m.LID_OPEN):
            assert self.rig.app.timer_due("idle") >= self.rig.now - EPS

    @invariant()
    def timers_stay_bounded(self) -> None:
        if hasattr(self, "rig"):
            assert self.rig.reactor.live_timers <= TIMER_BOUND

    @invariant()
    def cards_are_conserved(self) -> None:
        if not hasattr(self, "rig"):
            return
        sim, mem = self.rig.sim, self.rig.app.machine.memory
        in_beam = 1 if sim.in_beam is not None else 0
        assert len(sim.cartridge) + len(sim.ejected) + in_beam == self.loaded
        assert len(sim.tray) <= len(sim.ejected)
        assert mem.inventory is None or mem.inventory >= 0
        if (self.count_true and mem.inventory is not None and not in_beam
                and self.rig.state in (m.READY, m.LID_OPEN, m.ASLEEP)):
            assert mem.inventory == len(sim.cartridge)


class BrakingLauncherUnderUse(LauncherUnderUse):
    """The same use, on a unit that brakes and creeps back at home (``pins.rotator_in2``)
    with late Hall switches and a brake that lets the cartridge run past the magnet."""

    def make_rig(self, seed: int) -> SimRig:
        s = config.load()
        s = replace(s, pins=replace(s.pins, rotator_in2=4))
        return SimRig(s, seed=seed, physics=replace(HALL_LAG, brake_deg=6.0))


SHORT = settings(max_examples=200, stateful_step_count=50, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

TestLauncherUnderUse = LauncherUnderUse.TestCase
TestLauncherUnderUse.settings = SHORT
TestBrakingLauncherUnderUse = BrakingLauncherUnderUse.TestCase
TestBrakingLauncherUnderUse.settings = settings(SHORT, max_examples=100)


@pytest.mark.slow
def test_ten_thousand_examples() -> None:
    run_state_machine_as_test(LauncherUnderUse, settings=settings(SHORT, max_examples=10_000))


@pytest.mark.slow
def test_two_thousand_examples_with_the_home_brake() -> None:
    run_state_machine_as_test(BrakingLauncherUnderUse,
                              settings=settings(SHORT, max_examples=2_000))
