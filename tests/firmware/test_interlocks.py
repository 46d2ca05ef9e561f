"""The interlocks, the sleeping driver and the leases, on the simulated launcher.

Everything here runs on the manual reactor: the guard thread's work is ``expire``, called
as the guard would call it, so time never passes by itself.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from rigs import dealing_rig, press_until_shooting, settings

from launcher.core import config
from launcher.core import machine as m
from launcher.core.profiles import parse_profile
from launcher.firmware.actuators import CONTACT_SETTLE
from launcher.sim.rig import SimRig


def driver(rig: SimRig) -> tuple[float, float, float]:
    return (rig.sim.level("motor_in1"), rig.sim.level("motor_in2"),
            rig.sim.level("motor_sleep"))


def test_idle_the_driver_sleeps_with_every_input_low():
    rig = dealing_rig()
    assert driver(rig) == (0, 0, 0) and rig.sim.level("rotator") == 0


def test_after_a_shot_the_roller_brakes_then_coasts_and_the_driver_sleeps():
    rig = dealing_rig()
    brake = rig.settings.motor.brake_time
    press_until_shooting(rig)
    assert rig.sim.level("motor_sleep") == 1  # woken by the run
    while rig.state == m.SHOOTING:
        rig.advance(0.001)
    stopped = rig.now
    assert driver(rig) == (1, 1, 1)  # the brake holds
    rig.advance(brake - 0.002)
    assert driver(rig) == (1, 1, 1)
    rig.advance(0.002)  # the brake time, to the reactor turn
    assert driver(rig) == (0, 0, 0) and rig.now - stopped == pytest.approx(brake)
    assert rig.app.actuators.roller == "idle"


def test_without_the_brake_a_stop_coasts_and_sleeps_at_once():
    s = settings()
    rig = SimRig(replace(s, motor=replace(s.motor, brake=False)))
    rig.sim.load(range(10))
    rig.app.use_profile(parse_profile("deal 2"))
    press_until_shooting(rig)
    while rig.state == m.SHOOTING:
        rig.advance(0.001)
    assert driver(rig) == (0, 0, 0)


@pytest.mark.parametrize("when", ["ready", "shooting", "braking", "debug_run", "asleep",
                                  "fault"])
def test_the_lid_leaving_closed_drops_nsleep_on_the_edge_itself(when: str):
    """Inside the pin's own callback, before the reactor runs anything posted."""
    rig = dealing_rig()
    if when == "shooting":
        press_until_shooting(rig)
    elif when == "braking":
        press_until_shooting(rig)
        while rig.state == m.SHOOTING:
            rig.advance(0.001)
        assert driver(rig) == (1, 1, 1)
    elif when == "debug_run":
        assert rig.app.debug_run(300)
    elif when == "asleep":
        rig.app.sleep()
    elif when == "fault":
        press_until_shooting(rig)
        rig.sim.jam()
        rig.advance(3.0)
        assert rig.state == m.FAULT
    state_before = rig.state
    rig.sim.open_lid(full=False)
    assert driver(rig) == (0, 0, 0), when  # nothing was posted-and-run yet
    assert rig.state == state_before
    rig.advance(0.0)
    assert driver(rig) == (0, 0, 0)


def test_the_lid_leaving_closed_stops_the_roller_even_with_nothing_posted_ever_run():
    rig = dealing_rig()
    press_until_shooting(rig)
    rig.reactor.run_posted = lambda: None  # type: ignore[method-assign]  # a hung reactor
    rig.sim.open_lid(full=False)
    assert driver(rig) == (0, 0, 0)


def test_a_run_lapses_unless_the_reactor_renews_it():
    rig = dealing_rig(cards=20)
    act, lease = rig.app.actuators, rig.settings.motor.lease
    lapsed: list[str] = []
    act.on_fault = lapsed.append
    press_until_shooting(rig)
    # Renewed by the reactor's tick: it runs on as long as the reactor runs.
    rig.advance(3 * lease)
    assert rig.state == m.SHOOTING and rig.sim.level("motor_in1") > 0 and not lapsed
    # The reactor stops (nothing advances): the guard finds the lease lapsed.
    now = rig.now
    assert act.expire(now + lease * 0.9) < float("inf")
    assert rig.sim.level("motor_in1") > 0
    act.expire(now + lease)
    # Stopped at once, the driver asleep (no brake: a stop by a safety layer ends nothing
    # later), and reported.
    assert act.roller == "idle" and driver(rig) == (0, 0, 0) and act.lapses == 1
    assert len(lapsed) == 1 and lapsed[0].startswith("roller run lapsed")
    assert "the guard thread" in lapsed[0]


def test_one_lapse_found_by_two_threads_at_once_is_stopped_and_counted_once(monkeypatch):
    """The reactor, let go, finds the lease the guard is still stopping lapsed: the pins
    are written by both, the lapse counted and told once (it was twice, in the interlock
    bench on a loaded machine: the reactor's check ran between the guard's pin writes and
    its state)."""
    rig = dealing_rig(cards=20)
    act, lease = rig.app.actuators, rig.settings.motor.lease
    told: list[str] = []
    act.on_fault = told.append
    press_until_shooting(rig)
    due = rig.now + lease
    nsleep = act.board.motor_enable
    real_off = nsleep.off
    inside: list[float] = []

    def off() -> None:  # the guard's first pin write: the other thread's check runs here
        real_off()
        if not inside:
            inside.append(rig.sim.level("motor_in1"))
            act.expire(due)

    monkeypatch.setattr(nsleep, "off", off)
    act.expire(due)
    assert inside, "the second check never ran inside the first one's stop"
    assert act.roller == "idle" and driver(rig) == (0, 0, 0)
    assert act.lapses == 1 and len(told) == 1


def test_a_lapsed_run_is_an_internal_fault_once_the_reactor_runs_again():
    rig = dealing_rig(cards=20)
    press_until_shooting(rig)
    rig.app.actuators.expire(rig.now + rig.settings.motor.lease)
    rig.advance(0.0)
    assert rig.state == m.FAULT and rig.faults[-1]["code"] == "internal"
    assert "lapsed" in rig.faults[-1]["error"]
    rig.app.clear_fault()
    rig.advance(0.3)
    press_until_shooting(rig)  # it shoots again


def test_a_turn_lapses_too_and_a_rotator_turns_only_with_the_lid_fully_open():
    rig = dealing_rig()
    act = rig.app.actuators
    assert act.rotator("ahead") is False and rig.sim.level("rotator") == 0
    rig.sim.open_lid()
    rig.advance(0.2)
    assert rig.state == m.ROTATING and rig.sim.level("rotator") == 1
    assert rig.sim.level("motor_sleep") == 1
    act.expire(rig.now + rig.settings.motor.lease)
    assert rig.sim.level("rotator") == 0 and rig.sim.level("motor_sleep") == 0


def test_a_two_input_rotator_is_braked_when_the_lid_leaves_fully_open():
    rig = dealing_rig(rotator_in2=4)
    rig.sim.open_lid()
    rig.advance(0.3)
    assert rig.app.board.rotator.is_active
    rig.sim.open_lid(full=False)
    assert (rig.sim.level("rotator"), rig.sim.level("rotator_in2")) == (1, 1)  # braked
    rig.advance(rig.settings.motor.brake_time)
    assert (rig.sim.level("rotator"), rig.sim.level("rotator_in2")) == (0, 0)
    assert rig.sim.level("motor_sleep") == 0 and rig.state == m.LID_OPEN


@pytest.mark.parametrize("lid", ["closed", "ajar"])
def test_power_on_between_detents_never_turns_until_the_lid_is_fully_open(lid: str):
    s = settings()
    from hal.sim import SimLauncher  # the rig's own simulator, set between detents first
    from launcher.core.reactor import ManualReactor
    from launcher.firmware.app import build_app
    from launcher.firmware.state import StateStore
    from launcher.sim.rig import CueLog

    reactor = ManualReactor()
    sim = SimLauncher(reactor, s.pins)
    sim.angle = 70.0
    sim.stick("home", None)
    sim.stick("yellow_back", None)
    if lid == "ajar":
        sim.open_lid(full=False)
    events: list[tuple[str, dict]] = []
    app = build_app(s, reactor, __import__("random").Random(0), sim.board, cues=CueLog(),
                    store=StateStore(None))
    app.listeners.append(lambda kind, data: events.append((kind, data)))
    app.start()
    reactor.advance(5.0)
    assert sim.angle == 70.0 and sim.level("rotator") == 0
    assert ("turn_waiting", {"reason": m.TURN_WAITING}) in events
    if lid == "closed":
        sim.open_lid(full=False)
        reactor.advance(1.0)
        assert sim.angle == 70.0
    sim.open_lid()
    reactor.advance(3.0)
    assert sim.angle == 180.0 and ("homed", {"side": "wild"}) in events
    assert app.machine.state == m.LID_OPEN and app.machine.memory.side == "wild"


def test_a_two_contact_lid_that_agrees_is_a_lid_sensor_fault_with_the_motors_off():
    rig = dealing_rig(lid_closed_nc=4)
    press_until_shooting(rig)
    rig.sim.stick("lid_closed_nc", True)  # the NC wire pinched to ground: both say closed
    assert driver(rig) == (0, 0, 0)  # the NC edge stopped it on the pin thread
    rig.advance(rig.settings.timing.debounce + 0.001)
    assert rig.state == m.LATCHED and rig.faults[-1]["code"] == "lid_sensor"
    assert rig.app.actuators.run_motor(0.5) is False  # the interlock reads "not closed"
    rig.app.clear_fault()
    rig.advance(rig.settings.timing.debounce + 0.001)
    assert rig.state == m.LATCHED and rig.faults[-1]["code"] == "lid_sensor"  # still agrees
    rig.sim.stick("lid_closed_nc", None)
    rig.app.clear_fault()
    rig.advance(1.0)
    assert rig.state == m.LATCHED  # latched: the pair must read apart both ways again
    rig.sim.open_lid()
    rig.advance(CONTACT_SETTLE + 0.05)
    rig.settle()
    rig.sim.close_lid()
    rig.advance(CONTACT_SETTLE + 0.05)
    assert rig.state == m.FAULT  # proven gone: `clear` leaves it
    rig.app.clear_fault()
    rig.advance(0.1)
    assert rig.state == m.READY
    press_until_shooting(rig)


def test_a_two_contact_lid_off_its_wire_faults_and_its_transit_does_not():
    rig = dealing_rig(lid_closed_nc=4)
    for _ in range(5):  # a real lid's travel: both open for an instant, never a fault
        rig.sim.open_lid(full=False)
        rig.advance(0.2)
        rig.sim.close_lid()
        rig.advance(0.2)
    assert not rig.faults and rig.state == m.READY
    rig.sim.stick("lid_closed", False)  # the NO wire off: both read open
    rig.advance(rig.settings.timing.debounce / 2)
    assert rig.state == m.LID_OPEN
    rig.advance(rig.settings.timing.debounce)
    assert rig.state == m.LATCHED and rig.faults[-1]["code"] == "lid_sensor"


def second_press_shoots_rig() -> SimRig:
    """No mash guard, and a first press that is always dry, a second always a shot."""
    s = config.load()
    mild = replace(s.luck.mild, hazard=(0.0, 1.0))
    s = replace(s, luck=replace(s.luck, mild=mild), timing=replace(s.timing, mash_guard=0.0))
    rig = SimRig(s)
    rig.sim.load(range(40))
    return rig


@pytest.mark.parametrize("moment", ["mid_debounce", "mid_shot", "braking", "mid_turn"])
def test_after_stop_nothing_ever_drives_the_roller_or_the_rotator(moment: str):
    """As `reboot-safe` stops the firmware: once, a debounce re-check armed before the stop
    fired after it, started a shot, and ran the roller with the lid open."""
    rig = second_press_shoots_rig()
    window = rig.settings.timing.debounce
    if moment == "mid_debounce":
        rig.sim.hold_button()  # the dry press, accepted on its first edge
        rig.advance(window / 3)
        rig.sim.release()  # inside the lock-out: seen only by the re-check ...
        rig.advance(window * 2 / 3 + 0.001)
        rig.sim.hold_button()  # ... and pressed again inside the next lock-out
        assert rig.state == m.READY and rig.app.machine.memory.counters["presses"] == 1
    elif moment in ("mid_shot", "braking"):
        rig.sim.press()
        rig.advance(0.3)
        press_until_shooting(rig)
        while moment == "braking" and rig.state == m.SHOOTING:
            rig.advance(0.001)
    elif moment == "mid_turn":
        rig.sim.open_lid()
        rig.advance(0.3)
        assert rig.state == m.ROTATING
    rig.app.stop()
    assert driver(rig) == (0, 0, 0) and rig.sim.level("rotator") == 0
    stopped = len(rig.sim.motor_history)
    rig.advance(2 * window)  # the case that was found: a re-check fires after the stop,
    rig.sim.open_lid(full=False)  # and the lid is opened on a roller nobody stops
    rig.advance(1.0)
    for _ in range(3):  # and whatever happens next: presses, the lid, time
        rig.sim.close_lid()
        rig.sim.press()
        rig.advance(0.5)
        rig.sim.open_lid()
        rig.advance(2.0)
    # Nothing drives it: not its terminals, and not its pins (the copper alone would hide
    # a firmware that drove with the lid open).
    assert not any(s.running or s.commanded for s in rig.sim.motor_history[stopped:])
    assert driver(rig) == (0, 0, 0) and rig.sim.level("rotator") == 0
    assert rig.app.actuators.run_motor(1.0) is False


def test_the_dead_man_square_wave_runs_only_while_the_driver_is_awake():
    rig = dealing_rig(cards=2, deadman=10)
    pin = rig.sim.pin(10)
    # The start's test of nSLEEP: a burst of edges held it up, their end let it fall.
    rig.advance(0.2)
    assert rig.state == m.READY and rig.faults == []
    assert rig.sim.level("deadman") == 0 and not rig.app.board.sleep_sense.is_active
    press_until_shooting(rig)
    toggles_before = len(pin.states)
    rig.advance(0.1)
    assert len(pin.states) - toggles_before >= 9  # every 10 ms: 50 Hz
    rig.settle()
    rig.advance(rig.settings.motor.brake_time)
    assert driver(rig) == (0, 0, 0) and rig.sim.level("deadman") == 0
    idle_states = len(pin.states)
    rig.advance(5.0)
    assert len(pin.states) == idle_states  # no wake-ups while asleep


@pytest.mark.parametrize("state", ["ready", "asleep", "lid_open", "shooting"])
@pytest.mark.parametrize("way_out", ["clear", "lid_cycle"])
def test_after_an_internal_fault_the_unit_shoots_again_with_its_sound_and_led(
        state: str, way_out: str):
    """Once, leaving an internal fault left the driver off (the next press shot nothing and
    set the count to 0) and, from sleep, the sound muted."""
    rig = dealing_rig()
    if state == "asleep":
        rig.app.sleep()
        assert rig.cues.asleep
    elif state == "lid_open":
        rig.sim.open_lid(full=False)
        rig.advance(0.1)
    elif state == "shooting":
        press_until_shooting(rig)
    assert rig.state == state
    rig.app.internal_fault(RuntimeError("injected"), "a test")
    assert rig.state == m.FAULT and driver(rig) == (0, 0, 0)
    if way_out == "clear":
        rig.sim.close_lid()
        rig.advance(0.1)
        rig.app.clear_fault()
    else:
        rig.sim.open_lid(full=False)
        rig.advance(0.1)
        rig.sim.close_lid()
        rig.advance(0.1)
    assert rig.state == m.READY and not rig.cues.asleep
    assert rig.app.led.pattern == "ready" and rig.sim.level("led") == 1
    rig.advance(0.5)
    left = rig.app.machine.memory.inventory
    press_until_shooting(rig)
    rig.settle()
    assert rig.app.machine.memory.inventory == left - 3  # the cards really left
    assert rig.cues.played[-1] != "reload"


def test_a_bug_in_the_state_writer_is_an_internal_fault_with_the_motors_off(tmp_path):
    """The writer thread's failure reaches the reactor as a fault; the next good write
    still puts the newest state on disk."""
    from launcher.firmware.state import StateStore

    broken = [True]

    def write(path, text):
        if broken[0]:
            raise TypeError("a bug in the writer")
        path.write_text(text, encoding="utf-8")

    store = StateStore(tmp_path / "state.json", write)
    rig = SimRig(store=store)
    rig.sim.load(range(10))
    rig.app.load(10)
    rig.advance(0.5)  # the load's save, which fails
    assert store.flush(5.0)
    rig.advance(0.0)
    assert rig.state == m.FAULT and rig.faults[-1]["code"] == "internal"
    assert "state writer" in rig.faults[-1]["error"] and driver(rig) == (0, 0, 0)
    broken[0] = False
    rig.app.clear_fault()
    rig.advance(0.5)
    assert store.flush(5.0) and '"inventory": 10' in (tmp_path / "state.json").read_text()
    rig.close()
