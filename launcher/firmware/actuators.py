"""The one owner of the actuators: every motor, rotator, driver and amplifier command.

Safety that holds whatever the event loop is doing lives here, and nowhere else:

- **The lid interlocks.** A roller run is checked against the lid-closed contact (and its
  NC twin, when wired) at the moment it is asked for; a rotator turn against the
  lid-fully-open switch. ``lid_left`` and ``lid_left_full`` are called on the pin
  library's own thread, on the first edge, before anything is posted to the reactor.
- **Leases.** Every drive (a roller run, a rotator turn or brake) holds only while the
  reactor renews it (``_tick``, every quarter lease). A guard thread of its own
  (``start_guard``) ends any drive whose lease has lapsed: a reactor that hangs, spins or
  is starved stops the roller within one lease, and ``on_lapse`` reports it.
- **A driver that sleeps.** nSLEEP is high only while a channel is driven or braking:
  after a roller stop the brake holds ``motor.brake_ms``, then both inputs go low and the
  driver sleeps. Going idle drops nSLEEP first, so the outputs open before any input moves.
- **The dead-man** (``pins.deadman``): a square wave toggled only by the reactor's tick
  while the driver is awake; a charge pump turns it into nSLEEP (hardware/power.md), so a
  loop that stops, whatever stopped it, lets the driver fall asleep in copper.

The firmware shell, the console's debug runs (through the state machine) and the
self-test all come through one ``Actuators``; nothing else calls the motor or rotator.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Protocol

from hal.base import Board
from launcher.core.config import Motor

log = logging.getLogger(__name__)

NEVER = float("inf")
DEADMAN_HALF_PERIOD = 0.01  # s: the dead-man square wave toggles this often (50 Hz)

# What a channel is doing. RUN (driven) and HOLD (a brake the machine asked for) last one
# lease unless the reactor renews them; BRAKE is a stop's brake, which ends by itself after
# ``motor.brake_ms``. IDLE: inputs low (the motor coasts).
IDLE, RUN, HOLD, BRAKE = "idle", "run", "hold", "brake"


class Clock(Protocol):
    """The part of the reactor the actuators use: its clock and its timers."""

    def monotonic(self) -> float: ...
    def register_timer(self, callback: Callable[[float], float], waketime: float = NEVER,
                       name: str = "") -> object: ...
    def update_timer(self, timer: object, waketime: float) -> None: ...


class Actuators:
    """Roller, rotator, driver sleep, dead-man and amplifier of one board."""

    def __init__(self, board: Board, motor: Motor, reactor: Clock) -> None:
        self.board = board
        self.motor = motor
        self.reactor = reactor
        self._clock = reactor.monotonic  # read from the guard thread too: it is only a clock
        self.refusals = 0  # runs and turns refused because a lid switch said no
        self.lapses = 0  # drives ended by the guard: the reactor had stopped renewing them
        self.wakes = 0  # times the driver was woken from sleep
        # Called (on the guard thread) when a lease lapses, with what lapsed.
        self.on_lapse: Callable[[str], None] | None = None
        # Pin writes come from the reactor, the pin library's thread and the guard thread.
        self._lock = threading.RLock()
        self._roller, self._roller_until = IDLE, NEVER
        self._turn, self._turn_until = IDLE, NEVER
        self._disabled = False
        self._deadman_level = False
        self._tick_timer = reactor.register_timer(self._tick, NEVER, "actuators.tick")
        self._guard: threading.Thread | None = None
        self._guard_wake = threading.Event()
        self._guard_stop = False

    # -- what the lid switches say (the pins, not a debounced copy) --

    @property
    def lid_closed(self) -> bool:
        """The lid-closed contact reads closed (and its NC twin, when wired, open)."""
        b = self.board
        return b.lid_closed.is_active and not (b.lid_closed_nc is not None
                                               and b.lid_closed_nc.is_active)

    @property
    def lid_full(self) -> bool:
        return self.board.lid_open.is_active

    # -- the shooter motor --

    def run_motor(self, speed: float) -> bool:
        """Run the roller at ``speed`` for one lease if the lid reads closed; False if not."""
        with self._lock:
            if self._disabled or not self.lid_closed:
                self.refusals += 1
                self._roller_idle()
                return False
            self._wake_driver()
            self.board.motor.forward(speed)
            self._roller, self._roller_until = RUN, self._clock() + self.motor.lease
            self._kick()
            return True

    def stop_motor(self) -> None:
        """Stop the roller: brake for ``motor.brake_ms`` then coast and sleep (or coast now)."""
        with self._lock:
            if self._roller is RUN and self.motor.brake:
                self.board.motor.stop(brake=True)
                self._roller, self._roller_until = BRAKE, self._clock() + self.motor.brake_time
                self._kick()
            elif self._roller is RUN:
                self._roller_idle()

    def lid_left(self) -> None:
        """The roller's interlock: the lid left closed. Any thread; called on the first edge.

        Everything stops and the driver sleeps at once, braking or not.
        """
        with self._lock:
            self._all_idle()

    @property
    def motor_speed(self) -> float:
        return self.board.motor.speed

    @property
    def roller(self) -> str:
        """``idle``, ``run`` or ``brake``."""
        return self._roller

    # -- the cartridge rotator --

    def rotator(self, how: str, speed: float = 1.0) -> bool:
        """Turn the cartridge ``ahead`` or ``back`` at ``speed``, ``brake`` it (held while
        the reactor renews it), ``stop`` it as the interlock does, or let it go (``off``:
        it coasts). A turn needs the lid fully open: False if it is not. Braking and slow
        turns need ``pins.rotator_in2``."""
        r = self.board.rotator
        with self._lock:
            match how:
                case "off":
                    self._turn_idle()
                case "stop":
                    self._stop_turn()
                case "brake":
                    self._wake_driver()
                    r.brake()
                    self._turn, self._turn_until = HOLD, self._clock() + self.motor.lease
                    self._kick()
                case "ahead" | "back":
                    if self._disabled or not self.lid_full:
                        self.refusals += 1
                        self._turn_idle()
                        return False
                    self._wake_driver()
                    if how == "ahead":
                        r.forward(speed)
                    else:
                        r.back(speed)
                    self._turn, self._turn_until = RUN, self._clock() + self.motor.lease
                    self._kick()
                case _:
                    raise ValueError(f"rotator: unknown turn {how!r}")
            return True

    def lid_left_full(self) -> None:
        """The rotator's interlock: the lid left fully open. Any thread; the first edge."""
        with self._lock:
            self._stop_turn()

    @property
    def rotating(self) -> bool:
        return self.board.rotator.is_active

    @property
    def turn(self) -> str:
        """``idle``, ``run`` (turning), ``hold`` (braked at home) or ``brake`` (stopping)."""
        return self._turn

    # -- driver power --

    def driver_on(self) -> bool:
        return self.board.motor_enable.is_active

    def idle(self) -> None:
        """Both channels let go and the driver asleep (the unit going to sleep, a fault)."""
        with self._lock:
            self._all_idle()

    # -- leases: renewed by the reactor, enforced by the guard thread --

    def expire(self, now: float) -> float:
        """End every drive whose time is up at ``now``; the next deadline (or NEVER).

        A roller brake that has held its time is the normal end of a stop. A run, turn or
        rotator brake whose lease has lapsed means the reactor stopped renewing it: it is
        stopped, counted and reported through ``on_lapse``.
        """
        lapsed = []
        with self._lock:
            if self._roller is not IDLE and now >= self._roller_until:
                if self._roller is RUN:
                    lapsed.append("roller run")
                    self.board.motor.stop(brake=self.motor.brake)
                    if self.motor.brake:
                        self._roller = BRAKE
                        self._roller_until = now + self.motor.brake_time
                    else:
                        self._roller_idle()
                else:
                    self._roller_idle()
            if self._turn is not IDLE and now >= self._turn_until:
                if self._turn is not BRAKE:
                    lapsed.append(f"rotator {'turn' if self._turn is RUN else 'brake'}")
                self._turn_idle()
            deadline = min(self._roller_until, self._turn_until)
        for what in lapsed:
            self.lapses += 1
            log.error("%s lapsed: the reactor did not renew it within %.0f ms; stopped", what,
                      self.motor.lease * 1000)
            if self.on_lapse is not None:
                self.on_lapse(what)
        return deadline

    def _tick(self, eventtime: float) -> float:
        """The reactor's renewal: every quarter lease (and each dead-man half period)
        while a channel is driven or braking."""
        with self._lock:
            until = eventtime + self.motor.lease
            if self._roller is RUN:
                self._roller_until = until
            if self._turn is RUN or self._turn is HOLD:
                self._turn_until = until
            deadline = self.expire(eventtime)
            if self._roller is IDLE and self._turn is IDLE:
                return NEVER
            nxt = eventtime + self.motor.lease / 4
            if self.board.deadman is not None:
                self._deadman_level = not self._deadman_level
                if self._deadman_level:
                    self.board.deadman.on()
                else:
                    self.board.deadman.off()
                nxt = min(nxt, eventtime + DEADMAN_HALF_PERIOD)
            return min(nxt, deadline)

    def _kick(self) -> None:
        """A drive began: make sure the reactor's tick and the guard are watching it."""
        if self._tick_timer.waketime == NEVER:  # type: ignore[attr-defined]
            self.reactor.update_timer(self._tick_timer, self._clock())
        self._guard_wake.set()

    def start_guard(self) -> None:
        """Start the guard thread (a real process; tests on a manual reactor call expire)."""
        if self._guard is not None:
            return
        self._guard_stop = False
        self._guard = threading.Thread(target=self._guard_loop, name="actuators-guard",
                                       daemon=True)
        self._guard.start()

    def stop_guard(self) -> None:
        guard, self._guard = self._guard, None
        if guard is None:
            return
        self._guard_stop = True
        self._guard_wake.set()
        guard.join()

    def _guard_loop(self) -> None:
        while not self._guard_stop:
            self._guard_wake.clear()
            deadline = self.expire(self._clock())
            timeout = None if deadline == NEVER else max(0.0, deadline - self._clock())
            self._guard_wake.wait(timeout)

    # -- the amplifier (the cue player switches it through ``amp``) --

    @property
    def amp(self) -> _Amp:
        return _Amp(self.board)

    # -- everything --

    def safe(self) -> None:
        """Driver asleep first, then every input low: the state a fault or a stop leaves.

        Every part is tried even when one fails; the first failure is raised at the end.
        """
        with self._lock:
            self._roller, self._roller_until = IDLE, NEVER
            self._turn, self._turn_until = IDLE, NEVER
            errors = []
            b = self.board
            parts = [b.motor_enable.off, lambda: b.motor.stop(brake=False), b.rotator.off]
            if b.deadman is not None:
                parts.append(b.deadman.off)
            for part in parts:
                try:
                    part()
                except Exception as exc:  # keep going: every part that can be made safe is
                    errors.append(exc)
            if errors:
                raise errors[0]

    def shutdown(self) -> None:
        """Safe, and refusing every run and turn from now on (until ``enable``)."""
        with self._lock:
            self._disabled = True
            self.safe()
        self.stop_guard()

    def enable(self) -> None:
        with self._lock:
            self._disabled = False

    # -- inside the lock --

    def _wake_driver(self) -> None:
        if not self.board.motor_enable.is_active:
            self.wakes += 1
            self.board.motor_enable.on()

    # Each idle drops nSLEEP first when the other channel is idle too, so the outputs open
    # before any input moves.

    def _roller_idle(self) -> None:
        self._roller, self._roller_until = IDLE, NEVER
        self._sleep_if_idle()
        self.board.motor.stop(brake=False)

    def _turn_idle(self) -> None:
        self._turn, self._turn_until = IDLE, NEVER
        self._sleep_if_idle()
        self.board.rotator.off()

    def _all_idle(self) -> None:
        self._roller, self._roller_until = IDLE, NEVER
        self._turn_idle()
        self.board.motor.stop(brake=False)

    def _stop_turn(self) -> None:
        """A turn stopped at once: braked for ``motor.brake_ms`` where it can be, else let go."""
        if self._turn is not RUN:
            return
        if self.board.rotator.can_brake:
            self.board.rotator.brake()
            self._turn, self._turn_until = BRAKE, self._clock() + self.motor.brake_time
            self._guard_wake.set()  # maybe on the pin thread: the tick is armed (it was turning)
        else:
            self._turn_idle()

    def _sleep_if_idle(self) -> None:
        if self._roller is IDLE and self._turn is IDLE:
            if self.board.motor_enable.is_active:
                self.board.motor_enable.off()
            if self.board.deadman is not None and self._deadman_level:
                self._deadman_level = False
                self.board.deadman.off()


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
