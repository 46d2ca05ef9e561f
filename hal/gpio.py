"""gpiozero adapters for every part of the launcher, and the choice of pin factory."""

from __future__ import annotations

import contextlib
import io
import logging
import threading
from collections.abc import Callable
from typing import Any

from hal import internals
from hal.base import Board, HardwareError, Pins, Unsubscribe
from hal.circuit import PAD_CHECKED
from hal.entry_points import deferred_entry_points

# The board model and the pin-factory choice live in hal.pins (no gpiozero import there, so
# `launcher doctor` stays light); they are re-exported here for the firmware.
from hal.pins import MODEL_FILE, auto_factory_name, factory_name, header_gpiochip, pi_model

with deferred_entry_points():  # gpiozero without importlib.metadata (hal/entry_points.py)
    from gpiozero import DigitalInputDevice, DigitalOutputDevice, PWMOutputDevice
    from gpiozero.pins import Factory

log = logging.getLogger("hal")

__all__ = ["MODEL_FILE", "PWM_FREQUENCY", "GpioInput", "GpioOutput", "GpioRotator", "HBridgeMotor",
           "auto_factory_name", "build_board", "factory_name", "make_factory", "open_board",
           "pi_model"]

PWM_FREQUENCY = 1000  # Hz; DRV8833 and TB6612 are happy anywhere from 100 Hz to 50 kHz
# 1000 Hz is also exact on both real factories: one of pigpio's 18 frequencies at its default
# 5 us sample rate, and within lgpio's 0.1-10000 Hz software PWM.


# Devices whose close raised, held until the process ends. gpiozero closes again, from its
# finaliser (GPIOBase.__del__), any device the garbage collector reaches still open, and the
# cyclic collector runs wherever an allocation sets it off: inside another device's
# reserve_pins, say, which holds the lock every local Pi factory shares
# (LocalPiFactory._res_lock, a plain Lock). The finaliser's release_pins then waits, on the
# thread that holds that lock, for ever: one failed close became a hang in a later board's
# opening. A device held here is never finalised while anything can open a pin.
_NOT_CLOSED: list[object] = []


def _close(device: Any) -> None:
    """Close one gpiozero device; one whose close raises is held (``_NOT_CLOSED``)."""
    try:
        device.close()
    except BaseException:
        _NOT_CLOSED.append(device)
        raise


def open_board(pins: Pins, name: str) -> Board:
    """The real board on the named pin factory (see ``factory_name``)."""
    factory = make_factory(name)
    try:
        return build_board(pins, factory, name=name)
    except HardwareError:
        factory.close()
        raise


# What to do when a factory cannot start: (missing Python module, any other failure).
_HINTS = {
    "lgpio": ("the lgpio module is missing: sudo apt install python3-lgpio, and make the venv "
              "with --system-site-packages (systemd/install.sh does both)",
              "check that /dev/gpiochip0 exists and that this user is in the gpio group "
              "(launcher doctor checks both)"),
    "pigpio": ("the pigpio module is missing: pip install pigpio in the launcher's venv "
               "(the [pi] extra; systemd/install.sh does it)",
               "pigpio daemon not running: sudo systemctl start pigpiod "
               "(on a Pi 5 use pin_factory = \"lgpio\")"),
    "native": ("", "the native factory needs /dev/gpiomem and a Pi 1-4"),
}


def _hint(name: str, exc: BaseException) -> str:
    missing, other = _HINTS.get(name, ("", ""))
    if isinstance(exc, ImportError) and missing:
        return missing
    return other


def make_factory(name: str) -> Factory:
    """Start the named pin factory; a failure says which one and what to do."""
    try:
        if name == "mock":
            with deferred_entry_points():
                from gpiozero.pins.mock import MockFactory, MockPWMPin

            return MockFactory(pin_class=MockPWMPin)
        if name == "lgpio":
            from gpiozero.pins.lgpio import LGPIOFactory

            # The header's chip by its label: its number moved between Pi 5 kernels.
            # None (no such label found) leaves the choice to gpiozero.
            return LGPIOFactory(chip=header_gpiochip())
        if name == "pigpio":
            from gpiozero.pins.pigpio import PiGPIOFactory

            # pigpio prints its own complaint to stdout when the daemon is down.
            with contextlib.redirect_stdout(io.StringIO()):
                return PiGPIOFactory()
        if name == "native":
            from gpiozero.pins.native import NativeFactory

            return NativeFactory()
    except Exception as exc:  # ImportError, OSError, and gpiozero's own types per factory
        raise HardwareError(f"pin factory {name} failed ({exc}): {_hint(name, exc)}") from exc
    raise HardwareError(f"unknown pin factory {name!r}: use lgpio, pigpio, native or mock")


class _Closed:
    """The pin of a part that was closed: any use of it fails, as gpiozero's would."""

    def read(self) -> float:
        raise HardwareError("the pin was closed")

    def write(self, value: float) -> None:
        raise HardwareError("the pin was closed")


# Pin reads and writes on the press path (the lid, the roller's inputs, nSLEEP, the
# amplifier, the LED) go to the gpiozero pin, not through the device's ``value``: the
# device layer adds a blink check and two attribute writes through its guarded
# ``__setattr__`` to each write, for blinks the launcher never starts (``python -m
# bench.press --cpu``). The range is checked here (``_check_speed``). The devices still own
# their pins: they claimed them, set the PWM frequency, and close them.
#
# The pin's public ``state`` property is, in gpiozero 2.0, exactly a call of the pin's
# own read or write hook (``hal.internals.pin_hooks``), one call more on a path where each
# call costs cache misses. ``bound_hooks`` binds the hooks themselves only where it sees that
# this is still so for the pin's class (``internals.state_is_the_hooks``); anywhere else, a
# gpiozero that changed or a pin class of its own, the public property. tests/hal checks,
# on each pin factory, that both paths agree.
_CLOSED = _Closed()


def bound_hooks(pin: Any) -> tuple[Callable[[], float], Callable[[float], None]]:
    """A pin's read and write: its own hooks where its ``state`` is exactly them, else the
    public ``state`` property."""
    if isinstance(pin, _Closed):
        return pin.read, pin.write
    if internals.state_is_the_hooks(type(pin)):
        return internals.pin_hooks(pin)

    def read() -> float:
        return pin.state

    def write(value: float) -> None:
        pin.state = value

    return read, write


class GpioInput:
    """A switch or sensor to ground with the internal pull-up: active when low (or, with
    ``active_high``, a logic level read with the internal pull-down: active when high).

    Any number of subscribers, called in the order they subscribed, on the pin library's
    thread. One that raises is reported through ``on_error`` (the board sets it to
    ``Board.callback_failed``: every actuator safe first) and the rest are still called;
    nothing reaches the pin library, whose thread would end (lgpio's does) and deliver no
    edge again.
    """

    def __init__(self, pin: int, factory: Factory, name: str = "",
                 active_high: bool = False) -> None:
        self.number = pin
        self.name = name or f"GPIO {pin}"
        self.active_high = active_high
        # bounce_time stays None: debouncing is done in firmware (mock pins ignore it).
        self._dev = DigitalInputDevice(pin, pull_up=not active_high, bounce_time=None,
                                       pin_factory=factory)
        self._read = bound_hooks(self._dev.pin)[0]  # see the module's note on pin reads
        # A tuple, replaced whole on each change: the pin thread walks the one it found.
        self._subscribers: tuple[Callable[[bool], None], ...] = ()
        self.on_error: Callable[[BaseException, str], None] = _log_callback_error

    def levels(self) -> dict[int, float]:
        """The raw level the board reads (1 high, 0 low: active is low), before debounce."""
        return {self.number: int(bool(self._dev.pin.state))}

    @property
    def is_active(self) -> bool:
        # Pulled up: active when the contact pulls it low; active-high: when it reads high.
        return bool(self._read()) is self.active_high

    def subscribe(self, callback: Callable[[bool], None]) -> Unsubscribe:
        if not self._subscribers:
            self._dev.when_activated = self._activated
            self._dev.when_deactivated = self._deactivated
        self._subscribers = (*self._subscribers, callback)

        def unsubscribe() -> None:
            self._subscribers = tuple(c for c in self._subscribers if c is not callback)
            if not self._subscribers and not self._dev.closed:
                self._dev.when_activated = None
                self._dev.when_deactivated = None

        return unsubscribe

    def _activated(self) -> None:
        self._deliver(True)

    def _deactivated(self) -> None:
        self._deliver(False)

    def _deliver(self, active: bool) -> None:
        for callback in self._subscribers:
            try:
                callback(active)
            except Exception as exc:  # never into the pin library: its thread would end
                where = f"{self.name} ({getattr(callback, '__qualname__', callback)})"
                try:
                    self.on_error(exc, where)
                except Exception:  # the board's handler never raises; a replaced one might
                    log.exception("the error handler of %s raised", self.name)

    @property
    def pin(self) -> object:
        return self._dev.pin

    def close(self) -> None:
        self._subscribers = ()
        try:
            _close(self._dev)
        except Exception as exc:
            if not _let_go_late(exc):
                raise
            # gpiozero closes an lgpio pin by claiming it again as an input; for a line
            # with edges, lgpio first closes the edge request's fd, which its alert thread
            # may still be polling (lgGpio.c, xSetAsFree, waits only 10 x 200 us for it).
            # The kernel then lets the line go when that poll returns, and the new claim is
            # refused: the line is free, which is what closing asks for.
            log.debug("%s: let go late by lgpio's alert thread (%s)", self.name, exc)
        self._read = bound_hooks(_CLOSED)[0]


def _let_go_late(exc: BaseException) -> bool:
    """lgpio's "GPIO busy" for a line of ours with edges, as it is closed (GpioInput.close)."""
    return type(exc).__module__ == "lgpio" and "GPIO busy" in str(exc)


def _log_callback_error(exc: BaseException, where: str) -> None:
    log.error("a callback of %s raised", where, exc_info=exc)


class GpioOutput:
    """A plain on/off output, low at start."""

    def __init__(self, pin: int, factory: Factory) -> None:
        self.number = pin
        self._dev = DigitalOutputDevice(pin, initial_value=False, pin_factory=factory)
        self._read, self._write = bound_hooks(self._dev.pin)  # see the module's note on pin writes

    def levels(self) -> dict[int, float]:
        return {self.number: int(bool(self._dev.value))}

    @property
    def is_active(self) -> bool:
        return bool(self._read())

    def on(self) -> None:
        self._write(True)

    def off(self) -> None:
        self._write(False)

    @property
    def pin(self) -> object:
        return self._dev.pin

    def close(self) -> None:
        _close(self._dev)
        self._read, self._write = bound_hooks(_CLOSED)


class HBridgeMotor:
    """One H-bridge channel: IN1 PWM forward, both low to coast, both high to brake."""

    def __init__(self, in1: int, in2: int, factory: Factory) -> None:
        self.numbers = (in1, in2)
        self._in1 = PWMOutputDevice(
            in1, initial_value=0, frequency=PWM_FREQUENCY, pin_factory=factory
        )
        try:
            self._in2 = PWMOutputDevice(
                in2, initial_value=0, frequency=PWM_FREQUENCY, pin_factory=factory
            )
        except BaseException:
            _close(self._in1)  # let IN1 go again: the caller gets no motor to close
            raise
        self._in1_write = bound_hooks(self._in1.pin)[1]  # see the module's note on pin writes
        self._in2_write = bound_hooks(self._in2.pin)[1]

    def levels(self) -> dict[int, float]:
        """Each input's PWM duty (0..1): IN1 at the speed while running, both 1 braking."""
        return {n: _duty(d.value) for n, d in zip(self.numbers, (self._in1, self._in2),
                                                   strict=True)}

    @property
    def speed(self) -> float:
        if self._in2.value > 0:
            return 0.0
        return float(self._in1.value)

    def forward(self, speed: float) -> None:
        if not 0.0 < speed <= 1.0:  # ``_check_speed``, written out: this is every shot's path
            _check_speed(speed)
        self._in2_write(0.0)
        self._in1_write(float(speed))

    def stop(self, brake: bool = True) -> None:
        """Brake (both high) or coast (both low). Either way the pin written first is the
        one whose mix with the other never drives forward: to brake IN2 goes high first
        (the mix is reverse alternating with brake), to coast IN1 goes low first (the mix
        is coast, or reverse from a brake), each for the microseconds between two writes.
        The second pin is written even when the first write raises."""
        if brake:
            try:
                self._in2_write(1.0)
            finally:
                self._in1_write(1.0)
        else:
            try:
                self._in1_write(0.0)
            finally:
                self._in2_write(0.0)

    def close(self) -> None:
        with contextlib.ExitStack() as closes:  # both closed, whatever one of them raises
            closes.callback(_close, self._in2)
            closes.callback(_close, self._in1)
            self.stop(brake=False)
        self._in1_write = self._in2_write = bound_hooks(_CLOSED)[1]


class GpioRotator:
    """The cartridge's gear motor: ``in1`` alone, or both inputs of an H-bridge channel.

    ``in1`` alone (a MOSFET gate, or BIN1 with BIN2 grounded) turns it ahead or lets it
    coast. With ``in2`` (BIN2, PWM) the channel's other modes are reachable too:

    ============  =====  ==========  ==========================================
    mode          IN1    IN2         the bridge (DRV8833; TB6612FNG with PWM high)
    ============  =====  ==========  ==========================================
    ahead, s      1      PWM 1 - s   forward, alternating with brake (slow decay)
    back, s       0      PWM s       reverse, alternating with coast
    brake         1      1           both outputs low: the motor is shorted
    off           0      0           outputs open: the motor coasts
    ============  =====  ==========  ==========================================

    Each change writes the two pins in an order whose mix between them (it lasts
    microseconds) drives ahead or not at all, never back, unless turning back was asked.
    """

    def __init__(self, in1: int, in2: int | None, factory: Factory) -> None:
        self.numbers = (in1, in2)
        self._in1 = DigitalOutputDevice(in1, initial_value=False, pin_factory=factory)
        self._in2: PWMOutputDevice | None = None
        if in2 is not None:
            try:
                self._in2 = PWMOutputDevice(in2, initial_value=0, frequency=PWM_FREQUENCY,
                                            pin_factory=factory)
            except BaseException:
                _close(self._in1)  # the caller gets no rotator to close
                raise

    def levels(self) -> dict[int, float]:
        """IN1's level, and IN2's PWM duty when it is wired."""
        in1, in2 = self.numbers
        out: dict[int, float] = {in1: int(bool(self._in1.value))}
        if self._in2 is not None and in2 is not None:
            out[in2] = _duty(self._in2.value)
        return out

    @property
    def can_brake(self) -> bool:
        return self._in2 is not None

    @property
    def is_active(self) -> bool:
        """Driven to turn, either way (braking and coasting are not)."""
        in2 = 0.0 if self._in2 is None else float(self._in2.value)
        return in2 < 1 if self._in1.value else in2 > 0

    @property
    def braking(self) -> bool:
        return self._in2 is not None and bool(self._in1.value) and self._in2.value >= 1

    def on(self) -> None:
        self.forward(1.0)

    def forward(self, speed: float = 1.0) -> None:
        _check_speed(speed)
        if speed < 1 and self._in2 is None:
            raise HardwareError("the rotator turns slowly only with pins.rotator_in2 wired")
        self._in1.on()
        if self._in2 is not None:
            self._in2.value = 1.0 - speed

    def back(self, speed: float) -> None:
        _check_speed(speed)
        if self._in2 is None:
            raise HardwareError("the rotator turns back only with pins.rotator_in2 wired")
        self._in1.off()
        self._in2.value = speed

    def brake(self) -> None:
        """Short the motor; with one input there is no brake, and it coasts."""
        if self._in2 is None:
            self._in1.off()
            return
        self._in1.on()
        self._in2.value = 1.0

    def off(self) -> None:
        """Let go: IN2 first (from a brake, the mix between is ahead), IN1 even when that
        write raises."""
        try:
            if self._in2 is not None:
                self._in2.value = 0.0
        finally:
            self._in1.off()

    @property
    def pin(self) -> object:
        return self._in1.pin

    def close(self) -> None:
        with contextlib.ExitStack() as closes:  # both closed, whatever one of them raises
            if self._in2 is not None:
                closes.callback(_close, self._in2)
            closes.callback(_close, self._in1)
            self.off()


def _duty(value: float) -> float:
    """A PWM output's duty as the console shows it: 0 and 1 whole, others to 4 places."""
    return int(value) if value in (0, 1) else round(float(value), 4)


def _check_speed(speed: float) -> None:
    if not 0.0 < speed <= 1.0:
        raise ValueError(f"speed {speed} is outside 0..1")


def build_board(pins: Pins, factory: Factory, *, simulated: bool = False, name: str = "") -> Board:
    """Wire every part of the launcher to its pin through ``factory``.

    A pin the factory refuses (taken by another program, not a GPIO on this board) stops
    the wiring with a ``HardwareError`` naming the config key; the parts made so far are
    closed again, so their pins are free for the next try.
    """
    made: list[Any] = []

    def part(key: str, pin: int, make: Callable[[], Any]) -> Any:
        try:
            device = make()
        except Exception as exc:  # each factory raises its own types (lgpio.error, ...)
            for earlier in reversed(made):
                try:
                    earlier.close()
                except Exception:  # the refused claim is the news; this one is logged
                    log.exception("closing %s again after %s was refused", earlier, key)
            raise HardwareError(_claim_failure(key, pin, exc)) from exc
        made.append(device)
        return device

    def inp(key: str, active_high: bool = False) -> GpioInput:
        pin = getattr(pins, key)
        return part(key, pin, lambda: GpioInput(pin, factory, f"pins.{key}", active_high))

    def maybe(key: str, active_high: bool = False) -> GpioInput | None:
        return None if getattr(pins, key) is None else inp(key, active_high)

    def out(key: str) -> GpioOutput:
        pin = getattr(pins, key)
        return part(key, pin, lambda: GpioOutput(pin, factory))

    motor = part("motor_in1/motor_in2", pins.motor_in1,
                 lambda: HBridgeMotor(pins.motor_in1, pins.motor_in2, factory))
    board = Board(
        button=inp("button"),
        lid_closed=inp("lid_closed"),
        lid_open=inp("lid_open"),
        exit_beam=maybe("exit_beam"),
        home=inp("home"),
        yellow_back=inp("yellow_back"),
        motor=motor,
        motor_enable=out("motor_sleep"),
        rotator=part("rotator" if pins.rotator_in2 is None else "rotator/rotator_in2",
                     pins.rotator, lambda: GpioRotator(pins.rotator, pins.rotator_in2, factory)),
        amp=out("amp_enable"),
        led=out("led"),
        lid_closed_nc=maybe("lid_closed_nc"),
        deadman=None if pins.deadman is None else out("deadman"),
        power_contact=maybe("power_contact_sense"),
        sleep_sense=maybe("sleep_sense", active_high=True),
        rotator_contact=maybe("rotator_contact_sense"),
        simulated=simulated,
        name=name or type(factory).__name__,
        pins=pins,
        pin_threads=lambda: pin_threads(factory),
        input_pads=pad_reader(factory, {k: getattr(pins, k) for k in PAD_CHECKED
                                        if getattr(pins, k) is not None}),
    )
    for device in made:
        if isinstance(device, GpioInput):
            device.on_error = board.callback_failed
    return board


def pad_reader(factory: Factory, numbers: dict[str, int]
               ) -> Callable[[], dict[str, bool]] | None:
    """A read of these outputs' levels at the Pi's pads, by key, as the pin is, not as it is
    driven: lgpio's and pigpio's read of a GPIO answers its level register (an output's
    input buffer stays on), whatever the line's mode. Mock pins answer the level the
    simulator solved for the pin (``SimPin.pad``), else the one they are driven to. None for
    a pin library that cannot tell (the native factory)."""
    kind = type(factory).__name__
    read: Callable[[int], object]
    if kind == "LGPIOFactory":
        import lgpio

        def read(n: int) -> object:
            return lgpio.gpio_read(internals.lgpio_handle(factory), n)
    elif kind == "PiGPIOFactory":
        def read(n: int) -> object:
            return internals.pigpio_connection(factory).read(n)
    elif kind == "MockFactory":
        def read(n: int) -> object:
            pin = factory.pin(n)
            pad = getattr(pin, "pad", None)
            return pin.state if pad is None else pad
    else:
        return None
    return lambda: {key: bool(read(n)) for key, n in numbers.items()}


def pin_threads(factory: Factory) -> list[threading.Thread]:
    """The threads ``factory``'s pin library delivers edges on (started ones only): lgpio's
    notification thread, pigpio's, the native factory's watch and dispatch threads. Mock
    pins call back on the thread that moves them: none.

    They are attributes each library keeps for itself (``hal.internals``): one that is not
    found is left out, with a warning once, never guessed.
    """
    kind = type(factory).__name__
    found: list[object] = []
    if kind == "LGPIOFactory":
        found.append(internals.lgpio_notify_thread())
    elif kind == "PiGPIOFactory":
        found.append(internals.pigpio_notify_thread(factory))
    elif kind == "NativeFactory":
        found += internals.native_threads(factory)
    return [t for t in found if isinstance(t, threading.Thread) and t.ident is not None]


def _claim_failure(key: str, pin: int, exc: BaseException) -> str:
    text = f"pins.{key} = {pin}: the pin factory refused GPIO {pin} ({exc})"
    if "busy" in str(exc).lower():
        # lgpio's "GPIO busy": the kernel has handed the line to another process.
        return (text + ": another program holds it; stop it (sudo systemctl stop launcher, "
                "or see `gpioinfo`) or choose another pin")
    return text + ": check the pin number in the config (`launcher doctor` checks them all)"
