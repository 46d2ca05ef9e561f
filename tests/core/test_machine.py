"""The pure state machine: events in, commands out, no board and no clock."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from launcher.core import config, cues
from launcher.core import machine as m
from launcher.core.machine import Command, Event


class FixedRandom(random.Random):
    """Every draw returns the next of the given values (to force shots and dry presses)."""

    def __init__(self, values: list[float]) -> None:
        super().__init__(0)
        self.values = list(values)

    def random(self) -> float:
        return self.values.pop(0)


_RNGS: dict[int, random.Random] = {}


def started(rng: random.Random | None = None, has_beam: bool = True, **timing) -> m.Machine:
    s = config.load()
    if timing:
        s = replace(s, timing=replace(s.timing, **timing))
    mach = m.Machine(m.MachineSettings.of(s), has_beam=has_beam)
    _RNGS[id(mach)] = rng or random.Random(1)
    mach.start(m.Inputs(), 0.0)
    return mach


def press(mach: m.Machine, now: float) -> list[Command]:
    """A press as the shell sends it: luck drawn only when the machine says it draws."""
    table = mach.luck_wanted(now)
    drawn = mach.memory.streak.draw(table, _RNGS[id(mach)]) if table is not None else 0
    return mach.handle(Event(m.PRESS, drawn), now)


def kinds(cmds: list[Command], kind: str) -> list:
    return [c.arg for c in cmds if c.kind == kind]


def emitted(cmds: list[Command]) -> list[str]:
    return kinds(cmds, m.EMIT)


def emits(cmds: list[Command]) -> dict[str, dict]:
    """Each event the commands emit, by kind, with its fields."""
    return {c.arg: c.fields() for c in cmds if c.kind == m.EMIT}


DRY = 0.99  # above every hazard below 1.0
SHOOT = 0.0  # below every hazard; the next value picks the shot size


def test_start_powers_up_and_plays_the_startup_chime():
    mach = m.Machine(m.MachineSettings.of(config.load()))
    out = mach.start(m.Inputs(), 0.0)
    assert out[:2] == [Command(m.POWER, True), Command(m.CUE, cues.STARTUP)]
    assert ("idle", 300.0) in kinds(out, m.TIMER)
    assert mach.state == m.READY


def test_dry_presses_escalate_then_bam_resets():
    mach = started(FixedRandom([DRY, DRY, DRY, SHOOT, 0.0]))
    played = []
    for i in range(4):
        played += kinds(press(mach, i * 1.0), m.CUE)
    assert played == ["mild_press_1", "mild_press_2", "mild_press_3", "mild_bam"]
    assert mach.state == m.SHOOTING
    assert mach.memory.dry_streak == 0


def test_the_hazard_curve_forces_a_shot_after_the_longest_dry_streak():
    mach = started(FixedRandom([DRY] * 4 + [0.999999, 0.5]))
    for i in range(4):
        press(mach, float(i))
    assert mach.memory.dry_streak == 4 == mach.settings.luck.mild.max_dry
    out = press(mach, 10.0)
    assert mach.state == m.SHOOTING and cues.bam("mild") in kinds(out, m.CUE)


def test_mash_guard_ignores_presses_too_close_together():
    mach = started(FixedRandom([DRY, DRY]))
    assert press(mach, 1.0)
    ignored = press(mach, 1.1)  # within 250 ms: no cue, no draw, no timer; said and counted
    assert ignored == [m.emit("press_ignored", reason="mashed")]
    assert mach.memory.counters == {"presses": 1, "dry": 1, "mashed": 1}
    assert kinds(press(mach, 1.3), m.CUE) == ["mild_press_2"]
    assert mach.memory.counters["mashed"] == 1


@pytest.mark.parametrize("state", [m.LID_OPEN, m.FAULT])
def test_a_mashed_press_is_said_in_every_state_that_guards(state):
    mach = started(FixedRandom([DRY]))
    assert press(mach, 1.0)
    mach.memory.fault = "jam" if state is m.FAULT else None
    mach.state = state
    assert press(mach, 1.1) == [m.emit("press_ignored", reason="mashed")]
    assert mach.state is state
    assert m.emit("press_ignored", reason="mashed") not in press(mach, 1.4)


def test_every_led_pattern_has_a_meaning_and_every_fault_a_code():
    assert m.led_meaning("ready") == "on: ready to shoot"
    assert m.led_fields("busy") == {"pattern": "fast_blink"}
    for code, n in m.FAULT_BLINKS.items():
        assert m.led_fields(n) == {"pattern": "blink_code", "blinks": n, "fault": code}
        latched = " (latched until proven gone)" if code in m.PROOFS else ""
        assert m.led_meaning(n) == f"{n} blinks, pause: fault {code}{latched}"
    assert len(set(m.FAULT_BLINKS.values())) == len(m.FAULT_BLINKS)  # one code, one fault
    table = m.led_table()
    assert table[:4] == [("on", "ready to shoot"), m.LED_SHOWS["busy"],
                         ("off", "asleep (a press wakes it)"), m.LED_SHOWS["pairing"]]
    assert table[4:] == [(f"{n} blinks, pause", "fault " + code + (
        " (latched until proven gone)" if code in m.PROOFS else ""))
                         for code, n in sorted(m.FAULT_BLINKS.items(), key=lambda kv: kv[1])]


def test_a_shot_runs_the_motor_until_the_beam_counted_the_cards():
    mach = started(FixedRandom([SHOOT, 0.4]))  # 0.4 of the weights -> 2 cards
    out = press(mach, 1.0)
    assert kinds(out, m.MOTOR) == [mach.settings.motor.speed]
    assert mach.memory.shot == m.Shot(target=2)
    t = 1.1
    for _ in range(2):
        mach.handle(Event(m.BEAM_BLOCKED), t)
        out = mach.handle(Event(m.BEAM_CLEAR), t + 0.03)
        t += 0.12
    assert kinds(out, m.MOTOR) == [0.0]
    assert mach.state == m.READY
    assert ("shot", (("side", "mild"), ("cards", 2), ("asked", 2))) in [
        (c.arg, c.data) for c in out if c.kind == m.EMIT]
    assert mach.memory.counters["cards_shot"] == 2


def test_step_hands_a_shot_its_motor_command_before_it_makes_the_rest():
    mach = started(FixedRandom([SHOOT, 0.4]))
    assert mach.luck_wanted(1.0) is not None
    drawn = mach.memory.streak.draw(mach.settings.luck.side("mild"), _RNGS[id(mach)])
    steps = iter(mach.step(Event(m.PRESS, drawn), 1.0))
    assert mach.state == m.SHOOTING  # the state is the new one on return
    assert next(steps) == Command(m.MOTOR, mach.settings.motor.speed)
    assert mach.memory.shot is None and "shots" not in mach.memory.counters  # not made yet
    rest = list(steps)
    assert mach.memory.shot == m.Shot(target=2) and mach.memory.counters["shots"] == 1
    assert m.MOTOR not in [c.kind for c in rest] and emitted(rest) == ["shoot"]


def test_a_press_skips_only_the_guards_luck_wanted_found_false_at_its_time_and_state():
    mach = started(FixedRandom([SHOOT, 0.0]))
    mach.handle(Event(m.LOAD, 3), 0.5)
    assert mach.luck_wanted(1.0) is not None  # the guards before the draw are false
    mach.handle(Event(m.LOAD, 0), 1.0)  # another event at the same time: they are not now
    out = mach.handle(Event(m.PRESS, 1), 1.0)
    assert kinds(out, m.CUE) == [cues.RELOAD] and kinds(out, m.MOTOR) == []  # _empty held


def test_no_card_within_the_timeout_means_empty_not_a_fault():
    mach = started(FixedRandom([SHOOT, 0.0]))
    mach.handle(Event(m.LOAD, 10), 0.5)
    press(mach, 1.0)
    out = mach.handle(Event(m.T_CARD), 2.5)
    assert kinds(out, m.MOTOR) == [0.0]
    assert cues.RELOAD in kinds(out, m.CUE)
    assert mach.state == m.READY and mach.memory.inventory == 0
    # Presses on an empty launcher only ask for a reload; the motor stays off.
    out = press(mach, 5.0)
    assert kinds(out, m.CUE) == [cues.RELOAD] and kinds(out, m.MOTOR) == []


def test_a_card_stuck_in_the_beam_is_a_jam_fault_with_motor_off_first():
    mach = started(FixedRandom([SHOOT, 0.0]))
    press(mach, 1.0)
    mach.handle(Event(m.BEAM_BLOCKED), 1.1)
    out = mach.handle(Event(m.T_JAM), 1.9)
    assert out[0] == Command(m.MOTOR, 0.0)
    assert kinds(out, m.CUE) == [cues.JAM]
    assert kinds(out, m.LED) == [m.FAULT_BLINKS["jam"]]
    assert mach.state == m.FAULT and mach.memory.fault == "jam"


def test_overrun_is_a_fault():
    mach = started(FixedRandom([SHOOT, 0.0]))
    press(mach, 1.0)
    mach.handle(Event(m.T_RUN), 9.0)
    assert mach.state == m.FAULT and mach.memory.fault == "overrun"


def test_lid_leaving_closed_mid_shot_stops_the_motor_at_once():
    mach = started(FixedRandom([SHOOT, 0.9]))
    press(mach, 1.0)
    out = mach.handle(Event(m.LID_LEFT_CLOSED), 1.05)
    assert out[0] == Command(m.MOTOR, 0.0)
    assert "shot_aborted" in emitted(out)
    assert mach.state == m.LID_OPEN
    # With the lid open a press never starts the motor.
    out = press(mach, 2.0)
    assert kinds(out, m.MOTOR) == [] and kinds(out, m.CUE) == [cues.LID_OPEN]


def flip(mach: m.Machine, t: float, lands_yellow_back: bool) -> list[Command]:
    out = mach.handle(Event(m.LID_LEFT_CLOSED), t)
    out += mach.handle(Event(m.LID_FULL), t + 0.3)
    out += mach.handle(Event(m.HOME_LEFT), t + 0.4)
    out += mach.handle(Event(m.YELLOW_BACK if lands_yellow_back else m.YELLOW_FRONT), t + 0.9)
    out += mach.handle(Event(m.HOME), t + 1.5)
    return out


def test_flip_rotates_to_the_next_detent_and_reads_the_side():
    mach = started()
    out = flip(mach, 1.0, lands_yellow_back=False)
    assert kinds(out, m.ROTATOR) == [m.Turn.AHEAD, m.Turn.OFF]
    assert cues.flip("wild") in kinds(out, m.CUE)
    assert mach.memory.side == "wild" and mach.state == m.LID_OPEN
    # Still fully open: no second turn until the lid has been closed.
    assert mach.handle(Event(m.LID_FULL), 3.0) == []
    mach.handle(Event(m.LID_CLOSED), 4.0)
    assert mach.state == m.READY
    out = flip(mach, 5.0, lands_yellow_back=True)
    assert mach.memory.side == "mild" and mach.memory.counters["flips"] == 2


def test_sensor_disagreement_after_a_turn_is_a_fault_not_a_guess():
    mach = started()
    out = flip(mach, 1.0, lands_yellow_back=True)  # the yellow half never moved
    assert mach.state == m.FAULT and mach.memory.fault == "side_mismatch"
    assert kinds(out, m.ROTATOR)[-1] is m.Turn.OFF


def test_rotation_timeout_is_a_fault_with_the_rotator_off():
    mach = started()
    mach.handle(Event(m.LID_LEFT_CLOSED), 1.0)
    mach.handle(Event(m.LID_FULL), 1.2)
    out = mach.handle(Event(m.T_ROTATION), 5.2)
    assert m.turn(m.Turn.OFF) in out
    assert mach.memory.fault == "rotation_timeout"


def test_a_fault_clears_on_a_lid_cycle_or_the_clear_command():
    mach = started(FixedRandom([SHOOT, 0.0]))
    press(mach, 1.0)
    mach.handle(Event(m.T_RUN), 9.0)
    assert mach.handle(Event(m.LID_CLOSED), 9.5) == []  # never opened: still faulted
    assert mach.state == m.FAULT
    mach.handle(Event(m.LID_LEFT_CLOSED), 10.0)
    mach.handle(Event(m.LID_CLOSED), 11.0)
    assert mach.state == m.READY and mach.memory.fault is None
    mach2 = started(FixedRandom([SHOOT, 0.0]))
    press(mach2, 1.0)
    mach2.handle(Event(m.T_RUN), 9.0)
    mach2.handle(Event(m.CLEAR), 9.1)
    assert mach2.state == m.READY


def test_sleep_after_idle_and_the_waking_press_is_consumed():
    rng = FixedRandom([])  # any luck draw would fail: the waking press must not draw
    mach = started(rng)
    out = mach.handle(Event(m.T_IDLE), 300.0)
    assert mach.state == m.ASLEEP
    assert Command(m.POWER, False) in out and kinds(out, m.CUE) == [cues.SLEEP]
    out = press(mach, 400.0)
    assert mach.state == m.READY
    assert kinds(out, m.CUE) == [cues.WAKE] and kinds(out, m.MOTOR) == []
    assert mach.memory.counters.get("presses", 0) == 0


def test_timed_fallback_without_a_beam():
    mach = started(FixedRandom([SHOOT, 0.5]), has_beam=False)  # 0.5 -> 2 cards
    out = press(mach, 1.0)
    assert ("timed", pytest.approx(1.0 + 2 * 0.35)) in kinds(out, m.TIMER)
    out = mach.handle(Event(m.T_TIMED), 1.7)
    assert kinds(out, m.MOTOR) == [0.0] and mach.memory.counters["cards_shot"] == 2


def test_a_blocked_beam_before_a_shot_is_a_sensor_fault():
    mach = started(FixedRandom([SHOOT, 0.0]))
    mach.handle(Event(m.BEAM_BLOCKED), 0.5)
    out = press(mach, 1.0)
    assert kinds(out, m.MOTOR) == [0.0] and mach.memory.fault == "beam_blocked"


def test_power_on_between_detents_waits_for_a_full_opening_then_homes_without_a_flip():
    mach = m.Machine(m.MachineSettings.of(config.load()))
    out = mach.start(m.Inputs(home=False, yellow_back=False), 0.0)
    # Never turn with the lid closed (or ajar): say why it waits, and refuse to shoot.
    assert mach.state == m.READY and kinds(out, m.ROTATOR) == []
    assert emits(out)["turn_waiting"]["reason"] == m.TURN_WAITING
    assert cues.LID_OPEN in kinds(out, m.CUE) and mach.turn_owed
    out = mach.handle(Event(m.PRESS, 3), 1.0)
    assert mach.state == m.READY and kinds(out, m.MOTOR) == []
    assert emits(out)["refused"]["reason"] == m.TURN_WAITING
    mach.handle(Event(m.LID_LEFT_CLOSED), 2.0)
    assert mach.state == m.LID_OPEN and mach.turn_owed
    out = mach.handle(Event(m.LID_FULL), 2.5)
    assert mach.state == m.ROTATING and m.turn(m.Turn.AHEAD) in out
    # Off home from the start: the shell sends no home_left, and the next home is arrival
    # (before, it waited for a home_left that never came, and faulted on the timeout).
    out = mach.handle(Event(m.HOME), 3.1)
    assert "homed" in emitted(out) and mach.memory.counters.get("flips", 0) == 0
    assert mach.state == m.LID_OPEN and not mach.turn_owed


def test_power_on_between_detents_with_the_lid_fully_open_homes_at_once():
    mach = m.Machine(m.MachineSettings.of(config.load()))
    out = mach.start(m.Inputs(lid_closed=False, lid_full=True, home=False), 0.0)
    assert mach.state == m.ROTATING and m.turn(m.Turn.AHEAD) in out


def test_the_lid_leaving_fully_open_pauses_a_turn_until_the_next_full_opening():
    mach = m.Machine(m.MachineSettings.of(config.load()))
    mach.start(m.Inputs(), 0.0)
    mach.handle(Event(m.LID_LEFT_CLOSED), 1.0)
    mach.handle(Event(m.LID_FULL), 1.5)
    mach.handle(Event(m.HOME_LEFT), 1.6)
    out = mach.handle(Event(m.LID_LEFT_FULL), 1.8)
    assert mach.state == m.LID_OPEN and m.turn(m.Turn.STOP) in out
    assert "turn_paused" in emitted(out) and mach.turn_owed
    assert mach.memory.expected_side == "wild"
    # Closing the lid does not forget it; a press is refused with the reason.
    mach.handle(Event(m.LID_CLOSED), 2.0)
    out = mach.handle(Event(m.PRESS, 2), 3.0)
    assert mach.state == m.READY and kinds(out, m.MOTOR) == []
    mach.handle(Event(m.LID_LEFT_CLOSED), 4.0)
    out = mach.handle(Event(m.LID_FULL), 4.5)
    assert mach.state == m.ROTATING and "turn_resumed" in emitted(out)
    # It had left home already: the next home is the arrival, read from the sensor.
    mach.handle(Event(m.YELLOW_FRONT), 4.8)
    out = mach.handle(Event(m.HOME), 5.0)
    assert emits(out)["flip"] == {"side": "wild"} and mach.memory.side == "wild"
    assert mach.memory.counters["flips"] == 1 and not mach.turn_owed


def test_a_stopped_turn_that_coasts_onto_its_detent_has_arrived():
    mach = m.Machine(m.MachineSettings.of(config.load()))
    mach.start(m.Inputs(), 0.0)
    mach.handle(Event(m.LID_LEFT_CLOSED), 1.0)
    mach.handle(Event(m.LID_FULL), 1.5)
    mach.handle(Event(m.HOME_LEFT), 1.6)
    mach.handle(Event(m.LID_LEFT_FULL), 2.0)
    mach.handle(Event(m.YELLOW_FRONT), 2.05)  # no side fault: the turn is only waiting
    out = mach.handle(Event(m.HOME), 2.1)
    assert mach.state == m.LID_OPEN and emits(out)["flip"] == {"side": "wild"}
    assert mach.memory.fault is None and not mach.turn_owed


def test_the_lid_sensor_event_is_a_latched_fault_from_every_state_and_once():
    for state in m.STATES:
        mach = m.Machine(m.MachineSettings.of(config.load()))
        mach.start(m.Inputs(), 0.0)
        mach.state = state
        out = mach.handle(Event(m.LID_SENSOR), 1.0)
        if state is m.FAULT:
            assert out[0].arg == 0.0 and emits(out)["fault"]["code"] == "lid_sensor"
        assert mach.state == m.LATCHED and mach.memory.fault == "lid_sensor"
        assert mach.memory.latched == ["lid_sensor"]
        assert kinds(out, m.LED) == [m.FAULT_BLINKS["lid_sensor"]]
        assert mach.handle(Event(m.LID_SENSOR), 1.5) == []  # not again while it lasts


def test_inventory_counts_down_and_an_empty_launcher_asks_for_a_reload():
    mach = started(FixedRandom([SHOOT, 0.99]))  # 5 cards asked, only 2 loaded
    mach.handle(Event(m.LOAD, 2), 0.0)
    press(mach, 1.0)
    assert mach.memory.shot == m.Shot(target=2)
    mach.handle(Event(m.BEAM_BLOCKED), 1.1)
    mach.handle(Event(m.BEAM_CLEAR), 1.13)
    mach.handle(Event(m.BEAM_BLOCKED), 1.2)
    out = mach.handle(Event(m.BEAM_CLEAR), 1.23)
    assert mach.memory.inventory == 0 and cues.RELOAD in kinds(out, m.CUE)
    # Opening the lid to reload makes the count unknown until the next `load`.
    mach.handle(Event(m.LID_LEFT_CLOSED), 2.0)
    assert mach.memory.inventory is None


def test_mermaid_lists_every_state_and_transition():
    text = m.mermaid()
    for state in m.STATES:
        assert f" {state} --> " in text
    assert "ready --> shooting: press [lucky]" in text
    assert "shooting --> lid_open: lid_left_closed" in text


# -- with pins.rotator_in2: brake at home, read again, creep back if it ran past -----------


def braking_machine(creep_speed: float = 0.3) -> m.Machine:
    s = config.load()
    s = replace(s, pins=replace(s.pins, rotator_in2=4),
                rotator=replace(s.rotator, creep_speed=creep_speed))
    mach = m.Machine(m.MachineSettings.of(s))
    mach.start(m.Inputs(), 0.0)
    return mach


def start_flip(mach: m.Machine, now: float = 1.0) -> None:
    mach.handle(Event(m.LID_LEFT_CLOSED), now)
    mach.handle(Event(m.LID_FULL), now)
    mach.handle(Event(m.HOME_LEFT), now + 0.05)
    mach.handle(Event(m.YELLOW_FRONT), now + 0.3)


def timer_at(cmds: list[Command], name: str) -> float | None:
    return next(at for kind, at in kinds(cmds, m.TIMER) if kind == name)


def test_home_with_a_brake_brakes_and_reads_the_sensor_again_before_arriving():
    mach = braking_machine()
    start_flip(mach)
    out = mach.handle(Event(m.HOME), 2.0)
    assert kinds(out, m.ROTATOR) == [m.Turn.BRAKE] and mach.state == m.BRAKING
    assert timer_at(out, "settle") == pytest.approx(2.0 + 0.15)
    assert "flip" not in emitted(out)
    out = mach.handle(Event(m.T_SETTLE), 2.15)  # still on the magnet: done, let go
    assert kinds(out, m.ROTATOR) == [m.Turn.OFF] and "flip" in emitted(out)
    assert mach.state == m.LID_OPEN and mach.memory.side == "wild"
    assert mach.memory.counters.get("creeps", 0) == 0


def test_stopped_past_the_magnet_it_creeps_back_slowly_then_brakes_again():
    mach = braking_machine(creep_speed=0.3)
    start_flip(mach)
    mach.handle(Event(m.HOME), 2.0)
    mach.handle(Event(m.HOME_LEFT), 2.05)  # the brake held it past the magnet
    mach.handle(Event(m.HOME), 2.06)  # a late report while braking changes nothing
    mach.handle(Event(m.HOME_LEFT), 2.07)
    assert mach.state == m.BRAKING
    out = mach.handle(Event(m.T_SETTLE), 2.15)
    assert out == [m.turn(m.Turn.BACK, 0.3), m.emit("creep", to=m.Turn.BACK)]
    assert mach.state == m.ROTATING
    out = mach.handle(Event(m.HOME), 2.3)
    assert kinds(out, m.ROTATOR) == [m.Turn.BRAKE] and mach.state == m.BRAKING
    mach.handle(Event(m.HOME_LEFT), 2.35)  # past it again, the other way
    out = mach.handle(Event(m.T_SETTLE), 2.45)
    assert kinds(out, m.ROTATOR) == [m.Turn.AHEAD]  # to and fro
    mach.handle(Event(m.HOME), 2.5)
    out = mach.handle(Event(m.T_SETTLE), 2.65)
    assert kinds(out, m.ROTATOR) == [m.Turn.OFF] and "flip" in emitted(out)
    assert mach.memory.counters["creeps"] == 2 and mach.memory.counters["flips"] == 1


def test_creeping_that_never_finds_home_is_a_rotation_timeout_with_the_rotator_off():
    mach = braking_machine()
    start_flip(mach, now=1.0)
    mach.handle(Event(m.HOME), 2.0)
    mach.handle(Event(m.HOME_LEFT), 2.05)
    mach.handle(Event(m.T_SETTLE), 2.15)
    out = mach.handle(Event(m.T_ROTATION), 5.0)
    assert mach.memory.fault == "rotation_timeout"
    assert kinds(out, m.ROTATOR) == [m.Turn.OFF]
    assert ("settle", None) in kinds(out, m.TIMER)


def test_without_creep_it_arrives_braked_past_the_magnet_and_says_so():
    mach = braking_machine(creep_speed=0.0)
    start_flip(mach)
    mach.handle(Event(m.HOME), 2.0)
    mach.handle(Event(m.HOME_LEFT), 2.05)
    out = mach.handle(Event(m.T_SETTLE), 2.15)
    assert kinds(out, m.ROTATOR) == [m.Turn.OFF]
    assert "flip" in emitted(out) and "overshoot" in emitted(out)
    assert mach.memory.counters["overshoots"] == 1 and mach.state == m.LID_OPEN


def test_the_lid_closing_while_the_brake_holds_arrives_ready():
    mach = braking_machine()
    start_flip(mach)
    mach.handle(Event(m.HOME), 2.0)
    mach.handle(Event(m.LID_LEFT_FULL), 2.05)
    mach.handle(Event(m.LID_CLOSED), 2.1)
    mach.handle(Event(m.T_SETTLE), 2.15)
    assert mach.state == m.READY


def test_a_turn_that_starts_off_home_arrives_at_the_first_detent():
    """A cartridge that stopped past its magnet (no brake) starts the next flip off home:
    no home_left comes, and the first home is the arrival, not a detent to pass."""
    mach = started()
    mach.handle(Event(m.LID_LEFT_CLOSED), 1.0)
    mach.handle(Event(m.LID_FULL), 1.0)
    mach.handle(Event(m.HOME_LEFT), 1.05)
    mach.handle(Event(m.YELLOW_FRONT), 1.3)
    mach.handle(Event(m.HOME), 1.6)
    mach.handle(Event(m.HOME_LEFT), 1.65)  # it coasted past the magnet
    mach.handle(Event(m.LID_CLOSED), 2.0)
    mach.handle(Event(m.LID_LEFT_CLOSED), 3.0)
    mach.handle(Event(m.LID_FULL), 3.0)
    mach.handle(Event(m.YELLOW_BACK), 3.3)
    out = mach.handle(Event(m.HOME), 3.6)
    assert "flip" in emitted(out) and mach.memory.side == "mild"
    assert mach.memory.fault is None


@pytest.mark.parametrize("inventory", [None, 0, 5])
def test_luck_wanted_only_reads_the_machine(inventory):
    """Asking what a press would draw changes nothing: no state, no memory, nothing kept for
    the step that follows (the press puts its guards again)."""
    mach = started()
    mach.memory.inventory = inventory
    before = repr(vars(mach))
    for now in (0.0, 0.05, 10.0):
        wanted = mach.luck_wanted(now)
        assert (wanted is None) == (inventory == 0)  # an empty launcher draws nothing
        assert repr(vars(mach)) == before


def test_a_debug_run_ended_with_a_card_in_the_slot_drains_until_it_leaves():
    """``debug_drain`` is a state of its own: the motor is off, the run's end waits for the
    card in the slot, and a press is still refused until it has left."""
    mach = started()
    mach.memory.inventory = 10
    mach.handle(Event(m.DEBUG_RUN_NOW, 300), 1.0)
    assert mach.state == m.DEBUG_RUN
    mach.handle(Event(m.BEAM_BLOCKED), 1.2)  # the roller pushed a card into the beam
    out = mach.handle(Event(m.T_DEBUG), 1.3)
    assert mach.state == m.DEBUG_DRAIN
    assert kinds(out, m.MOTOR) == [0.0] and ("debug", None) in kinds(out, m.TIMER)
    assert emitted(press(mach, 1.4)) == ["refused"] and mach.state == m.DEBUG_DRAIN
    out = mach.handle(Event(m.BEAM_CLEAR), 1.5)
    assert mach.state == m.READY
    assert emitted(out) == ["card_out", "debug_run_end"] and mach.memory.inventory == 9
    assert emits(out)["debug_run_end"]["end"] == "done"


def test_a_card_that_never_leaves_the_slot_after_a_debug_run_is_a_jam():
    mach = started()
    mach.handle(Event(m.DEBUG_RUN_NOW, 300), 1.0)
    mach.handle(Event(m.BEAM_BLOCKED), 1.2)
    out = mach.handle(Event(m.DEBUG_STOP), 1.25)
    assert mach.state == m.DEBUG_DRAIN
    jam_at = next(t for name, t in kinds(out, m.TIMER) if name == "jam")
    mach.handle(Event(m.T_JAM), jam_at)
    assert mach.state == m.FAULT and mach.memory.fault == "jam"


def test_a_settle_timer_outside_the_brake_moves_nothing():
    """Only ``braking`` reads the settle timer: one that fires in a turn (a stale one from a
    brake the lid ended) neither creeps nor arrives."""
    mach = braking_machine()
    start_flip(mach)
    assert mach.state == m.ROTATING
    mach.inputs.home = False  # turning, off the magnet
    assert mach.handle(Event(m.T_SETTLE), 1.5) == [] and mach.state == m.ROTATING


def test_no_action_sends_the_led_and_each_state_entered_sends_its_own_once():
    from launcher.core.machine import actions

    assert not hasattr(actions, "LED")  # the LED is the state's, not a row's
    mach = started(FixedRandom([SHOOT, 0.0]))
    mach.handle(Event(m.LOAD, 10), 0.5)
    out = press(mach, 1.0)
    assert mach.state == m.SHOOTING and kinds(out, m.LED) == ["busy"]
    assert out[-1] == Command(m.LED, "busy")  # entering the state, after the row's commands
    assert kinds(mach.handle(Event(m.BEAM_BLOCKED), 1.1), m.LED) == []  # same state
    out = mach.handle(Event(m.T_JAM), 1.5)
    assert kinds(out, m.LED) == [m.FAULT_BLINKS["jam"]] and mach.led == m.FAULT_BLINKS["jam"]


def test_a_bug_is_the_internal_fault_from_every_state_a_row_of_the_table():
    for state in m.STATES:
        assert [t.target for t in m.rows(state, m.INTERNAL)] == [m.FAULT]
        mach = m.Machine(m.MachineSettings.of(config.load()))
        mach.start(m.Inputs(), 0.0)
        mach.state = state
        out = mach.handle(Event(m.INTERNAL, detail="bug", inputs=m.Inputs()), 1.0)
        assert out[0] == Command(m.MOTOR, 0.0) and emits(out)["fault"]["error"] == "bug"
        assert mach.state == m.FAULT and mach.memory.fault == "internal"
        assert kinds(out, m.LED) in ([m.FAULT_BLINKS["internal"]], [])


def test_a_fault_entered_with_the_lid_open_is_left_by_closing_it():
    """``fault_opened``, the part of ``fault`` the lid has opened in (once a flag): entered
    with the lid open, or when it opens; a bug on top picks it again from the lid."""
    mach = started(FixedRandom([SHOOT, 0.0]))
    mach.handle(Event(m.LOAD, 10), 0.5)
    press(mach, 1.0)
    mach.handle(Event(m.T_JAM), 1.5)
    assert mach.at is m.FAULT
    mach.handle(Event(m.LID_CLOSED), 2.0)  # closed, never opened: still the fault
    assert mach.at is m.FAULT and mach.memory.fault == "jam"
    # A bug while the lid is open (its edge lost): the fault entered afresh, the lid open.
    mach.handle(Event(m.INTERNAL, detail="bug", inputs=m.Inputs(lid_closed=False)), 2.5)
    assert mach.at is m.FAULT_OPENED and mach.state is m.FAULT
    assert mach.memory.fault == "internal"
    mach.handle(Event(m.INTERNAL, detail="bug", inputs=m.Inputs()), 3.0)  # the lid shut
    assert mach.at is m.FAULT
    mach.handle(Event(m.LID_LEFT_CLOSED), 4.0)
    assert mach.at is m.FAULT_OPENED
    out = mach.handle(Event(m.LID_CLOSED), 4.5)
    assert mach.state == m.READY and emits(out)["fault_cleared"]["by"] == "lid_closed"
    assert kinds(out, m.LED) == ["ready"]


def test_a_turn_is_leaving_its_detent_until_the_sensor_says_it_left():
    """``leaving``, the part of ``rotating`` still on its detent (once a flag): a home edge
    there is no arrival; paused there, the turn owed is one from the detent."""
    mach = m.Machine(m.MachineSettings.of(config.load()))
    mach.start(m.Inputs(), 0.0)
    mach.handle(Event(m.LID_LEFT_CLOSED), 1.0)
    mach.handle(Event(m.LID_FULL), 1.5)
    assert mach.at is m.LEAVING and mach.state is m.ROTATING
    assert mach.handle(Event(m.HOME), 1.55) == [] and mach.at is m.LEAVING
    mach.handle(Event(m.LID_LEFT_FULL), 1.6)
    assert mach.state is m.LID_OPEN and mach.memory.owed is m.Owed.ON_DETENT
    assert mach.handle(Event(m.HOME), 1.7) == []  # still no arrival
    mach.handle(Event(m.LID_FULL), 2.0)
    assert mach.at is m.LEAVING and not mach.turn_owed
    mach.handle(Event(m.HOME_LEFT), 2.1)
    assert mach.at is m.ROTATING
    out = mach.handle(Event(m.HOME, inputs=m.Inputs(lid_closed=False, lid_full=True,
                                                    yellow_back=False)), 2.6)
    assert emits(out)["flip"] == {"side": "wild"} and mach.state is m.LID_OPEN


def test_rows_replaced_puts_the_table_back():
    def broken(mach, e, now):
        raise RuntimeError("bug")

    row = m.Transition(m.READY, m.PROFILE, m.READY, broken)
    table = list(m.rows(m.READY, m.PROFILE))
    with m.rows_replaced(row):
        assert list(m.rows(m.READY, m.PROFILE)) == [row]
    assert list(m.rows(m.READY, m.PROFILE)) == table
