"""The hardware notes say what is true about PWM, the TB6612FNG, the rotator MOSFET, the Hall
switches' delay and the amplifier's channel."""

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
