"""The hardware notes say what is true about PWM, the TB6612FNG, the rotator MOSFET, the Hall
switches' delay, the amplifier's channel, the battery, the fuse, the lid switches and the
beam."""

from __future__ import annotations

from pathlib import Path

HW = Path(__file__).resolve().parents[2] / "hardware"


def _text(name: str) -> str:
    return " ".join((HW / name).read_text(encoding="utf-8").split())


def test_hardware_pwm_is_not_promised_while_pigpiod_holds_the_pwm_peripheral():
    pinout = _text("pinout.md")
    assert "without rewiring" not in pinout
    assert "`-t 0`" in pinout and "gives the PWM peripheral to pigpio" in pinout


def test_the_tb6612fng_gets_its_logic_supply_and_a_warning_about_nimh():
    power = _text("power.md")
    assert "VCC → 3V3" in power
    assert "TB6612FNG on 4×NiMH is marginal" in power
    assert "VCC, PWMA and PWMB to 3V3" in (HW / "wiring.svg").read_text()


def test_the_rotator_mosfet_is_the_one_specified_at_a_low_gate_voltage():
    bom = _text("bom.md")
    assert "Not the IRLZ44N" in bom and "2.5 V gate" in bom
    assert "IRLZ44N" not in (HW / "wiring.svg").read_text()


def test_the_hall_switch_delay_and_the_overshoot_are_written_down():
    fitting = _text("fitting.md")
    assert "Home is seen late, so the cartridge overshoots" in fitting
    assert "micropower" in fitting


def test_the_amplifier_channel_chosen_by_the_sd_pin_is_written_down():
    assert "left channel only" in _text("pinout.md")


def test_the_hall_switch_period_is_the_ah1806s_and_each_sensor_is_decoupled():
    fitting = _text("fitting.md")
    assert "75 ms typical for the AH1806" in fitting
    assert "50 ms is 9°" not in fitting and "75 ms is 13.5°" in fitting
    assert "100 nF ceramic across VDD and GND" in fitting
    assert "100 nF" in _text("pinout.md").split("`pins.home`", 1)[1].split("\n", 1)[0]


def test_the_battery_is_the_toys_and_the_speed_is_scaled_for_other_packs():
    power = _text("power.md")
    assert "3 alkaline C cells, 4.5 V" in power
    assert "speed ≈ 4.5 V / pack voltage" in power
    assert "overdrives the roller by about 40%" in power
    assert "under the TB6612's 4.5 V minimum" in power
    assert "4×AA NiMH = 4.8 V" not in power  # the old default pack


def test_the_fuse_is_at_the_battery_terminal_and_says_what_it_protects():
    power = _text("power.md")
    assert "The fuse protects the wiring, not the motor." in power
    assert "trips at 4 A" in power and "does *not* reliably open on a roller stall" in power
    assert "at the battery's + terminal" in power
    assert "A **2 A fuse** (or polyfuse) after the motor supply's switch" not in power
    assert "at the battery's + terminal" in _text("bom.md")


def test_the_sensing_switches_are_low_current_parts_with_wetting_pull_ups():
    power = _text("power.md")
    assert "Omron SS-01GL" in power and "2.2 kΩ wetting pull-up" in power
    assert "60 µA" in power
    bom = _text("bom.md")
    assert "| Omron SS-5GL | 2 |" not in bom, "silver-contact switches are not for sensing"


def test_the_beam_advice_keeps_a_gap_between_cards():
    fitting = _text("fitting.md")
    assert "move the pair so the beam crosses where cards overlap" not in fitting
    for needed in ("gap between cards", "one at a time", "aperture", "10 kΩ pull-up"):
        assert needed in fitting


def test_the_toys_eye_warning_is_kept():
    fitting = _text("fitting.md")
    assert "## 6. Eye safety" in fitting and "faces or eyes" in fitting
