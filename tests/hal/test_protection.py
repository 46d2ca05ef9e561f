"""What protects the parts, and what they cannot take, in the electrical model
(hal/electrical.py, figures in hal/datasheets.py): the Pi's pads and their clamp diodes, its
3.3 V rail, a damaged pad; the driver's body diodes, its overcurrent protection and thermal
shutdown; the TB6612FNG's own pins."""

from __future__ import annotations

import pytest

from hal.circuit import Build, circuit, default_pins, wired_pins
from hal.circuit_faults import NetOpen, NetShort, PartFailure, PinDamaged, check_fault
from hal.datasheets import CLAMP_VF, DRIVERS, PAD_MAX_AMPS
from hal.electrical import Model, World

PINS = default_pins()
SHOT = {PINS.motor_sleep: 1.0, PINS.motor_in1: 1.0}
TB = Build(driver="TB6612FNG")
SHUT = World()


def solve(fault=None, levels=None, world=SHUT, pins=PINS, build=None):
    return Model(circuit(pins, build), fault).solve(levels or {}, world)


def stressed(sol) -> dict[str, float]:
    return {f"{s.where} {s.what}": s.amps for s in sol.stress}


# --- the Pi's pads ------------------------------------------------------------------------

def test_the_sound_unit_stresses_nothing_at_rest_running_or_booting():
    for levels in ({}, SHOT):
        for world in (World(), World(lid="ajar"), World(pi="boot"), World(pi="off")):
            sol = solve(levels=levels, world=world)
            assert sol.stress == () and sol.protection == frozenset(), (levels, world)


def test_gpio2_shorted_to_5v_drives_its_clamp_past_the_pads_rating():
    """Header pin 4 (5 V) beside pin 3 (GPIO 2): the pin is held at 5 V, its clamp to 3V3
    carries far more than the pads' 16 mA. Without the clamp model it would read as a high
    input and nothing more."""
    sol = solve(NetShort("rotator_contact_sense", "5V"))
    [(what, amps)] = stressed(sol).items()
    assert what == "GPIO 2 (rotator_contact_sense) held past its 3.3 V rail, into its clamp"
    assert amps > 5 * PAD_MAX_AMPS


def test_the_motor_supply_shorted_to_3v3_feeds_the_pis_rail():
    sol = solve(NetShort("VM", "3V3"))
    assert list(stressed(sol)) == ["the Pi's 3.3 V rail fed from the copper"]
    assert stressed(sol)["the Pi's 3.3 V rail fed from the copper"] > 1.0  # amps, not mA


def test_an_output_shorted_to_the_motor_supply_sinks_and_clamps_past_its_rating():
    sol = solve(NetShort("motor_in1", "VM"))  # driven low at rest
    s = stressed(sol)
    assert s["GPIO 12 (motor_in1) sinking, driven low,"] > PAD_MAX_AMPS
    assert s["GPIO 12 (motor_in1) held past its 3.3 V rail, into its clamp"] > PAD_MAX_AMPS


def test_an_output_driven_high_into_a_short_to_ground_sources_past_its_rating():
    assert stressed(solve(NetShort("motor_in1", "GND"), SHOT)) and not stressed(
        solve(NetShort("motor_in1", "GND")))  # driven low, it carries nothing


def test_a_series_resistor_keeps_the_clamp_current_under_the_rating():
    """nSLEEP shorted to VM reaches GPIO 25 through the read-back's 1 kΩ: the clamp
    conducts (the pin sits a diode's drop above 3V3) and carries under 1 mA."""
    sol = solve(NetShort("nsleep", "VM"), pins=wired_pins())
    assert sol.net("sleep_sense") == pytest.approx(3.3 + CLAMP_VF, abs=0.02)
    assert not any(w.startswith("GPIO 25") for w in stressed(sol))


def test_a_damaged_pin_drives_nothing_and_reads_its_rail():
    high, low = PinDamaged(12, "stuck_high"), PinDamaged(12, "stuck_low")
    for fault in (high, low):
        check_fault(circuit(PINS), fault)
    assert solve(high).pads[12] == 1  # driven low, it reads high: driver_input sees it
    assert solve(low, SHOT).roller.speed == 0  # driven high, the driver's input stays low
    assert solve(PinDamaged(22, "stuck_low"), world=World(lid="ajar")).reads[22] == 0
    with pytest.raises(ValueError, match="not one of this unit's pins"):
        check_fault(circuit(PINS), PinDamaged(3, "stuck_high"))


# --- the driver's protections and body diodes ------------------------------------------------

def test_a_short_across_the_roller_trips_the_overcurrent_protection_of_its_bridge_alone():
    """SLVSAR1E §7.3.5.1: a short across the winding trips OCP; only that H-bridge is
    disabled. The rotator on the other bridge still turns."""
    across = solve(PartFailure("C1", "shorted"), SHOT)
    assert across.protection == {"OCP A"} and across.roller == solve(levels={}).roller
    # The roller's bridge shorted to ground, tripped, while the rotator turns on the other.
    sol = solve(NetShort("roller_out1", "GND"), {**SHOT, PINS.rotator: 1.0}, World(lid="full"),
                build=Build())
    assert sol.protection == {"OCP A"} and sol.rotator.speed > 0


def test_an_output_shorted_to_3v3_trips_ocp_before_it_can_feed_the_pis_rail():
    sol = solve(NetShort("roller_out1", "3V3"), SHOT)
    assert sol.protection == {"OCP A"} and sol.stress == ()


def test_the_tb6612_has_no_ocp_and_its_thermal_shutdown_turns_every_output_off():
    assert DRIVERS["TB6612FNG"].i_ocp is None
    sol = solve(NetShort("roller_out1", "GND"), {**SHOT, PINS.rotator: 1.0}, World(lid="full"),
                build=TB)
    assert sol.protection == {"TSD"} and sol.roller.speed == 0 and sol.rotator.speed == 0


def test_the_body_diode_clamps_an_output_to_a_dead_motor_supply():
    """VM at 0 V: the power contact's 100 kΩ bias from 3V3 leaks into VM through the high
    side's body diode, so the read-back sees the contact open with the lid shut."""
    sol = solve(NetShort("VM", "GND"))
    assert sol.net("roller_out1") == pytest.approx(0.7, abs=0.01)
    assert sol.reads[PINS.power_contact_sense] == 1  # "open"
    assert solve().reads[PINS.power_contact_sense] == 0


# --- the TB6612FNG's own pins -------------------------------------------------------------

def test_the_tb6612s_vcc_and_pwm_inputs_are_tied_to_3v3():
    c = circuit(PINS, TB)
    assert {"U1.VCC", "U1.PWMA", "U1.PWMB"} <= set(c.nets["3V3"].terminals)
    assert "U1.PWMA" not in circuit(PINS).nets["3V3"].terminals


def test_the_tb6612_drives_as_the_drv8833_with_its_pwm_inputs_high():
    for levels in (SHOT, {**SHOT, PINS.motor_in2: 1.0}, {PINS.motor_sleep: 1.0}, {}):
        assert solve(levels=levels, build=TB).roller == solve(levels=levels).roller


def test_the_tb6612_short_brakes_with_its_pwm_input_off_and_stops_without_its_vcc():
    c = circuit(PINS, TB)
    at = c.nets["3V3"].terminals.index
    pwm_off = solve(NetOpen("3V3", at("U1.PWMA")), SHOT, build=TB)
    assert pwm_off.roller.brake == 1.0 and pwm_off.roller.speed == 0
    no_vcc = solve(NetOpen("3V3", at("U1.VCC")), SHOT, build=TB)
    assert not no_vcc.awake and no_vcc.roller.speed == 0
