"""Small interfaces between the firmware and its hardware.

Inputs report ``True`` when active: button pressed, lid closed / fully open, a card
blocking the exit beam, the cartridge at a home detent, the yellow half at the back.
Callbacks given to ``on_change`` may arrive on any thread; the wiring posts them to
the reactor before anything else happens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

NEVER = float("inf")  # a wake time that never comes


class HalError(Exception):
    """Root of the errors the hardware layer raises on purpose."""


class HardwareError(HalError, RuntimeError):
    """A pin factory or device could not start; the message says what to do."""


class Scheduler(Protocol):
    """The clock the simulated launcher runs on: a reactor's timer interface.

    A timer callback gets the event time and returns its next wake time, or ``NEVER``.
    """

    def monotonic(self) -> float: ...
    def register_timer(self, callback: Callable[[float], float], waketime: float = NEVER,
                       name: str = "") -> Any: ...
    def update_timer(self, timer: Any, waketime: float) -> None: ...
    def unregister_timer(self, timer: Any) -> None: ...


@dataclass(frozen=True)
class Pins:
    """BCM pin numbers of every part; the ``OPTIONAL`` ones may be None (not wired).

    ``exit_beam`` None: no beam fitted. ``rotator_in2`` None: the gear motor has one input
    (a MOSFET, or an H-bridge channel with its second input grounded). ``lid_closed_nc``
    None: the lid switch's sensing contact is single (no NC contact to cross-check).
    ``deadman`` None: no dead-man one-shot holds the driver awake. ``power_contact_sense``
    None: no read-back of the lid's power contact; ``sleep_sense`` None: no read-back of
    the driver's nSLEEP (hal/circuit.py has what each is wired to).
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

    OPTIONAL: ClassVar[tuple[str, ...]] = ("exit_beam", "rotator_in2", "lid_closed_nc",
                                           "deadman", "power_contact_sense", "sleep_sense")


@runtime_checkable
class Input(Protocol):
    @property
    def is_active(self) -> bool: ...
    def on_change(self, callback: Callable[[bool], None] | None) -> None: ...
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
    """The shooter motor on an H-bridge."""

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
    def off(self) -> None: ...  # let go: the motor coasts
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
    motor_enable: Output  # H-bridge nSLEEP
    rotator: Rotator
    amp: Output
    led: Output
    lid_closed_nc: Input | None = None  # active when the lid is NOT closed (the NC contact)
    deadman: Output | None = None  # the dead-man charge pump's square wave
    simulated: bool = False
    name: str = "board"
    _closed: bool = field(default=False, repr=False)

    def safe(self) -> None:
        """Drive every actuator to its safe level: the driver asleep first (its outputs open
        at once, whatever the inputs), then both channels' inputs low and the dead-man off."""
        self.motor_enable.off()
        self.motor.stop(brake=False)
        self.rotator.off()
        if self.deadman is not None:
            self.deadman.off()

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
        self.safe()
        parts = (self.button, self.lid_closed, self.lid_open, self.exit_beam, self.home,
                 self.yellow_back, self.motor, self.motor_enable, self.rotator, self.amp,
                 self.led, self.lid_closed_nc, self.deadman)
        for part in parts:
            if part is not None:
                part.close()
