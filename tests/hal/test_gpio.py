"""The gpiozero adapters on MockFactory pins, and the choice of pin factory."""

from __future__ import annotations

import sys

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from hal.base import HardwareError
from hal.gpio import (
    GpioInput,
    GpioOutput,
    GpioRotator,
    HBridgeMotor,
    auto_factory_name,
    build_board,
    make_factory,
    pi_model,
)
from launcher.core import config


def test_input_is_active_low_and_reports_both_edges(factory):
    inp = GpioInput(17, factory)
    seen: list[bool] = []
    unsubscribe = inp.subscribe(seen.append)
    pin = factory.pin(17)
    assert inp.is_active is False  # pull-up: released reads high
    pin.drive_low()
    pin.drive_high()
    assert seen == [True, False]
    unsubscribe()
    pin.drive_low()
    assert seen == [True, False]
    inp.close()


def test_output_starts_low(factory):
    out = GpioOutput(24, factory)
    assert factory.pin(24).state == 0 and not out.is_active
    out.on()
    assert factory.pin(24).state == 1 and out.is_active
    out.off()
    assert factory.pin(24).state == 0
    out.close()


def test_h_bridge_forward_brake_and_coast(factory):
    motor = HBridgeMotor(12, 13, factory)
    in1, in2 = factory.pin(12), factory.pin(13)
    motor.forward(0.85)
    assert (in1.state, in2.state) == (0.85, 0) and motor.speed == 0.85
    motor.stop(brake=True)
    assert (in1.state, in2.state) == (1, 1) and motor.speed == 0.0
    motor.stop(brake=False)
    assert (in1.state, in2.state) == (0, 0)
    with pytest.raises(ValueError):
        motor.forward(1.5)
    motor.close()


def test_board_safe_leaves_motor_pins_low(factory):
    pins = config.load().pins
    board = build_board(pins, factory)
    board.motor_enable.on()
    board.motor.forward(0.9)
    board.rotator.on()
    board.safe()
    for n in (pins.motor_in1, pins.motor_in2, pins.motor_sleep, pins.rotator):
        assert factory.pin(n).state == 0
    board.close()


def test_no_beam_configured_means_no_beam_input(factory, tmp_path):
    p = tmp_path / "c.toml"
    p.write_text("[pins]\nexit_beam = -1\n")
    board = build_board(config.load(p).pins, factory)
    assert board.exit_beam is None
    board.close()


def test_pi_model_and_auto_choice(tmp_path):
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert pi_model(model) == "Raspberry Pi 5 Model B Rev 1.0"
    assert auto_factory_name({}, pi_model(model)) == "lgpio"
    model.write_bytes(b"Raspberry Pi 4 Model B Rev 1.4\x00")
    assert auto_factory_name({}, pi_model(model)) == "lgpio"  # lgpio on every Pi
    model.write_bytes(b"Some laptop\x00")
    assert pi_model(model) is None
    assert pi_model(tmp_path / "missing") is None
    assert auto_factory_name({}, None) == "mock"
    assert auto_factory_name({"GPIOZERO_PIN_FACTORY": "Native"}, None) == "native"


def test_a_factory_whose_module_is_missing_says_which_and_what_to_do(monkeypatch):
    # None in sys.modules makes the import fail, as on a machine without the library.
    # The daemon-down case is in test_real_factories.py, over a fake pigpio.
    monkeypatch.setitem(sys.modules, "pigpio", None)
    monkeypatch.setitem(sys.modules, "lgpio", None)
    for adapter in ("gpiozero.pins.pigpio", "gpiozero.pins.lgpio"):  # imported over a fake
        monkeypatch.delitem(sys.modules, adapter, raising=False)
    with pytest.raises(HardwareError) as err:
        make_factory("pigpio")
    assert "pin factory pigpio failed" in str(err.value)
    assert "pip install pigpio" in str(err.value)
    with pytest.raises(HardwareError, match="sudo apt install python3-lgpio"):
        make_factory("lgpio")
    with pytest.raises(HardwareError, match="unknown pin factory"):
        make_factory("rpigpio")


def test_mock_factory_has_pwm_pins():
    f = make_factory("mock")
    assert isinstance(f, MockFactory) and f.pin_class is MockPWMPin


# -- the rotator: one input, or both inputs of an H-bridge channel --------------------------


def levels(factory, *pins: int) -> tuple[float, ...]:
    return tuple(float(factory.pin(n).state) for n in pins)


def test_a_one_input_rotator_turns_ahead_or_coasts_and_cannot_brake_or_turn_back(factory):
    rot = GpioRotator(24, None, factory)
    assert not rot.can_brake and not rot.is_active
    rot.on()
    assert rot.is_active and levels(factory, 24) == (1.0,)
    rot.brake()  # nothing to brake with: it lets go
    assert not rot.is_active and levels(factory, 24) == (0.0,)
    with pytest.raises(HardwareError, match=r"pins\.rotator_in2"):
        rot.back(0.3)
    with pytest.raises(HardwareError, match=r"pins\.rotator_in2"):
        rot.forward(0.3)
    assert levels(factory, 24) == (0.0,)


@pytest.mark.parametrize(("mode", "want", "active", "braking"), [
    (lambda r: r.forward(), (1.0, 0.0), True, False),
    (lambda r: r.forward(0.25), (1.0, 0.75), True, False),  # ahead with slow decay
    (lambda r: r.back(0.3), (0.0, 0.3), True, False),
    (lambda r: r.brake(), (1.0, 1.0), False, True),
    (lambda r: r.off(), (0.0, 0.0), False, False),
])
def test_a_two_input_rotator_drives_each_mode_of_the_bridge(factory, mode, want, active,
                                                             braking):
    rot = GpioRotator(24, 4, factory)
    assert rot.can_brake
    mode(rot)
    assert levels(factory, 24, 4) == pytest.approx(want)
    assert (rot.is_active, rot.braking) == (active, braking)


def record_mixes(factory: MockFactory, in1: int, in2: int) -> list[tuple[float, float]]:
    """Every (IN1, IN2) the bridge sees, recorded after each write to either pin."""
    seen: list[tuple[float, float]] = []
    for n in (in1, in2):
        pin = factory.pin(n)
        original = pin._change_state

        def record(value, original=original):
            changed = original(value)
            seen.append(levels(factory, in1, in2))
            return changed

        pin._change_state = record
    return seen


def test_rotator_pin_writes_never_pass_through_a_reverse_drive_unless_asked(factory):
    """Between two pin writes the bridge sees a mix for microseconds: it may be ahead or
    nothing, never back (which would kick the cartridge the wrong way)."""
    rot = GpioRotator(24, 4, factory)
    seen = record_mixes(factory, 24, 4)
    for step in (rot.forward, rot.brake, rot.off, rot.forward, rot.off, rot.brake, rot.off):
        step()
    assert seen and all(not (in1 == 0 and in2 > 0) for in1, in2 in seen), seen


def test_rotator_speed_outside_0_to_1_is_refused(factory):
    rot = GpioRotator(24, 4, factory)
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"outside 0\.\.1"):
            rot.back(bad)


def test_a_board_with_rotator_in2_wires_both_inputs_and_close_lets_both_go(factory):
    from dataclasses import replace

    pins = replace(config.load().pins, rotator_in2=4)
    board = build_board(pins, factory)
    board.rotator.brake()
    assert levels(factory, 24, 4) == (1.0, 1.0)
    board.close()
    assert levels(factory, 24, 4) == (0.0, 0.0)
    assert GpioOutput(4, factory).is_active is False  # the pin is free again


def test_a_busy_rotator_in2_releases_the_rotator_pin_for_the_next_try(factory):
    squatter = GpioOutput(4, factory)
    with pytest.raises(Exception):  # noqa: B017 - gpiozero's own "pin in use" type
        GpioRotator(24, 4, factory)
    squatter.close()
    GpioOutput(24, factory).close()  # 24 was let go when 4 failed


def test_motor_pin_writes_never_pass_through_a_forward_drive_when_stopping(factory):
    """Stopping from a run, a brake or a coast: every mix the bridge sees between two pin
    writes is brake, coast or reverse, never forward (IN1 high with IN2 low)."""
    motor = HBridgeMotor(12, 13, factory)
    seen = record_mixes(factory, 12, 13)
    for speed in (0.85, 1.0, 0.3):
        motor.forward(speed)
        seen.clear()
        motor.stop(brake=True)
        motor.stop(brake=False)
        motor.stop(brake=True)
        motor.stop(brake=True)
        motor.stop(brake=False)
        assert seen and all(not (in1 > 0 and in2 == 0) for in1, in2 in seen), seen
    motor.close()


def test_a_pin_class_whose_state_is_its_own_is_read_through_it(factory):
    """A gpiozero whose ``state`` no longer just calls the hooks (or a pin class of its own)
    gets the public property, never the hooks behind its back."""
    from gpiozero.pins.mock import MockPWMPin

    from hal.gpio import bound_hooks
    from hal.internals import state_is_the_hooks

    class Counting(MockPWMPin):
        reads = 0

        @property
        def state(self):
            Counting.reads += 1
            return self._get_state()

        @state.setter
        def state(self, value):
            self._set_state(value)

    assert state_is_the_hooks(MockPWMPin) and not state_is_the_hooks(Counting)
    pin = factory.pin(21)
    pin.function = "output"
    pin.__class__ = Counting
    read, write = bound_hooks(pin)
    write(1)
    assert read() == 1 and Counting.reads == 1


def test_a_part_that_fails_to_close_leaves_no_other_pin_held_and_is_named(factory, monkeypatch):
    # lgpio can answer "GPIO busy" when a line is let go (seen once in the kernel tier, on the
    # button): the parts after it must still let their pins go, and the failure be named.
    pins = config.load().pins
    board = build_board(pins, factory)

    def busy() -> None:
        raise OSError("GPIO busy")

    monkeypatch.setattr(board.button, "close", busy)
    with pytest.raises(HardwareError, match=r"closing failed: button: OSError: GPIO busy"):
        board.close()
    for number in (pins.motor_in1, pins.motor_sleep, pins.rotator, pins.lid_closed):
        GpioOutput(number, factory).close()  # free again: no "pin in use"
