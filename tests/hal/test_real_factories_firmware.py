"""The whole firmware (``Launcher``) over gpiozero's real factories on the fake ``lgpio`` and
``pigpio`` (see test_real_factories.py for the fakes and where they differ from the real
libraries).

FIRMWARE-LEVEL TESTS, kept few on purpose: they use only the Launcher's public surface
(``build_app(settings, reactor, rng, board, cues=, store=)``, ``start``, ``stop``,
``machine.state``, ``status``) and the board's pins, so they survive the rewrite of the
shell around an actuator owner.
"""

from __future__ import annotations

import random
import threading
from dataclasses import replace

import pytest
from test_real_factories import Hardware, close_factory

from hal.gpio import PWM_FREQUENCY, build_board, make_factory
from launcher.core import config
from launcher.core.reactor import ManualReactor
from launcher.firmware.app import build_app
from launcher.firmware.state import StateStore
from launcher.sim.rig import CueLog

# The fakes are pins without copper behind them: nothing here drives the read-backs from
# the driver and the lid (the simulator's circuit does: tests/sim, tests/firmware).
PINS = replace(config.load().pins, power_contact_sense=None, sleep_sense=None)


def always_two_cards() -> config.Settings:
    """Every press shoots two cards (hazard 1.0), so one press is one whole shot."""
    base = config.load()
    luck = replace(base.luck, mild=config.SideLuck(hazard=(1.0,), sizes=(2,), weights=(1.0,)))
    return replace(base, luck=luck)


class Unit:
    """The firmware on a real factory, a manual reactor, and the world outside the pins."""

    def __init__(self, name: str, module) -> None:
        self.hw = Hardware(name, module)
        # Power-on world: lid shut, cartridge at a detent, yellow half at the back (Mild),
        # beam clear, button up. Switches and hall sensors pull their line to ground; the lid
        # switch's NC twin is open while the lid is shut.
        for pin, level in ((PINS.lid_closed, 0), (PINS.lid_closed_nc, 1), (PINS.lid_open, 1),
                           (PINS.home, 0),
                           (PINS.yellow_back, 0), (PINS.exit_beam, 1), (PINS.button, 1)):
            self.hw.drive(pin, level)
        self.factory = make_factory(name)
        self.board = build_board(PINS, self.factory, name=name)
        self.reactor = ManualReactor()
        self.posted_from: list[str] = []
        post = self.reactor.post

        def recording_post(callback) -> None:
            self.posted_from.append(threading.current_thread().name)
            post(callback)

        self.reactor.post = recording_post  # type: ignore[method-assign]
        self.app = build_app(replace(always_two_cards(), pins=PINS), self.reactor,
                             random.Random(3), self.board, cues=CueLog(), store=StateStore(None))

    def world(self, pin: int, level: int, then: float = 0.06) -> None:
        """The outside world moves a pin; the library delivers the edge; time passes."""
        self.hw.drive(pin, level)
        self.reactor.advance(then)

    def close(self) -> None:
        self.app.stop()
        self.board.close()
        close_factory(self.factory)


@pytest.fixture(params=["lgpio", "pigpio"])
def unit(request: pytest.FixtureRequest):
    u = Unit(request.param, request.getfixturevalue(f"fake_{request.param}"))
    yield u
    u.close()


def test_a_whole_shot_with_the_press_arriving_on_the_librarys_thread(unit):
    app, hw = unit.app, unit.hw
    app.start()
    unit.reactor.advance(0.1)
    assert app.machine.state == "ready" and app.status()["lid"] == "closed"
    assert hw.level(PINS.led) == 1 and hw.level(PINS.motor_sleep) == 0  # asleep when idle
    unit.world(PINS.button, 0)
    assert unit.posted_from and set(unit.posted_from) == {f"fake-{hw.name}-notify"}
    assert app.machine.state == "shooting"
    speed = app.machine.settings.motor.speed
    assert hw.pwm(PINS.motor_in1) == (PWM_FREQUENCY, pytest.approx(speed))
    assert hw.level(PINS.motor_in2) == 0 and hw.level(PINS.motor_sleep) == 1
    unit.world(PINS.button, 1)
    for _ in range(2):  # two cards pass the beam
        unit.world(PINS.exit_beam, 0)
        unit.world(PINS.exit_beam, 1)
    assert app.machine.state == "ready"
    assert app.status()["motor"] == 0
    assert app.machine.settings.motor.brake and app.machine.settings.motor.brake_time > 0.06
    # The stop brakes (both inputs high) for motor.brake_ms, then lets go and sleeps.
    assert hw.level(PINS.motor_in1) == 1 and hw.level(PINS.motor_in2) == 1
    unit.reactor.advance(app.machine.settings.motor.brake_time)
    assert hw.level(PINS.motor_in1) == 0 and hw.level(PINS.motor_in2) == 0
    assert hw.level(PINS.motor_sleep) == 0


def test_lid_interlock_rotator_and_led_on_lgpio(fake_lgpio):
    u = Unit("lgpio", fake_lgpio)
    try:
        app, hw = u.app, u.hw
        app.start()
        u.reactor.advance(0.1)
        u.world(PINS.button, 0)
        assert app.machine.state == "shooting" and hw.level(PINS.motor_in1) > 0
        # The lid lifts mid-shot: the motor stops at the H-bridge pins.
        u.world(PINS.lid_closed, 1, then=0)
        u.world(PINS.lid_closed_nc, 0)  # the SPDT breaks NO, then makes NC (no time between)
        assert app.machine.state == "lid_open"
        assert app.status()["motor"] == 0  # no brake here: the driver sleeps at once
        assert hw.level(PINS.motor_in1) == 0 and hw.level(PINS.motor_in2) == 0
        assert hw.level(PINS.motor_sleep) == 0
        # Fully open: the rotator turns until the next detent, where the side is Wild.
        u.world(PINS.lid_open, 0)
        assert app.machine.state == "rotating" and hw.level(PINS.rotator) == 1
        assert hw.level(PINS.motor_sleep) == 1
        u.world(PINS.home, 1)
        u.world(PINS.yellow_back, 1)
        u.world(PINS.home, 0)
        assert hw.level(PINS.rotator) == 0 and hw.level(PINS.motor_sleep) == 0
        assert app.machine.state == "lid_open" and app.status()["side"] == "wild"
        u.world(PINS.lid_open, 1)
        u.world(PINS.lid_closed_nc, 1, then=0)
        u.world(PINS.lid_closed, 0)
        assert app.machine.state == "ready" and hw.level(PINS.led) == 1
    finally:
        u.close()
