"""Each safety layer holds whatever happened to the others: one failed pin write, one dead
thread or one lost edge takes out one layer, never two.

On the simulated launcher and the manual reactor (the guard thread's work is ``expire``,
called as the guard would call it), except where a test says it needs real threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from rigs import dealing_rig, press_until_shooting

from launcher.core import config
from launcher.core import machine as m
from launcher.firmware.actuators import GUARD_BEAT, GUARD_STALE, LayerDown
from launcher.sim.rig import SimRig


def shooting(rig: SimRig) -> None:
    press_until_shooting(rig)
    assert roller_driven(rig)


def roller_driven(rig: SimRig) -> bool:
    """The roller's bridge driven forward: nSLEEP high, IN1's duty up, IN2 low."""
    s = rig.sim
    return s.level("motor_sleep") == 1 and s.level("motor_in1") > 0 and s.level("motor_in2") == 0


def raising_once(obj: object, name: str, message: str = "injected") -> list[int]:
    """Make ``obj.name()`` raise once, at its next call; the list counts the calls."""
    real = getattr(obj, name)
    calls = [0]

    def broken(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == 1:
            raise OSError(message)
        return real(*args, **kwargs)

    setattr(obj, name, broken)
    return calls


def recovers(rig: SimRig, cards: int = 3) -> None:
    """Close the lid, ``clear``, and the next press shoots its ``cards`` cards."""
    rig.sim.close_lid()
    rig.advance(0.1)
    if rig.state == m.FAULT:
        rig.app.clear_fault()
        rig.advance(0.3)
    assert rig.state == m.READY, rig.state
    before = rig.sim.ejected_total
    rig.sim.press()
    rig.settle()
    assert rig.sim.ejected_total == before + cards


# -- 1. one failed pin write ------------------------------------------------------------------


def test_a_raising_nsleep_write_in_the_lid_stop_leaves_the_roller_undriven_and_faults():
    """The review's reproduction: nSLEEP's write raised inside the lid stop, the exception
    left the roller driven, escaped into the pin library and never reached the machine."""
    rig = dealing_rig(cards=20)
    shooting(rig)
    raising_once(rig.app.board.motor_enable, "off", "nSLEEP write failed")
    rig.sim.open_lid(full=False)  # must not raise into the pin library (here: this call)
    assert rig.sim.level("motor_in1") == 0 and rig.sim.level("motor_in2") == 0
    assert not roller_driven(rig)
    rig.advance(0.0)
    # The machine heard the lid (the edge was posted whatever the interlock did) and the
    # failed write is an internal fault that names the pin and the thread.
    assert rig.state == m.FAULT and rig.app.machine.memory.fault == "internal"
    detail = rig.faults[-1]["error"]
    assert "motor_enable" in detail and "nSLEEP write failed" in detail
    assert "the lid stop" in detail
    assert not rig.app.machine.inputs.lid_closed
    for _ in range(10):  # 10 s later: nothing drives it
        rig.advance(1.0)
        assert not roller_driven(rig)
    recovers(rig, 20)


@pytest.mark.parametrize("part,method", [("motor_enable", "off"), ("motor", "stop"),
                                         ("rotator", "off")])
def test_every_pin_of_a_stop_is_written_even_when_one_raises(part: str, method: str):
    rig = dealing_rig(cards=20)
    shooting(rig)
    raising_once(getattr(rig.app.board, part), method)
    failed = rig.app.actuators.safe()
    assert [p for p, _ in failed] == [part]
    levels = {n: rig.sim.level(n) for n in ("motor_sleep", "motor_in1", "motor_in2", "rotator")}
    written = {"motor_enable": "motor_sleep", "motor": "motor_in1", "rotator": "rotator"}
    assert all(v == 0 for n, v in levels.items() if n != written[part]
               and not (part == "motor" and n == "motor_in2")), levels
    assert not roller_driven(rig)
    assert rig.app.actuators.roller == "idle"  # the state recorded after the writes


def test_half_a_bridge_stop_still_writes_the_other_input():
    rig = dealing_rig(cards=20)
    shooting(rig)
    motor = rig.app.board.motor
    raising_once(motor, "_in1_write")  # IN1's write fails: IN2 is still written
    with pytest.raises(OSError):
        motor.stop(brake=True)
    assert rig.sim.level("motor_in2") == 1  # braking on IN2 at least: never forward alone


def test_a_stop_writes_the_pins_whatever_the_state_says():
    """``stop_motor`` wrote nothing unless the roller was marked running."""
    rig = dealing_rig()
    act, board = rig.app.actuators, rig.app.board
    board.motor_enable.on()
    board.motor.forward(0.5)  # driven behind the owner's back: the state says idle
    assert act.roller == "idle"
    act.stop_motor()
    assert not roller_driven(rig) and rig.sim.level("motor_sleep") == 0
    board.rotator.on()
    act.rotator("off")
    assert rig.sim.level("rotator") == 0


# -- 2. the guard thread ---------------------------------------------------------------------


def test_a_raising_write_in_the_guard_stops_the_drive_and_faults_and_the_guard_goes_on(
        caplog: pytest.LogCaptureFixture):
    rig = dealing_rig(cards=20)
    act = rig.app.actuators
    shooting(rig)
    raising_once(rig.app.board.motor, "stop", "IN1 write failed")
    later = rig.now + rig.settings.motor.lease
    act.expire(later)  # the guard's check, which raised on today's main
    assert not roller_driven(rig)
    rig.advance(0.0)
    # One fault: the lapse the guard found; the write that failed as it stopped it is
    # logged with its traceback, once.
    assert rig.state == m.FAULT and "stopped by the guard thread" in rig.faults[-1]["error"]
    assert caplog.text.count("OSError: IN1 write failed") == 2  # the traceback, the line
    assert caplog.text.count("Traceback") == 1
    recovers(rig, 20)
    shooting(rig)  # and the guard still ends a run whose lease lapses
    act.expire(rig.now + rig.settings.motor.lease)
    assert not roller_driven(rig) and act.lapses == 2


def test_the_guard_thread_survives_an_exception_and_a_dead_guard_stops_the_watchdog():
    """Real threads: the guard's loop catches, drives safe, reports and loops on; once it
    is dead, ``layers_down`` faults the unit and the watchdog is no longer fed."""
    from launcher.firmware.notify import Watchdog

    rig = dealing_rig(cards=20)
    act = rig.app.actuators
    broken = threading.Event()

    def raising(now: float, renew: bool) -> None:
        broken.set()
        raise RuntimeError("a bug in the guard's check")

    real_check = act._check
    act._check = raising  # type: ignore[method-assign]
    act.start_guard()
    try:
        assert broken.wait(5.0)
        act._check = real_check  # type: ignore[method-assign]
        loops = act.guard_loops
        act._guard_wake.set()
        deadline = threading.Event()
        for _ in range(500):  # the guard wakes again: it did not die
            if act.guard_loops > loops:
                break
            deadline.wait(0.01)
        assert act.guard_loops > loops and act.dead_layers() == []
        rig.advance(0.0)
        assert rig.state == m.FAULT and "the guard thread" in rig.faults[-1]["error"]
    finally:
        act.stop_guard()

    class Notifier:
        pings = 0

        def watchdog(self) -> bool:
            self.pings += 1
            return True

    rig2 = dealing_rig()
    dead = threading.Thread(target=lambda: None)
    dead.start()
    dead.join()
    rig2.app.actuators._guard = dead  # a guard thread that has ended
    notifier = Notifier()
    dog = Watchdog(rig2.reactor, notifier, 10.0, rig2.app.layers_down)  # type: ignore[arg-type]
    dog.start()
    rig2.advance(20.0)
    assert notifier.pings == 0 and dog.withheld >= 4
    assert rig2.state == m.FAULT and "the guard thread ended" in rig2.faults[-1]["error"]
    rig2.app.actuators._guard = None


def test_a_guard_that_stops_waking_stops_the_watchdog():
    rig = dealing_rig()
    act = rig.app.actuators
    stuck = threading.Event()
    alive = threading.Thread(target=stuck.wait, args=(30,), daemon=True)
    alive.start()
    try:
        act._guard = alive  # alive, but its loop never turns (guard_woke stands still)
        act.guard_woke = rig.now
        assert act.dead_layers() == []
        rig.advance(GUARD_STALE)  # late, but no later than GUARD_STALE: alive
        assert rig.app.layers_down() == []
        assert rig.app.layers_down() == []  # a second check at once: still alive
        rig.advance(0.1)
        assert rig.app.layers_down() == [
            f"the guard thread has not woken for {GUARD_STALE + 0.1:.1f} s (it wakes every "
            f"{GUARD_BEAT:g} s)"]
        rig.advance(0.0)
        assert rig.state == m.FAULT and "has not woken" in rig.faults[-1]["error"]
    finally:
        act._guard = None
        stuck.set()
        alive.join()


def test_no_drive_starts_while_a_layers_thread_is_dead():
    rig = dealing_rig()
    dead = threading.Thread(target=lambda: None, name="lgpio-notify")
    dead.start()
    dead.join()
    rig.app.board.pin_threads = lambda: [dead]  # the pin library's callback thread ended
    with pytest.raises(LayerDown):
        rig.app.actuators.run_motor(0.5)
    rig.sim.press()
    rig.advance(0.0)
    assert not roller_driven(rig)
    assert rig.state == m.FAULT and "lgpio-notify ended" in rig.faults[-1]["error"]


# -- 3. renewals read the pins ---------------------------------------------------------------


def lose_edges(rig: SimRig, name: str) -> None:
    """The pin library stops delivering this input's edges (a lost callback)."""
    device = getattr(rig.app.board, name)._dev
    device.when_activated = device.when_deactivated = None


def test_a_renewal_reads_the_lid_and_stops_a_run_whose_lid_edge_was_lost():
    rig = dealing_rig(cards=20)
    lease = rig.settings.motor.lease
    shooting(rig)
    lose_edges(rig, "lid_closed")
    lose_edges(rig, "lid_closed_nc")  # wired by default: its edge would stop it too
    rig.sim.open_lid(full=False)
    assert roller_driven(rig)  # no edge, no pin-thread stop
    rig.advance(lease / 4)  # the next renewal reads the lid
    assert not roller_driven(rig)
    assert rig.state == m.LID_OPEN  # the machine heard it as of the edge
    assert ("interlock", {"reason": "lid read open while the roller ran"}) in rig.app.events()


def test_the_guard_reads_the_lid_too_with_the_reactor_stopped():
    rig = dealing_rig(cards=20)
    shooting(rig)
    lose_edges(rig, "lid_closed")
    lose_edges(rig, "lid_closed_nc")  # wired by default: its edge would stop it too
    rig.sim.open_lid(full=False)
    rig.app.actuators.expire(rig.now)  # the guard, the reactor not running at all
    assert not roller_driven(rig)


def test_a_turn_whose_lid_edge_was_lost_is_stopped_at_the_next_renewal():
    rig = dealing_rig()
    rig.sim.stall_rotator()  # it keeps turning (never reaches home)
    rig.sim.open_lid()
    rig.advance(0.2)
    assert rig.state == m.ROTATING and rig.sim.level("rotator") == 1
    lose_edges(rig, "lid_open")
    rig.sim.open_lid(full=False)
    rig.advance(rig.settings.motor.lease / 4)
    assert rig.sim.level("rotator") == 0


def test_an_expired_lease_is_never_renewed():
    rig = dealing_rig(cards=20)
    act = rig.app.actuators
    shooting(rig)
    act._tick(rig.now + rig.settings.motor.lease * 1.01)  # a tick that came too late
    assert not roller_driven(rig) and act.lapses == 1


# -- 4. the self-test's board, 5. the rotator brake, 6. the roller's bridge in a flip ----------


def test_the_self_tests_pulse_stops_on_the_lid_edge_itself():
    from launcher.firmware.selftest import SelfTest
    from launcher.sim.selftest import ScriptedOperator, simulated_unit

    s = config.load()
    sim, player, runner = simulated_unit(s)
    test = SelfTest(sim.board, m.MachineSettings.of(s), runner, ScriptedOperator(sim, player),
                    player)
    assert test.act.run_motor(s.motor.speed)
    assert sim.level("motor_in1") > 0
    sim.open_lid(full=False)  # the self-test's loop runs nothing meanwhile
    assert sim.level("motor_in1") == 0 and sim.level("motor_sleep") == 0
    sim.board.close()


def brake_rig(**changes: Any) -> SimRig:
    return dealing_rig(rotator_in2=4, **changes)


def test_the_rotator_brake_needs_the_lid_fully_open_and_ends_by_itself():
    rig = brake_rig()
    act = rig.app.actuators
    assert act.rotator("brake") is False  # the lid is closed
    assert rig.sim.level("motor_sleep") == 0 and rig.sim.level("rotator") == 0
    rig.sim.open_lid()
    rig.settle()
    assert act.rotator("brake") is True
    assert (rig.sim.level("rotator"), rig.sim.level("rotator_in2")) == (1, 1)
    rig.advance(rig.settings.rotator.brake - 0.001)
    assert (rig.sim.level("rotator"), rig.sim.level("rotator_in2")) == (1, 1)
    rig.advance(0.002)  # never renewed: it ends after rotator.brake_ms
    assert (rig.sim.level("rotator"), rig.sim.level("rotator_in2")) == (0, 0)
    assert rig.sim.level("motor_sleep") == 0


def test_after_shutdown_a_brake_wakes_nothing():
    rig = brake_rig()
    rig.sim.open_lid()
    rig.settle()
    act = rig.app.actuators
    act.shutdown()
    assert act.rotator("brake") is False
    assert rig.sim.level("motor_sleep") == 0 and rig.sim.level("rotator") == 0


def flip_levels(rig: SimRig) -> list[float]:
    """nSLEEP at each step of a flip, from the lid's full opening to the turn's end."""
    seen = []
    rig.sim.open_lid()
    rig.advance(0.0)
    while rig.state in m.TURNING or not seen:
        seen.append(rig.sim.level("motor_sleep"))
        rig.advance(0.005)
    return seen


def test_a_rotator_of_its_own_never_wakes_the_rollers_driver_in_a_flip():
    rig = dealing_rig(driver="own")
    seen = flip_levels(rig)
    assert rig.state == m.LID_OPEN and rig.app.machine.memory.side == "wild"
    assert set(seen) == {0}


def test_a_rotator_on_the_shared_driver_wakes_it_for_the_flip_only():
    """The case SAFETY.md's row "IN1 stuck high during a flip" covers."""
    rig = dealing_rig()
    seen = flip_levels(rig)
    assert 1 in seen and rig.sim.level("motor_sleep") == 0


# -- 7. no lock a stop waits for, 8. one subscriber does not replace another ------------------


def test_a_reactor_stuck_inside_the_actuators_tick_does_not_hold_up_the_lid_stop():
    """With today's RLock, the lid stop waited for a tick that hung holding it."""
    rig = dealing_rig(cards=20)
    act = rig.app.actuators
    shooting(rig)
    entered, release, done = threading.Event(), threading.Event(), threading.Event()
    real = act.motor.lease

    class Stuck:
        """A lease that blocks the tick that reads it (the tick runs on its own thread)."""

        def __getattr__(self, name: str) -> Any:
            return getattr(rig.settings.motor, name)

        @property
        def lease(self) -> float:
            if threading.current_thread().name == "stuck-reactor":
                entered.set()
                release.wait(12.0)
            return real

    act.motor = Stuck()  # type: ignore[assignment]

    def reactor_turn() -> None:
        act._tick(rig.now)
        done.set()

    t = threading.Thread(target=reactor_turn, name="stuck-reactor", daemon=True)
    t.start()
    lid = threading.Thread(target=lambda: rig.sim.open_lid(full=False), name="pin-thread",
                           daemon=True)
    try:
        assert entered.wait(5.0)
        lid.start()  # the lid's edge and its stop, on a thread of their own
        lid.join(2.0)
        assert not lid.is_alive(), "the lid stop waited for the stuck reactor"
        assert not done.is_set()  # the tick is still stuck
        assert not roller_driven(rig)
    finally:
        release.set()
        t.join(5.0)
        lid.join(15.0)
    assert done.is_set()
    assert not roller_driven(rig)  # the tick, let go, does not start it again


def test_a_second_subscriber_does_not_replace_the_interlock():
    rig = dealing_rig(cards=20)
    heard: list[bool] = []
    rig.app.board.lid_closed.subscribe(heard.append)
    shooting(rig)
    rig.sim.open_lid(full=False)
    assert not roller_driven(rig) and heard == [False]


def test_the_safe_order_is_written_once():
    from hal.base import SAFE_ORDER, SAFE_PINS
    from launcher.firmware import safestop

    assert SAFE_PINS[0] == "motor_sleep" and SAFE_ORDER[0][0] == "motor_enable"
    order = [t.names[0] for t in safestop.targets(
        replace(config.load().pins, rotator_in2=4, deadman=7))]
    assert order == list(SAFE_PINS)


# -- issue 31: a lost event, and clear ------------------------------------------------------


LOSABLE: dict[str, Callable[[SimRig], None]] = {
    "beam_clear": lambda rig: shooting(rig),
    "beam_blocked": lambda rig: shooting(rig),
    "lid_left_closed": lambda rig: rig.sim.open_lid(full=False),
    "lid_closed": lambda rig: (rig.sim.open_lid(full=False), rig.advance(0.1),
                               rig.sim.close_lid()),
    "lid_full": lambda rig: rig.sim.open_lid(),
    "lid_left_full": lambda rig: (rig.sim.open_lid(), rig.advance(1.0),
                                  rig.sim.open_lid(full=False)),
    "home_left": lambda rig: rig.sim.open_lid(),
    "home": lambda rig: rig.sim.open_lid(),
    "yellow_front": lambda rig: rig.sim.open_lid(),
}


@pytest.mark.parametrize("event", list(LOSABLE))
def test_an_event_lost_to_a_bug_leaves_no_stale_input_after_clear(event: str):
    """Issue 31: the machine lost beam_clear to a bug, kept "blocked" and faulted
    beam_blocked at every press after, ``clear`` or not."""
    rig = dealing_rig()
    machine = rig.app.machine
    real = machine.step
    lost: list[str] = []

    def step(e: m.Event, now: float) -> Any:
        if e.name == event and not lost:
            lost.append(e.name)
            raise RuntimeError(f"lost {e.name}")
        return real(e, now)

    machine.step = step  # type: ignore[method-assign]
    LOSABLE[event](rig)
    for _ in range(200):
        if lost:
            break
        rig.advance(0.02)
    assert lost == [event]
    rig.advance(1.0)
    assert rig.state == m.FAULT and machine.memory.fault == "internal"
    rig.settle()
    rig.sim.close_lid()
    rig.advance(0.5)
    if rig.state == m.FAULT:
        rig.app.clear_fault()
        rig.advance(0.3)
    if machine.turn_owed:
        rig.sim.open_lid()
        rig.settle()
        rig.sim.close_lid()
        rig.advance(0.3)
    for pin_reads, name in ((rig.sim.board.exit_beam.is_active, "beam_blocked"),
                            (rig.sim.board.lid_closed.is_active, "lid_closed"),
                            (rig.sim.board.home.is_active, "home")):
        assert getattr(machine.inputs, name) == pin_reads, name
    assert rig.state == m.READY, rig.state
    before = rig.sim.ejected_total
    rig.sim.press()
    rig.settle()
    assert rig.sim.ejected_total == before + 3, rig.app.events()[-10:]
