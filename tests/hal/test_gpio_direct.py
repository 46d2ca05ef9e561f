"""The press path's pin writes go to the gpiozero pin itself: the same levels as through the
device, and a closed part refuses to be used."""

from __future__ import annotations

import pytest

from hal.base import HardwareError
from hal.gpio import GpioInput, GpioOutput, HBridgeMotor


def test_direct_writes_are_what_the_devices_read(factory):
    out, motor, inp = GpioOutput(5, factory), HBridgeMotor(6, 13, factory), GpioInput(17, factory)
    out.on()
    assert out.is_active and out._dev.value == 1 and factory.pin(5).state
    motor.forward(0.85)
    assert motor.speed == pytest.approx(0.85) and motor.levels() == {6: 0.85, 13: 0}
    motor.stop(brake=True)
    assert motor.levels() == {6: 1, 13: 1} and motor.speed == 0.0
    factory.pin(17).drive_low()
    assert inp.is_active and inp._dev.is_active
    factory.pin(17).drive_high()
    assert not inp.is_active and not inp._dev.is_active


def test_a_closed_part_refuses_use(factory):
    out, motor, inp = GpioOutput(5, factory), HBridgeMotor(6, 13, factory), GpioInput(17, factory)
    for part in (out, motor, inp):
        part.close()
    for use in (out.on, out.off, lambda: out.is_active, lambda: motor.forward(0.5),
                motor.stop, lambda: inp.is_active):
        with pytest.raises(HardwareError):
            use()
