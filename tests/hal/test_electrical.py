"""The electrical model (hal/electrical.py): the motors' terminals follow the copper, and each
kind of fault changes them (or what the Pi reads) as that fault would."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hal.circuit import (
    BOOT_LOW,
    ROLES,
    Build,
    circuit,
    default_pins,
    wired_pins,
)
from hal.circuit_docs import boot_levels_table, readback_table
from hal.circuit_faults import (
    CommonCause,
    NetOpen,
    NetShort,
    PartFailure,
    check_fault,
    single_faults,
)
from hal.electrical import Model, World

PINS = default_pins()
WIRED = wired_pins()  # the dead-man fitted, BIN2 on GPIO 9
MOSFET = Build(rotator="mosfet")
SHOT = {PINS.motor_sleep: 1.0, PINS.motor_in1: 0.85}
BRAKE = {PINS.motor_sleep: 1.0, PINS.motor_in1: 1.0, PINS.motor_in2: 1.0}
TURN = {PINS.motor_sleep: 1.0, PINS.rotator: 1.0}
SHUT, AJAR, FULL = World(), World(lid="ajar"), World(lid="full")


def model(fault=None, pins=PINS, build=None) -> Model:
    return Model(circuit(pins, build), fault)


def roller(m: Model, levels=SHOT, world=SHUT) -> float:
    return m.solve(levels, world).roller.speed


def rotator(m: Model, levels=TURN, world=FULL) -> float:
    return m.solve(levels, world).rotator.speed


def reads(m: Model, key: str, levels=None, world=SHUT) -> int:
    return m.solve(levels or {}, world).reads[getattr(m.circuit.pins, key)]


# --- the sound circuit ----------------------------------------------------------------------

def test_idle_the_driver_sleeps_and_both_motors_coast():
    s = model().solve({}, SHUT)
    assert not s.awake and s.roller.coast == 1 and s.rotator.coast == 1
    assert s.undefined == frozenset()
    assert {k: s.reads[getattr(PINS, k)] for k in ("button", "lid_closed", "lid_closed_nc",
                                                   "lid_open", "power_contact_sense",
                                                   "sleep_sense", "home", "yellow_back",
                                                   "exit_beam")} == {
        "button": 1, "lid_closed": 0, "lid_closed_nc": 1, "lid_open": 1,
        "power_contact_sense": 0, "sleep_sense": 0, "home": 0, "yellow_back": 0,
        "exit_beam": 1}


def test_a_shot_drives_the_roller_at_its_duty_and_a_brake_shorts_it():
    m = model()
    assert roller(m) == 0.85 and m.solve(SHOT).awake
    assert reads(m, "sleep_sense", SHOT) == 1
    s = m.solve(BRAKE)
    assert s.roller.brake == 1 and s.roller.speed == 0


def test_asleep_the_outputs_are_open_whatever_the_inputs_say():
    m = model()
    for levels in ({PINS.motor_in1: 1.0}, {PINS.motor_in1: 1.0, PINS.motor_in2: 1.0},
                   {PINS.rotator: 1.0}):
        s = m.solve(levels, FULL)
        assert not s.awake and s.roller.coast == 1 and s.rotator.coast == 1


def test_the_lid_power_contact_breaks_the_rollers_lead():
    m = model()
    assert roller(m, world=SHUT) == 0.85
    for lid in ("lifting", "ajar", "full"):
        assert roller(m, world=World(lid=lid)) == 0, lid
    assert reads(m, "power_contact_sense", world=AJAR) == 1


@pytest.mark.parametrize("build", [None, MOSFET], ids=["bridge", "mosfet"])
def test_the_full_open_contact_breaks_the_rotators_lead(build):
    m = model(build=build)
    assert rotator(m, world=FULL) == 1.0
    for lid in ("closed", "lifting", "ajar"):
        assert rotator(m, world=World(lid=lid)) == 0, lid


def test_the_rotators_brake_and_creep_on_both_inputs_of_its_channel():
    m = model(pins=WIRED, build=None)
    p = WIRED
    edge = replace(FULL, edges=True)
    ahead = m.solve({p.motor_sleep: 1, p.rotator: 1, p.rotator_in2: 0.3}, edge).rotator
    assert ahead.speed == 0.7 and ahead.brake == pytest.approx(0.3)
    back = m.solve({p.motor_sleep: 1, p.rotator: 0, p.rotator_in2: 0.3}, edge).rotator
    assert back.speed == -0.3
    assert m.solve({p.motor_sleep: 1, p.rotator: 1, p.rotator_in2: 1}, edge).rotator.brake == 1


def test_at_power_on_every_must_stay_low_input_reads_low():
    """Every GPIO an input with its power-on pull, at both ends of the Pi's pull range; and
    with nSLEEP's pull-down cracked too (the Pi's own pulls must not lift it)."""
    for pins in (PINS, WIRED):
        for fault in (None, PartFailure("R3", "open")):
            m = model(fault, pins)
            for pull in (33e3, 73e3):
                s = m.solve({}, World(pi="boot", pull_ohms=pull))
                assert not s.awake and s.roller.coast == 1 and s.rotator.coast == 1
                assert s.undefined == frozenset(), s.undefined
                for key in BOOT_LOW:
                    if getattr(pins, key) is not None:
                        assert s.net(key) is not None and s.net(key) < 0.5, (key, pull)


def test_the_old_nsleep_pin_woke_the_driver_at_boot_with_its_pull_down_cracked():
    """nSLEEP on GPIO 6 (pulled up at power-on) held asleep only by its pull-down: the reason
    the circuit's rule refuses it."""
    old = replace(PINS, motor_sleep=6, home=25, sleep_sense=None)  # the wiring before
    assert model(PartFailure("R3", "open"), old).solve({}, World(pi="boot")).awake
    assert not model(PartFailure("R3", "open")).solve({}, World(pi="boot")).awake


def test_the_tables_of_the_docs_say_what_the_model_says():
    boot = boot_levels_table()
    assert boot.count("| low |") == len(BOOT_LOW) + 1  # CLR and Q both, for motor_sleep
    assert boot.count("**not low**") == 1  # the old wiring's row
    back = readback_table()
    assert back.count("| low |") == 6 and back.count("| high |") == 3


# --- one fault of each kind ------------------------------------------------------------------

def test_a_net_open_leaves_the_far_end_to_its_pull_down():
    # IN1's wire broken between the Pi and the driver: the 10 kΩ at AIN1 holds it low.
    m = model(NetOpen("motor_in1", 1))
    assert roller(m) == 0
    # nSLEEP's wire broken: the driver sleeps, and the read-back says so while the Pi drives.
    m = model(NetOpen("motor_sleep", 1))
    assert not m.solve(SHOT).awake and roller(m) == 0
    assert reads(m, "sleep_sense", SHOT) == 0


def test_a_rail_open_at_one_part_leaves_that_part_unpowered():
    at = circuit(PINS).nets["VM"].terminals.index("U1.VM")
    assert roller(model(NetOpen("VM", at))) == 0
    hall = circuit(PINS).nets["3V3"].terminals.index("H1.VDD")
    assert reads(model(NetOpen("3V3", hall)), "home") == 1  # unpowered: the pull-up wins


@pytest.mark.parametrize(("net", "rail", "levels", "world", "speed"), [
    ("motor_in1", "3V3", {PINS.motor_sleep: 1.0}, SHUT, 1.0),  # forward at full
    ("motor_sleep", "GND", SHOT, SHUT, 0.0),  # asleep
    ("motor_sleep", "3V3", {PINS.motor_in1: 1.0}, SHUT, 1.0),  # awake whatever the Pi says
    ("roller_out1", "GND", SHOT, SHUT, 0.0),  # AOUT1 held low: no drive
    # The lead past the contact shorted to +: AOUT2 returns it while the driver drives
    # (IN1's PWM on-time), and nothing does while it sleeps.
    ("roller_m1", "VM", SHOT, AJAR, 0.85),
    ("roller_m1", "VM", {}, AJAR, 0.0),
])
def test_a_net_shorted_to_a_rail_follows_the_rail(net, rail, levels, world, speed):
    assert roller(model(NetShort(net, rail)), levels, world) == speed


def test_in2_shorted_to_the_motor_supply_brakes_and_reverses_never_forward():
    # IN1's PWM on-time: both high, a brake; its off-time: IN2 alone, reverse.
    s = model(NetShort("motor_in2", "VM")).solve(SHOT)
    assert s.roller.brake == pytest.approx(0.85) and s.roller.speed < 0


def test_only_the_motor_harness_can_be_shorted_to_the_motor_supply():
    unit = circuit(PINS)
    vm = {f.net for f in single_faults(unit) if isinstance(f, NetShort) and f.rail == "VM"}
    assert {"roller_out1", "roller_m1", "roller_out2", "motor_in1", "motor_sleep"} <= vm
    assert not vm & {"button", "lid_closed", "home", "led", "3V3", "GND"}
    with pytest.raises(ValueError, match="rail '5V'"):
        check_fault(unit, NetShort("button", "5V"))


@pytest.mark.parametrize("mode", ["welded", "leads_pinched", "plunger_stuck"])
def test_a_power_contact_held_closed_lets_the_roller_run_with_the_lid_open(mode):
    m = model(PartFailure("S3", mode))
    assert roller(m, world=AJAR) == 0.85
    assert reads(m, "power_contact_sense", world=AJAR) == 0  # the read-back says closed


def test_a_power_contact_that_never_closes_never_runs_the_roller():
    m = model(PartFailure("S3", "open"))
    assert roller(m, world=SHUT) == 0
    assert reads(m, "power_contact_sense", world=SHUT) == 1


def test_the_rotators_contact_welded_turns_it_only_if_the_driver_drives_it():
    m = model(PartFailure("S4", "welded"))
    assert rotator(m, world=SHUT) == 1.0
    assert rotator(m, levels={}, world=SHUT) == 0  # asleep: nothing


@pytest.mark.parametrize(("mode", "shut", "ajar"), [
    ("no_welded", (0, 1), (0, 1)),  # NO stuck made, NC never: always "shut"
    ("plunger_stuck_pressed", (0, 1), (0, 1)),
    ("nc_welded", (1, 0), (1, 0)),  # always "not shut"
    ("plunger_stuck_released", (1, 0), (1, 0)),
    ("no_open", (1, 1), (1, 0)),  # shut reads both open: lid_sensor
    ("nc_open", (0, 1), (1, 1)),  # ajar reads both open: lid_sensor
])
def test_the_sensing_spdt_reads_as_its_contacts_fail(mode, shut, ajar):
    """(lid_closed, lid_closed_nc) raw levels, and with a sound power contact the read-back
    disagrees with a pair stuck at "shut" or "not shut"."""
    m = model(PartFailure("S1", mode))
    assert (reads(m, "lid_closed"), reads(m, "lid_closed_nc")) == shut
    assert (reads(m, "lid_closed", world=AJAR), reads(m, "lid_closed_nc", world=AJAR)) == ajar
    assert reads(m, "power_contact_sense", world=AJAR) == 1  # the copper still opened


CLR_LOW, CLR_HIGH = {WIRED.motor_sleep: 0.0}, {WIRED.motor_sleep: 1.0}


@pytest.mark.parametrize(("mode", "levels", "world", "awake"), [
    (None, CLR_HIGH, World(edges=True), True),
    (None, CLR_HIGH, World(), False),  # no edges within its pulse: nSLEEP falls
    (None, CLR_LOW, World(edges=True), False),  # CLR low wins
    ("q_stuck_high", CLR_LOW, World(), True),
    ("q_stuck_low", CLR_HIGH, World(edges=True), False),
    ("rext_open", CLR_HIGH, World(latched=True), True),  # one edge holds it on for ever
    ("b_on_a_toggling_line", CLR_HIGH, World(), True),  # edges whatever the loop does
])
def test_the_one_shot_and_its_failures(mode, levels, world, awake):
    m = model(None if mode is None else PartFailure("U2", mode), WIRED)
    s = m.solve(levels, world)
    assert s.awake == awake
    assert s.reads[WIRED.sleep_sense] == int(awake)  # the read-back shows it either way


def test_a_one_shot_with_its_timing_resistor_open_behaves_as_rext_open():
    m = model(PartFailure("R16", "open"), WIRED)
    assert m.solve(CLR_HIGH, World(latched=True)).awake
    assert not model(pins=WIRED).solve(CLR_HIGH, World(latched=True)).awake


def test_the_read_back_mosfet_failing():
    assert reads(model(PartFailure("Q2", "shorted")), "power_contact_sense", world=AJAR) == 0
    assert reads(model(PartFailure("Q2", "open")), "power_contact_sense", world=SHUT) == 1


def test_the_rotators_mosfet_shorted_turns_it_only_at_full_open():
    m = model(PartFailure("Q1", "shorted"), build=MOSFET)
    assert rotator(m, levels={}, world=FULL) == 1.0  # no gate, no driver: copper only
    assert rotator(m, levels={}, world=SHUT) == 0
    assert rotator(model(PartFailure("Q1", "open"), build=MOSFET), world=FULL) == 0


@pytest.mark.parametrize(("mode", "levels", "speed"), [
    ("aout1_stuck_high", BRAKE, 1.0),  # the stop's brake turns into forward
    ("aout1_stuck_high", {}, 0.0),  # asleep, AOUT2 open: no return
    ("aout1_stuck_open", SHOT, 0.0),
    ("aout2_stuck_high", SHOT, 0.0),  # both high: shorted
    ("aout2_stuck_low", {PINS.motor_sleep: 1.0}, 0.0),  # coast: AOUT1 open
])
def test_a_driver_output_stuck(mode, levels, speed):
    assert roller(model(PartFailure("U1", mode)), levels) == speed


def test_a_breakout_pull_up_on_nsleep_wakes_the_driver_while_the_pi_boots():
    s = model(PartFailure("U1", "nsleep_pulled_up")).solve({}, World(pi="boot"))
    assert s.awake and any("nSLEEP" in note for note in s.undefined)
    # While the firmware drives nSLEEP low, its pin wins over the breakout's pull-up.
    assert not model(PartFailure("U1", "nsleep_pulled_up")).solve({}).awake


@pytest.mark.parametrize(("fault", "key", "world", "level"), [
    (PartFailure("R11", "open"), "power_contact_sense", SHUT, 1),  # no bias: reads open
    (PartFailure("R6", "open"), "lid_closed", AJAR, 1),  # the Pi's own pull-up is left
    (PartFailure("H1", "output_stuck_low"), "home", replace(SHUT, home=False), 0),
    (PartFailure("H1", "output_stuck_high"), "home", SHUT, 1),
    (PartFailure("B1", "always_blocked"), "exit_beam", SHUT, 0),
    (PartFailure("B1", "never_blocked"), "exit_beam", replace(SHUT, beam_blocked=True), 1),
    (PartFailure("SW1", "welded"), "button", SHUT, 0),
    (PartFailure("SW1", "open"), "button", replace(SHUT, button=True), 1),
])
def test_an_input_part_failing_changes_what_the_pi_reads(fault, key, world, level):
    assert reads(model(fault), key, world=world) == level


@pytest.mark.parametrize("fault", [
    PartFailure("C1", "shorted"), PartFailure("D1", "shorted"),  # across the roller
    PartFailure("BT1", "low"), PartFailure("F1", "open"), PartFailure("SW2", "open"),
    PartFailure("M1", "open"), PartFailure("W1", "open"),
])
def test_a_power_part_failing_stops_the_roller(fault):
    assert roller(model(fault)) == 0, fault


def test_one_lever_holding_both_lid_switches_is_not_seen_by_either():
    """The common cause the mounting rules out (hardware/power.md: mount them apart)."""
    m = model(CommonCause("lid_lever_held"))
    assert roller(m, world=AJAR) == 0.85
    assert reads(m, "lid_closed", world=AJAR) == 0 and reads(m, "power_contact_sense",
                                                             world=AJAR) == 0


# --- every single fault ---------------------------------------------------------------------

@pytest.mark.parametrize("build", [None, MOSFET], ids=["bridge", "mosfet"])
@pytest.mark.parametrize("pins", [PINS, WIRED], ids=["default", "wired"])
def test_every_single_fault_is_listed_once_and_solves(pins, build):
    unit = circuit(pins, build)
    faults = single_faults(unit)
    assert len(faults) == len(set(faults))
    parts = {(f.ref, f.mode) for f in faults if isinstance(f, PartFailure)}
    assert parts == {(p.ref, mode) for p in unit.parts.values() for mode in p.failure_modes}
    opened = {f.net for f in faults if isinstance(f, NetOpen)}
    shorted = {f.net for f in faults if isinstance(f, NetShort)}
    for net in unit.nets.values():
        if len(net.terminals) > 1 and not net.name.startswith("PI"):
            assert net.name in opened, net.name
        if not net.rail:
            assert net.name in shorted, net.name
    m = Model(unit)
    for fault in faults:
        m.inject(fault)
        for world in (SHUT, AJAR, FULL, World(pi="boot")):
            s = m.solve({**SHOT, **TURN}, world)
            assert -2 <= s.roller.speed <= 2 and -2 <= s.rotator.speed <= 2


def test_a_fault_that_names_nothing_of_the_circuit_is_refused():
    unit = circuit(PINS)
    for fault, message in ((NetOpen("nowhere", 1), "no net"), (NetOpen("motor_in1", 9),
                           "no terminal 9"), (PartFailure("U9", "open"), "no part"),
                           (PartFailure("S3", "melted"), "no failure mode 'melted'"),
                           (CommonCause("gremlins"), "no common cause")):
        with pytest.raises(ValueError, match=message):
            Model(unit, fault)


def _firmware_view(m: Model, world: World) -> str:
    """What a firmware reading the sensing pair and the read-back (driver asleep) sees."""
    r = m.solve({}, world).reads
    no, nc, sense = (r[getattr(PINS, k)] for k in ("lid_closed", "lid_closed_nc",
                                                   "power_contact_sense"))
    if no == nc:
        return "lid_sensor"
    return "power_contact" if (no == 0) != (sense == 0) else "consistent"


def test_every_single_fault_that_lets_the_roller_run_with_the_lid_open_is_seen():
    """Copper that is checked: a single fault that defeats the power contact (the roller
    driven with the lid ajar) shows the firmware an inconsistency within one lid cycle, shut
    then ajar, with the driver asleep. The only one that does not is one lever holding both
    switches, which the mounting rules out."""
    unit = circuit(PINS)
    unseen = []
    for fault in single_faults(unit):
        m = Model(unit, fault)
        if roller(m, world=AJAR) > 0 and {_firmware_view(m, SHUT),
                                         _firmware_view(m, AJAR)} == {"consistent"}:
            unseen.append(fault)
    assert unseen == [CommonCause("lid_lever_held")]


def test_the_roles_outputs_are_the_pins_the_model_takes():
    m = model(pins=WIRED)
    assert set(m.output_pins) == {getattr(WIRED, k) for k, r in ROLES.items() if r.is_output}
