"""The one owner of the actuators: every motor, rotator and amplifier command goes through here.

The lid interlock lives here and nowhere else: a motor run is checked against the
lid-closed pin itself at the moment it is asked for, and ``lid_left`` stops the motor on
the first edge of the lid leaving closed, before any debounce or state machine sees it.
The firmware shell, the console's debug runs (through the state machine) and the
self-test's pulses all come through one ``Actuators``; nothing else calls the motor or
rotator adapters.
"""

from __future__ import annotations

import logging
import threading

from hal.base import Board

log = logging.getLogger(__name__)


class Actuators:
    """Motor, rotator and amplifier of one board, with the interlock checked on every run."""

    def __init__(self, board: Board, brake: bool = True) -> None:
        self.board = board
        self.brake = brake
        self.refusals = 0  # motor runs refused because the lid pin read open
        # Stops may come from a pin library's thread (the interlock); runs from the reactor.
        self._lock = threading.Lock()

    # -- the shooter motor --

    @property
    def lid_closed(self) -> bool:
        """What the lid-closed switch reads right now (the pin, not a debounced copy)."""
        return self.board.lid_closed.is_active

    def run_motor(self, speed: float) -> bool:
        """Run the roller at ``speed`` if the lid pin reads closed; False (motor stopped) if not."""
        with self._lock:
            if not self.board.lid_closed.is_active:
                self.refusals += 1
                self.board.motor.stop(brake=self.brake)
                return False
            self.board.motor.forward(speed)
            return True

    def stop_motor(self, brake: bool | None = None) -> None:
        with self._lock:
            self.board.motor.stop(brake=self.brake if brake is None else brake)

    def lid_left(self) -> None:
        """The interlock: the lid-closed switch opened. Called on the very first edge."""
        if self.board.motor.speed > 0:
            self.stop_motor()

    @property
    def motor_speed(self) -> float:
        return self.board.motor.speed

    # -- driver power --

    def power(self, awake: bool) -> None:
        """The H-bridge driver on (awake) or off with the motor coasting (asleep)."""
        if awake:
            self.board.motor_enable.on()
        else:
            self.stop_motor(brake=False)
            self.board.motor_enable.off()

    def driver_on(self) -> bool:
        return self.board.motor_enable.is_active

    # -- the cartridge rotator --

    def rotator(self, how: str, speed: float = 1.0) -> None:
        """Turn the cartridge ``ahead`` or ``back`` at ``speed``, ``brake`` it, or let it
        go (``off``: it coasts). Braking and slow turns need ``pins.rotator_in2``."""
        r = self.board.rotator
        match how:
            case "ahead":
                r.forward(speed)
            case "back":
                r.back(speed)
            case "brake":
                r.brake()
            case "off":
                r.off()
            case _:
                raise ValueError(f"rotator: unknown turn {how!r}")

    @property
    def rotating(self) -> bool:
        return self.board.rotator.is_active

    # -- the amplifier (the cue player switches it through ``amp``) --

    @property
    def amp(self) -> _Amp:
        return _Amp(self.board)

    # -- everything --

    def safe(self) -> None:
        """Motor coasting, driver off, rotator off: the state a fault or a stop leaves."""
        with self._lock:
            errors = []
            for part in (lambda: self.board.motor.stop(brake=False),
                         self.board.motor_enable.off, self.board.rotator.off):
                try:
                    part()
                except Exception as exc:  # keep going: every part that can be made safe is
                    errors.append(exc)
            if errors:
                raise errors[0]


class _Amp:
    """The amplifier's enable pin, as the cue player switches it."""

    __slots__ = ("_board",)

    def __init__(self, board: Board) -> None:
        self._board = board

    @property
    def is_active(self) -> bool:
        return self._board.amp.is_active

    def on(self) -> None:
        self._board.amp.on()

    def off(self) -> None:
        self._board.amp.off()

    def close(self) -> None:
        """The board closes the pin; the player only lets go."""
