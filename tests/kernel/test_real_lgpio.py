"""tests/hal/test_real_factories.py's lgpio tests again, on the REAL lgpio and gpio-sim.

On the host those tests run ``LGPIOFactory`` over tests/hal/fakes/fake_lgpio.py (fast, in
every ``make test``); here the same adapters (hal.gpio) go through gpiozero's real factory
into the real library and the kernel's gpio character device, and the outside world is
gpio-sim's sysfs. The fakes stay on the host: they are the only lgpio ``make test`` has,
and fake_pigpio stays for good, since no pigpio daemon can run without a Pi's registers.

What the fake could not show and this does: the kernel's own refusal of a line held
elsewhere, the library's notification thread, its PWM as a real toggling line, and the
bias a claim asks for arriving at the chip.

Not repeated here: the fake's safe-stop test. gpio-sim returns a released line to its
pull at once (a Pi keeps the last level), so what safe-stop leaves behind cannot be seen
after it lets go; test_death.py pulls the motor lines up and traces the real ``launcher
safe-stop`` driving each low after a kill -9 and after the watchdog's SIGABRT.
"""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
from gpiozero import PWMOutputDevice
from gpiozero.pins import Factory
from kerneltier import LID_MAX, LID_P50, percentile, record
from lines import PINS, SYSFS, LineWatch, value

from hal.base import HardwareError
from hal.gpio import (
    PWM_FREQUENCY,
    GpioInput,
    GpioOutput,
    GpioRotator,
    HBridgeMotor,
    build_board,
    make_factory,
    open_board,
)


def pull(gpio: int, level: str) -> None:
    """The outside world: ``down`` (a switch closed to ground) or ``up``."""
    (SYSFS / f"sim_gpio{gpio}" / "pull").write_text(f"pull-{level}")


def bias(gpio: int) -> str:
    """The pull gpio-sim holds for the line: a consumer's bias request lands here."""
    return (SYSFS / f"sim_gpio{gpio}" / "pull").read_text().strip()


def duty(gpio: int, seconds: float = 0.3) -> float:
    watch = LineWatch(gpio)
    try:
        end, n, high = time.monotonic() + seconds, 0, 0
        while time.monotonic() < end:
            n += 1
            high += watch.read()
        return high / n
    finally:
        watch.close()


def wait_until(test, timeout: float = 2.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if test():
            return True
        time.sleep(0.005)
    return bool(test())


@pytest.fixture
def factory():
    f = make_factory("lgpio")
    yield f
    close_factory(f)
    for gpio in range(28):
        pull(gpio, "down")  # gpio-sim's own default, for the next test


def close_factory(factory: Factory) -> None:
    """Every device a test left open, then the factory (which lets every line go), whatever
    a device's close says: a failed test must not leave a line held for the next."""
    try:
        for refs in list(factory._reservations.values()):
            for device in [r() for r in refs]:
                if device is not None:
                    with contextlib.suppress(Exception):
                        device.close()
    finally:
        factory.close()


def test_the_button_has_its_pull_up_and_its_edges_reach_every_subscriber_from_lgpio(factory):
    """Two subscribers (the firmware's lid has two: the actuators' stop and the state
    machine's edge): each hears every edge, in order, on the library's thread; ending one
    subscription leaves the other."""
    button = GpioInput(PINS.button, factory)
    heard: list[tuple[str, bool, str]] = []

    def subscriber(who: str):
        return lambda active: heard.append((who, active, threading.current_thread().name))

    try:
        hear_both(button, subscriber, heard)
    finally:
        button.close()


def hear_both(button: GpioInput, subscriber, heard: list[tuple[str, bool, str]]) -> None:
    first = button.subscribe(subscriber("first"))
    button.subscribe(subscriber("second"))
    assert bias(PINS.button) == "pull-up"  # the claim's bias reached the chip
    assert button.is_active is False
    pull(PINS.button, "down")
    assert wait_until(lambda: len(heard) == 2) and button.is_active is True
    pull(PINS.button, "up")
    assert wait_until(lambda: len(heard) == 4)
    assert [(who, active) for who, active, _ in heard] == [
        ("first", True), ("second", True), ("first", False), ("second", False)]
    assert threading.current_thread().name not in {name for _, _, name in heard}
    first()
    pull(PINS.button, "down")
    assert wait_until(lambda: len(heard) == 5)
    time.sleep(0.1)
    assert [(who, active) for who, active, _ in heard[4:]] == [("second", True)]


def test_outputs_start_low_and_follow_on_and_off(factory):
    for pin in (PINS.rotator, PINS.led, PINS.amp_enable, PINS.motor_sleep):
        out = GpioOutput(pin, factory)
        assert value(pin) == 0 and out.is_active is False
        out.on()
        assert value(pin) == 1 and out.is_active is True
        out.off()
        assert value(pin) == 0
        out.close()


def test_h_bridge_pwm_toggles_the_line_brake_and_coast(factory):
    motor = HBridgeMotor(PINS.motor_in1, PINS.motor_in2, factory)
    in1, in2 = PINS.motor_in1, PINS.motor_in2
    assert duty(in1, 0.05) == 0 and duty(in2, 0.05) == 0
    motor.forward(0.85)
    measured = duty(in1)
    assert 0.2 < measured < 1.0, measured  # a toggling line (the VM's timing is loose)
    assert duty(in2, 0.05) == 0
    assert motor.speed == pytest.approx(0.85)
    motor.stop(brake=True)
    assert wait_until(lambda: duty(in1, 0.02) == 1 and duty(in2, 0.02) == 1)  # brake
    motor.stop(brake=False)
    assert wait_until(lambda: duty(in1, 0.02) == 0 and duty(in2, 0.02) == 0)  # coast
    motor.close()


def test_rotator_with_its_second_input_brakes_and_creeps(factory):
    in1, in2 = PINS.rotator, 4
    rot = GpioRotator(in1, in2, factory)
    assert value(in1) == 0 and duty(in2, 0.05) == 0
    rot.on()
    assert value(in1) == 1 and duty(in2, 0.05) == 0
    rot.brake()
    assert wait_until(lambda: value(in1) == 1 and duty(in2, 0.02) == 1)
    rot.back(0.3)
    assert value(in1) == 0 and 0 < duty(in2) < 1
    rot.close()


def test_the_board_wires_every_part_and_safe_leaves_the_motor_pins_low(factory):
    board = build_board(PINS, factory, name="lgpio")
    board.motor_enable.on()
    board.motor.forward(0.9)
    board.rotator.on()
    board.safe()
    for pin in (PINS.motor_in1, PINS.motor_in2, PINS.motor_sleep, PINS.rotator):
        assert wait_until(lambda pin=pin: duty(pin, 0.02) == 0), pin
    for pin in (PINS.button, PINS.lid_closed, PINS.lid_open, PINS.exit_beam, PINS.home,
                PINS.yellow_back):
        assert bias(pin) == "pull-up", pin
    board.close()


def test_lgpio_refuses_a_pwm_frequency_the_mock_accepts(factory):
    import lgpio  # in the VM only: plain pytest on the host collects this file without it

    with pytest.raises(lgpio.error, match="bad PWM frequency"):
        PWMOutputDevice(PINS.motor_in1, frequency=20_000, pin_factory=factory)
    PWMOutputDevice(PINS.motor_in1, frequency=PWM_FREQUENCY, pin_factory=factory).close()


def test_a_line_another_process_holds_is_refused_naming_the_config_key(factory):
    import lgpio

    other = lgpio.gpiochip_open(0)  # another holder: the kernel refuses a second request
    try:
        lgpio.gpio_claim_input(other, PINS.lid_open)
        with pytest.raises(HardwareError) as err:
            open_board(PINS, "lgpio")
        text = str(err.value)
        assert f"pins.lid_open = {PINS.lid_open}" in text and "GPIO busy" in text
        assert "sudo systemctl stop launcher" in text
        # The failed start let go of every line it had claimed: claiming them works.
        for key in ("button", "lid_closed", "motor_in1"):
            lgpio.gpio_claim_input(other, getattr(PINS, key))
    finally:
        lgpio.gpiochip_close(other)


def test_the_floor_of_a_lid_stop_on_the_librarys_own_thread(factory):
    """What any firmware can reach here: the lid's edge to IN1 low with nothing between but
    lgpio's notification thread and one Python callback (no gpiozero, no reactor).

    On lines no other test used: lgpio matches callbacks by line, not by handle, and a
    gpiozero callback left on a line whose factory was closed raises on the next edge and
    ends lgpio's notification thread for the whole process.
    """
    import lgpio

    in1, lid = 41, 40
    handle = lgpio.gpiochip_open(0)
    watch = LineWatch(in1)
    delays: list[float] = []
    try:
        lgpio.gpio_claim_output(handle, in1, 1)
        pull(lid, "down")
        lgpio.gpio_claim_alert(handle, lid, lgpio.RISING_EDGE)
        callback = lgpio.callback(handle, lid, lgpio.RISING_EDGE,
                                  lambda chip, gpio, level, tick: lgpio.gpio_write(handle, in1, 0))
        for _ in range(200):
            lgpio.gpio_write(handle, in1, 1)
            pull(lid, "down")
            time.sleep(0.01)
            opened = time.monotonic()
            pull(lid, "up")
            while watch.read():
                if time.monotonic() - opened > 2:
                    break
            delays.append(time.monotonic() - opened)
        callback.cancel()
    finally:
        watch.close()
        lgpio.gpiochip_close(handle)
    p50, worst = percentile(delays, 0.5), max(delays)
    record("floor", tries=len(delays), p50_s=p50, max_s=worst, p99_s=percentile(delays, 0.99),
           budget_p50_s=LID_P50, budget_max_s=LID_MAX)
    assert worst < 2, "an edge was lost"
    # The pin-thread budgets of test_pin_thread.py must stay several times this floor, or a
    # stop within them could not be told from the slower paths.
    assert p50 * 3 <= LID_P50 and worst * 2 <= LID_MAX, (
        f"the floor (p50 {p50 * 1e3:.1f} ms, max {worst * 1e3:.1f} ms) is too close to the "
        f"pin-thread budgets (p50 {LID_P50 * 1e3:.0f} ms, max {LID_MAX * 1e3:.0f} ms): "
        "the machine is too loaded for the tier")
