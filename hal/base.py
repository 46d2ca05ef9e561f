"""Small interfaces between the firmware and its hardware.

Inputs report ``True`` when active: button pressed, lid closed / fully open, a card
blocking the exit beam, the cartridge at a home detent, the yellow half at the back.
Callbacks given to ``subscribe`` arrive on the pin library's own thread. An input calls
every subscriber, in the order they subscribed, and a subscriber that raises never reaches
the pin library: the board drives itself safe and reports it (``Board.callback_failed``),
and the next subscriber, and the next edge, are delivered as ever.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import ClassVar, Protocol, runtime_checkable

log = logging.getLogger("hal")

NEVER = float("inf")  # a wake time that never comes

# The one order in which every stop drives the actuators safe (``Board.drive_safe``, the
# firmware's stops, ``launcher safe-stop``): the driver's nSLEEP first (the bridge's
# outputs open at once, whatever its inputs say), then the roller's inputs (IN1 before IN2:
# the mix between never drives forward), the rotator's (IN2 before IN1: from a brake the
# mix between is ahead, never back) and last the dead-man's wave. Each entry is a part of
# ``Board`` and the ``Pins`` it drives.
SAFE_ORDER: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("motor_enable", ("motor_sleep",)),
    ("motor", ("motor_in1", "motor_in2")),
    ("rotator", ("rotator_in2", "rotator")),
    ("deadman", ("deadman",)),
)
SAFE_PINS: tuple[str, ...] = tuple(pin for _, pins in SAFE_ORDER for pin in pins)


class HalError(Exception):
    """Root of the errors the hardware layer raises on purpose."""


class HardwareError(HalError, RuntimeError):
    """A pin factory or device could not start; the message says what to do."""


class Timer(Protocol):
    """The handle ``Scheduler.register_timer`` returns; pass it back to update or cancel."""

    @property
    def waketime(self) -> float:
        """When it fires next (``NEVER``: unarmed)."""
        ...


class Scheduler(Protocol):
    """A reactor's clock and timers: what the simulated launcher and the actuators run on
    (``launcher.core.reactor.Reactor`` adds ``post``). The one definition of them.

    A timer callback gets the event time and returns its next wake time, or ``NEVER``.
    """

    def monotonic(self) -> float: ...
    def register_timer(self, callback: Callable[[float], float], waketime: float = NEVER,
                       name: str = "") -> Timer: ...
    def update_timer(self, timer: Timer, waketime: float) -> None: ...
    def unregister_timer(self, timer: Timer) -> None: ...


@dataclass(frozen=True)
class Pins:
    """BCM pin numbers of every part; the ``OPTIONAL`` ones may be None (not wired).

    ``exit_beam`` None: no beam fitted. ``rotator_in2`` None: the gear motor has one input
    (a MOSFET, or an H-bridge channel with its second input grounded). ``lid_closed_nc``
    None: the lid switch's sensing contact is single (no NC contact to cross-check).
    ``deadman`` None: no dead-man one-shot holds the driver awake. ``power_contact_sense``
    None: no read-back of the lid's power contact; ``sleep_sense`` None: no read-back of
    the driver's nSLEEP; ``rotator_contact_sense`` None: no read-back of the full-open
    contact in the rotator's lead (hal/circuit.py has what each is wired to).
    """

    button: int
    motor_in1: int
    motor_in2: int
    motor_sleep: int
    exit_beam: int | None
    lid_closed: int
    lid_open: int
    rotator: int
    home: int
    yellow_back: int
    amp_enable: int
    led: int
    rotator_in2: int | None = None
    lid_closed_nc: int | None = None
    deadman: int | None = None
    power_contact_sense: int | None = None
    sleep_sense: int | None = None
    rotator_contact_sense: int | None = None

    OPTIONAL: ClassVar[tuple[str, ...]] = ("exit_beam", "rotator_in2", "lid_closed_nc",
                                           "deadman", "power_contact_sense", "sleep_sense",
                                           "rotator_contact_sense")


Unsubscribe = Callable[[], None]


@runtime_checkable
class Input(Protocol):
    @property
    def is_active(self) -> bool: ...
    def subscribe(self, callback: Callable[[bool], None]) -> Unsubscribe:
        """Call ``callback(active)`` on every change, after the earlier subscribers; the
        callable returned ends this subscription (and only this one)."""
        ...
    def close(self) -> None: ...


@runtime_checkable
class PinLevels(Protocol):
    """A part that can say what its pins are at, by BCM number: an output its level (1/0)
    or a PWM output its duty (0..1); an input the RAW level the board reads (1 high, 0 low;
    the launcher's inputs are active low), before any debounce. Only reads."""

    def levels(self) -> dict[int, float]: ...


class Output(Protocol):
    @property
    def is_active(self) -> bool: ...
    def on(self) -> None: ...
    def off(self) -> None: ...
    def close(self) -> None: ...


class Motor(Protocol):
    """The shooter motor on an H-bridge. ``stop`` writes both inputs even when the first
    write raises (then it raises the first failure)."""

    @property
    def speed(self) -> float: ...  # 0 when stopped
    def forward(self, speed: float) -> None: ...
    def stop(self, brake: bool = True) -> None: ...
    def close(self) -> None: ...


class Rotator(Protocol):
    """The cartridge's gear motor. ``can_brake`` False: it can only turn ahead at full
    speed or coast; True (both inputs of an H-bridge channel wired): it can also brake and
    creep slowly either way."""

    @property
    def is_active(self) -> bool: ...  # driven to turn, either way
    @property
    def can_brake(self) -> bool: ...
    def on(self) -> None: ...  # ahead at full speed
    def forward(self, speed: float = 1.0) -> None: ...
    def back(self, speed: float) -> None: ...
    def brake(self) -> None: ...
    def off(self) -> None: ...  # let go: the motor coasts; every input written, as Motor.stop
    def close(self) -> None: ...


class Speaker(Protocol):
    """Plays preloaded sounds by name with one voice (a new play replaces the current one);
    never blocks and never raises on a lost device."""

    def load(self, sounds: Mapping[str, Path]) -> None: ...
    def play(self, name: str) -> None: ...
    def stop(self) -> None: ...
    @property
    def is_playing(self) -> bool: ...
    def close(self) -> None: ...


@dataclass
class Board:
    """Every part of the launcher the firmware touches."""

    button: Input
    lid_closed: Input
    lid_open: Input
    exit_beam: Input | None  # None: no beam fitted, shots are timed
    home: Input
    yellow_back: Input
    motor: Motor
    motor_enable: Output  # H-bridge nSLEEP (with the dead-man fitted: the one-shot's CLR)
    rotator: Rotator
    amp: Output
    led: Output
    lid_closed_nc: Input | None = None  # active when the lid is NOT closed (the NC contact)
    deadman: Output | None = None  # the dead-man one-shot's square wave
    # The read-backs of the copper (hal/circuit.py): the lid's power contact, active while
    # it is closed; the driver's own nSLEEP pin, active while it is high.
    power_contact: Input | None = None
    sleep_sense: Input | None = None
    rotator_contact: Input | None = None  # the rotator's full-open contact, active if closed
    # The driver's inputs read back at the Pi's own pads (``hal.circuit.PAD_CHECKED``): by
    # config key, True where the pin reads high, whatever it is driven to. None: the pin
    # library cannot read an output's pad.
    input_pads: Callable[[], dict[str, bool]] | None = field(default=None, repr=False)
    simulated: bool = False
    name: str = "board"
    # The wiring the board was built on (``build_board``), for what lists the pins by their
    # config names; None: a board put together part by part.
    pins: Pins | None = None
    # The pin library's threads that deliver the inputs' callbacks (lgpio's notification
    # thread, pigpio's, the native factory's); none where callbacks run on the thread that
    # moved the pin (mock pins). The firmware's watchdog stops while any of them is dead.
    pin_threads: Callable[[], list[threading.Thread]] = field(default=list, repr=False)
    # Told (on the pin library's thread) when a subscriber raised, after the board has
    # driven itself safe: the actuators' owner sets it. It must not raise either.
    on_callback_error: Callable[[BaseException, str], None] | None = field(default=None,
                                                                          repr=False)
    _closed: bool = field(default=False, repr=False)

    def drive_safe(self) -> list[tuple[str, Exception]]:
        """Drive every actuator to its safe level in ``SAFE_ORDER``, trying every part even
        when one fails; never raises. Returns what failed: (the part, its exception)."""
        failed: list[tuple[str, Exception]] = []
        for part, _ in SAFE_ORDER:
            device = getattr(self, part)
            if device is None:
                continue
            try:
                if part == "motor":
                    device.stop(brake=False)
                else:
                    device.off()
            except Exception as exc:  # each pin library raises its own types
                failed.append((part, exc))
        return failed

    def safe(self) -> None:
        """``drive_safe``, raising a ``HardwareError`` that names every part that failed."""
        failed = self.drive_safe()
        if failed:
            raise HardwareError("could not drive safe: " + _named(failed))

    def callback_failed(self, exc: BaseException, where: str) -> None:
        """A subscriber raised on the pin library's thread: every actuator safe first, then
        ``on_callback_error``. Never raises, so the pin library's thread lives on."""
        try:
            for part, error in self.drive_safe():
                log.error("%s: driving %s safe failed: %s", self.name, part, error)
            hook = self.on_callback_error
            if hook is None:
                log.error("%s: a callback of %s raised; actuators made safe", self.name, where,
                          exc_info=exc)
            else:
                hook(exc, where)
        except Exception:  # the report itself failed: the pins are already safe
            log.exception("%s: reporting a failed callback of %s failed", self.name, where)

    def levels(self) -> dict[int, float]:
        """Every pin of every part that can tell (``PinLevels``), by BCM number: the
        outputs first, then the inputs, each in the order of the fields above."""
        parts = [getattr(self, f.name) for f in fields(self)]
        found = [p for p in parts if isinstance(p, PinLevels)]
        out: dict[int, float] = {}
        for part in [p for p in found if not isinstance(p, Input)] + \
                [p for p in found if isinstance(p, Input)]:
            out.update(part.levels())
        return out

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for part, exc in self.drive_safe():  # close every part whatever failed
            log.error("%s: driving %s safe before closing failed: %s", self.name, part, exc)
        failed: list[tuple[str, Exception]] = []
        for name in ("button", "lid_closed", "lid_open", "exit_beam", "home", "yellow_back",
                     "motor", "motor_enable", "rotator", "amp", "led", "lid_closed_nc",
                     "deadman", "power_contact", "sleep_sense", "rotator_contact"):
            part = getattr(self, name)
            if part is None:
                continue
            try:  # every part closed, whatever one of them raised
                part.close()
            except Exception as exc:  # each pin library raises its own types
                failed.append((name, exc))
        if failed:
            raise HardwareError(f"{self.name}: closing failed: " + _named(failed))


def _named(failed: list[tuple[str, Exception]]) -> str:
    """What failed, part by part: ``part: Type: message; ...``."""
    return "; ".join(f"{part}: {type(exc).__name__}: {exc}" for part, exc in failed)
