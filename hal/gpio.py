"""gpiozero adapters for every part of the launcher, and the choice of pin factory."""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable
from pathlib import Path

from gpiozero import DigitalInputDevice, DigitalOutputDevice, PWMOutputDevice
from gpiozero.pins import Factory

from hal.base import Board, HardwareError, Pins

MODEL_FILE = Path("/proc/device-tree/model")
PWM_FREQUENCY = 1000  # Hz; DRV8833 and TB6612 are happy anywhere from 100 Hz to 50 kHz


def pi_model(model_file: Path = MODEL_FILE) -> str | None:
    """The Raspberry Pi model string, or None when this is not a Pi."""
    try:
        model = model_file.read_bytes().decode("ascii", "replace").strip("\x00\n ")
    except OSError:
        return None
    return model if model.startswith("Raspberry Pi") else None


def auto_factory_name(env: dict[str, str] | None = None, model: str | None = None) -> str:
    """What ``pin_factory = "auto"`` means here: env, then the Pi model, else mock."""
    env = dict(os.environ) if env is None else env
    forced = env.get("GPIOZERO_PIN_FACTORY", "").strip().lower()
    if forced:
        return forced
    if model is None:
        return "mock"
    return "lgpio" if "Raspberry Pi 5" in model else "pigpio"


def factory_name(setting: str, model: str | None, env: dict[str, str] | None = None) -> str:
    """The one choice of pin factory: ``board.pin_factory`` as given, or what "auto" means
    on this machine (``model`` is ``pi_model()``)."""
    if setting != "auto":
        return setting
    return auto_factory_name(env, model)


def open_board(pins: Pins, name: str) -> Board:
    """The real board on the named pin factory (see ``factory_name``)."""
    return build_board(pins, make_factory(name), name=name)


_HINTS = {
    "lgpio": "install it with: sudo apt install python3-lgpio "
    "(and make the venv with --system-site-packages)",
    "pigpio": "pigpio daemon not running: sudo systemctl start pigpiod "
    "(on a Pi 5 use pin_factory = \"lgpio\")",
    "native": "the native factory needs /dev/gpiomem and a Pi 1-4",
}


def make_factory(name: str) -> Factory:
    """Start the named pin factory; a failure says which one and what to do."""
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    try:
        if name == "mock":
            return MockFactory(pin_class=MockPWMPin)
        if name == "lgpio":
            from gpiozero.pins.lgpio import LGPIOFactory

            return LGPIOFactory()
        if name == "pigpio":
            from gpiozero.pins.pigpio import PiGPIOFactory

            # pigpio prints its own complaint to stdout when the daemon is down.
            with contextlib.redirect_stdout(io.StringIO()):
                return PiGPIOFactory()
        if name == "native":
            from gpiozero.pins.native import NativeFactory

            return NativeFactory()
    except (ImportError, OSError, RuntimeError) as exc:
        raise HardwareError(f"pin factory {name} failed ({exc}): {_HINTS[name]}") from exc
    except Exception as exc:  # gpiozero raises its own error types per factory
        raise HardwareError(f"pin factory {name} failed ({exc}): {_HINTS.get(name, '')}") from exc
    raise HardwareError(f"unknown pin factory {name!r}: use lgpio, pigpio, native or mock")


class GpioInput:
    """A switch or sensor to ground with the internal pull-up: active when low."""

    def __init__(self, pin: int, factory: Factory) -> None:
        # bounce_time stays None: debouncing is done in firmware (mock pins ignore it).
        self._dev = DigitalInputDevice(pin, pull_up=True, bounce_time=None, pin_factory=factory)

    @property
    def is_active(self) -> bool:
        return bool(self._dev.is_active)

    def on_change(self, callback: Callable[[bool], None] | None) -> None:
        if callback is None:
            self._dev.when_activated = None
            self._dev.when_deactivated = None
            return

        def activated() -> None:
            callback(True)

        def deactivated() -> None:
            callback(False)

        self._dev.when_activated = activated
        self._dev.when_deactivated = deactivated

    @property
    def pin(self) -> object:
        return self._dev.pin

    def close(self) -> None:
        self._dev.close()


class GpioOutput:
    """A plain on/off output, low at start."""

    def __init__(self, pin: int, factory: Factory) -> None:
        self._dev = DigitalOutputDevice(pin, initial_value=False, pin_factory=factory)

    @property
    def is_active(self) -> bool:
        return bool(self._dev.value)

    def on(self) -> None:
        self._dev.on()

    def off(self) -> None:
        self._dev.off()

    @property
    def pin(self) -> object:
        return self._dev.pin

    def close(self) -> None:
        self._dev.close()


class HBridgeMotor:
    """One H-bridge channel: IN1 PWM forward, both low to coast, both high to brake."""

    def __init__(self, in1: int, in2: int, factory: Factory) -> None:
        self._in1 = PWMOutputDevice(
            in1, initial_value=0, frequency=PWM_FREQUENCY, pin_factory=factory
        )
        self._in2 = PWMOutputDevice(
            in2, initial_value=0, frequency=PWM_FREQUENCY, pin_factory=factory
        )

    @property
    def speed(self) -> float:
        if self._in2.value > 0:
            return 0.0
        return float(self._in1.value)

    def forward(self, speed: float) -> None:
        if not 0.0 < speed <= 1.0:
            raise ValueError(f"motor speed {speed} is outside 0..1")
        self._in2.value = 0
        self._in1.value = speed

    def stop(self, brake: bool = True) -> None:
        level = 1 if brake else 0
        self._in1.value = level
        self._in2.value = level

    def close(self) -> None:
        self.stop(brake=False)
        self._in1.close()
        self._in2.close()


def build_board(pins: Pins, factory: Factory, *, simulated: bool = False, name: str = "") -> Board:
    """Wire every part of the launcher to its pin through ``factory``."""
    return Board(
        button=GpioInput(pins.button, factory),
        lid_closed=GpioInput(pins.lid_closed, factory),
        lid_open=GpioInput(pins.lid_open, factory),
        exit_beam=None if pins.exit_beam is None else GpioInput(pins.exit_beam, factory),
        home=GpioInput(pins.home, factory),
        yellow_back=GpioInput(pins.yellow_back, factory),
        motor=HBridgeMotor(pins.motor_in1, pins.motor_in2, factory),
        motor_enable=GpioOutput(pins.motor_sleep, factory),
        rotator=GpioOutput(pins.rotator, factory),
        amp=GpioOutput(pins.amp_enable, factory),
        led=GpioOutput(pins.led, factory),
        simulated=simulated,
        name=name or type(factory).__name__,
    )
