"""The one owner of the actuators: every motor, rotator, driver and amplifier command.

Safety that holds whatever the event loop is doing lives here, and nowhere else. Each
layer stands on its own, so that one fault (a pin write that raises, a dead thread, a lost
edge, a hung loop) takes out one layer, never two:

- **The lid interlocks, on the pin library's thread.** ``Actuators`` subscribes to the lid
  pins itself when it is made: the lid leaving closed (or the NC twin closing) drives every
  actuator safe, and the lid leaving fully open (or reaching closed) stops a turn, on the
  first edge, before anything is posted to the reactor. Whoever builds an ``Actuators``
  (the firmware, the self-test) gets them; nothing else wires them.
- **Leases, enforced by a guard thread.** Every drive (a roller run, a rotator turn or
  brake) holds only while the reactor renews it (``_tick``, every quarter lease), and only
  while the lid pins still allow it: each renewal reads them, so a lost edge costs at
  most a quarter lease. The guard thread (``start_guard``) checks every drive on its own
  (``expire``), reading the same pins: a reactor that hangs, spins or is starved stops the
  roller within one lease. An expired lease is never renewed.
- **Commands check the lid.** A roller run is checked against the lid-closed contact (and
  its NC twin, when wired) when it is asked for, and again after its pins are written; a
  rotator turn or brake against the lid-fully-open switch.
- **A driver that sleeps.** nSLEEP is high only while a channel of the driver is driven or
  braking; going idle drops it first, so the outputs open before any input moves. A
  rotator of its own (``rotator.driver = "own"``: a MOSFET, or a driver of its own) never
  wakes the roller's driver.
- **The dead-man** (``pins.deadman``): a square wave toggled only by the reactor's tick
  while the driver is awake; a one-shot turns it into nSLEEP (hardware/power.md), so a
  loop that stops, whatever stopped it, lets the driver fall asleep in copper.
- **The copper, checked** (``copper_check_soon``, ``start_checks``): nSLEEP's, the power
  contacts' and the driver inputs' read-backs, by ``launcher.firmware.copper`` (one
  ``Copper`` each, ``actuators.copper``), reported through ``on_copper``.

**No stop waits for anyone.** One thread commands (the reactor); any thread may stop.
There is no lock: a stop (``lid_left``, ``lid_left_full``, ``expire``, ``safe``) writes its
pins first, unconditionally and whatever the state says, then records the state; a stop of
every channel at once is the one go-safe sequence, ``_all_safe``. It marks the channel
first (a new epoch), and every command on the reactor looks at the epoch after its own pin
writes: a command that raced a stop undoes itself. A stop on the pin or guard
thread never raises: a failure drives the board safe and is reported (``on_fault``) as a
bug, whichever thread it happened on.

The firmware shell, the console's debug runs (through the state machine) and the
self-test all come through one ``Actuators``; nothing else calls the motor or rotator.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable

from hal.base import NEVER, Board, Scheduler, Unsubscribe
from launcher.core.config import Motor, Rotator
from launcher.firmware.copper import CONTACT_SETTLE as CONTACT_SETTLE  # for the callers
from launcher.firmware.copper import DEADMAN_HALF_PERIOD, SLEEP_SETTLE, Copper

log = logging.getLogger(__name__)

GUARD_BEAT = 0.5  # s: the guard thread wakes at least this often, driving or not
# s: a guard that has not woken for this long is a layer down. Judged by time, not by wakes
# counted between two watchdog checks: those come every WatchdogSec / 2, which may be no
# longer than a beat (WatchdogSec = 1 s), and a late wake then looked like a dead guard.
GUARD_STALE = 4 * GUARD_BEAT

# What a channel is doing. RUN (driven) lasts one lease unless the reactor renews it;
# BRAKE (the motor shorted by a stop) ends by itself after ``motor.brake_ms``; HOLD (the
# rotator braked at home, as the machine asked) after ``rotator.brake_ms``, or at once when
# the lid leaves fully open. IDLE: inputs low (the motor coasts).
IDLE, RUN, BRAKE, HOLD = "idle", "run", "brake", "hold"


class LayerDown(RuntimeError):
    """A drive was asked for while a thread one of its safety layers runs on is dead."""


class Actuators:
    """Roller, rotator, driver sleep, dead-man and amplifier of one board."""

    def __init__(self, board: Board, motor: Motor, reactor: Scheduler,
                 rotator: Rotator | None = None) -> None:
        self.board = board
        self.motor = motor
        self.rotator_settings = rotator or Rotator(brake=motor.brake_time, creep_speed=0.0)
        self.reactor = reactor
        self._clock = reactor.monotonic  # read from the other threads too: it is only a clock
        self.refusals = 0  # runs and turns refused because a lid switch said no
        self.wakes = 0  # times the driver was woken from sleep
        self._lapses: list[str] = []  # drives the guard or a late tick ended (append: atomic)
        # Told, from whichever thread found it, of a bug or a lapse: a one-line detail that
        # names the thread. The firmware makes it an ``internal`` fault.
        self.on_fault: Callable[[str], None] | None = None
        # Told, from whichever thread found it, that a drive was stopped because a lid pin
        # read against it with no edge seen: "closed" (roller) or "full" (rotator).
        self.on_interlock: Callable[[str], None] | None = None
        # Told (on the reactor thread) that a read-back says the copper is not as driven:
        # the fault code ("driver_sleep", "power_contact") and what was read.
        self.on_copper: Callable[[str, str], None] | None = None
        # Told (on the reactor thread) that a check passed: where (the lid at rest, "full",
        # "closed" or "ajar"; or "start_test") and the fault codes whose check it was. What
        # proves a latched fault gone.
        self.on_checked: Callable[[str, tuple[str, ...]], None] | None = None
        self._roller, self._roller_until = IDLE, NEVER
        self._turn, self._turn_until = IDLE, NEVER
        # A new object each time a stop takes a channel (before its pin writes).
        self._roller_epoch = self._turn_epoch = object()
        # The deadline of each channel's last lapsed lease, and the lock that guards it (no
        # pin is written under it): the reactor and the guard can find one lapse at once.
        self._lapsed_leases: dict[str, float] = {}
        self._taking = threading.Lock()
        self._disabled = False
        self._deadman_level = False
        self._tick_timer = reactor.register_timer(self._tick, NEVER, "actuators.tick")
        self.copper = Copper(self, reactor)  # the read-backs, and nSLEEP's start test
        self._woke_at = -NEVER  # when the driver was last woken
        self._guard: threading.Thread | None = None
        self._guard_wake = threading.Event()
        self._guard_stop = False
        self.guard_loops = 0  # the guard's heartbeat: one a wake-up (at least 1 / GUARD_BEAT s)
        self.guard_woke = self._clock()  # when it last woke (the reactor's clock)
        self._reported: set[str] = set()  # tracebacks logged once each
        board.on_callback_error = self._callback_failed
        self._unsubscribe: list[Unsubscribe] = [
            board.lid_closed.subscribe(self._lid_closed_changed),
            board.lid_open.subscribe(self._lid_full_changed)]
        if board.lid_closed_nc is not None:
            self._unsubscribe.append(board.lid_closed_nc.subscribe(self._lid_nc_changed))

    @property
    def lapses(self) -> int:
        """Drives ended because the reactor stopped renewing them."""
        return len(self._lapses)

    # -- what the lid switches say (the pins, not a debounced copy) --

    @property
    def lid_closed(self) -> bool:
        """The lid-closed contact reads closed (and its NC twin, when wired, open)."""
        b = self.board
        return b.lid_closed.is_active and not (b.lid_closed_nc is not None
                                               and b.lid_closed_nc.is_active)

    @property
    def lid_full(self) -> bool:
        """Fully open: the full-open switch reads closed and the lid-closed contact open."""
        return self.board.lid_open.is_active and not self.board.lid_closed.is_active

    # -- the pin library's thread --

    def _lid_closed_changed(self, active: bool) -> None:
        if active:
            self.lid_left_full()  # a turn never goes on with the lid shut
        else:
            self.lid_left()

    def _lid_nc_changed(self, active: bool) -> None:
        if active:  # the NC contact closed: the lid is leaving closed
            self.lid_left()

    def _lid_full_changed(self, active: bool) -> None:
        if not active:
            self.lid_left_full()

    def _callback_failed(self, exc: BaseException, where: str) -> None:
        """A subscriber raised on the pin library's thread (the board is safe already)."""
        self._failed(exc, f"the pin callback thread, {where}", drive=False)

    # -- the shooter motor (reactor thread) --

    def run_motor(self, speed: float) -> bool:
        """Run the roller at ``speed`` for one lease if the lid reads closed; False if not.
        ``LayerDown`` if a thread a layer of the interlock runs on is dead."""
        self._layers_up()
        if self._disabled or not self.lid_closed:
            self.refusals += 1
            self._roller_idle()
            return False
        epoch = self._roller_epoch
        # The lease before the pins: a reactor that hangs from here on is the guard's.
        self._roller, self._roller_until = RUN, self._clock() + self.motor.lease
        self._kick()
        self._wake_driver()
        self.board.motor.forward(speed)
        if self._roller_epoch is not epoch or not self.lid_closed:
            # A stop came in while the pins were written, or the lid left before its edge
            # was delivered: it stays stopped.
            self.refusals += 1
            self._roller_idle()
            return False
        return True

    def stop_motor(self) -> None:
        """Stop the roller: brake for ``motor.brake_ms`` then coast and sleep (or coast now).
        The pins are written whatever the roller was doing."""
        if self._roller is IDLE or not self.motor.brake:
            self._roller_idle()
            return
        epoch = self._roller_epoch
        self.board.motor.stop(brake=True)
        if self._roller is RUN:
            self._roller, self._roller_until = BRAKE, self._clock() + self.motor.brake_time
            self._kick()
        if self._roller_epoch is not epoch:
            self._roller_idle()  # a stop came in meanwhile: off, as it left it

    def lid_left(self) -> None:
        """The roller's interlock: the lid left closed. Any thread; on the first edge.

        Every actuator is driven safe at once (the driver asleep first), braking or not.
        """
        failed = self._all_safe()
        if failed:
            self._pin_failures(failed, "the lid stop")

    @property
    def motor_speed(self) -> float:
        return self.board.motor.speed

    @property
    def roller(self) -> str:
        """``idle``, ``run`` or ``brake``."""
        return self._roller

    # -- the cartridge rotator --

    def rotator(self, how: str, speed: float = 1.0) -> bool:
        """Turn the cartridge ``ahead`` or ``back`` at ``speed``, ``brake`` it (for
        ``rotator.brake_ms``, then it is let go), ``stop`` it as the interlock does, or let
        it go (``off``: it coasts). A turn or a brake needs the lid fully open: False if it
        is not. Braking and slow turns need ``pins.rotator_in2``."""
        match how:
            case "off":
                self._turn_idle()
                return True
            case "stop":
                self._stop_turn()
                return True
            case "brake" | "ahead" | "back":
                pass
            case _:
                raise ValueError(f"rotator: unknown turn {how!r}")
        self._layers_up()
        if self._disabled or not self.lid_full:
            self.refusals += 1
            self._turn_idle()
            return False
        r, epoch = self.board.rotator, self._turn_epoch
        if how == "brake":
            self._turn, self._turn_until = HOLD, self._clock() + self.rotator_settings.brake
        else:
            self._turn, self._turn_until = RUN, self._clock() + self.motor.lease
        self._kick()
        if self.shares_driver:
            self._wake_driver()
        if how == "brake":
            r.brake()
        elif how == "ahead":
            r.forward(speed)
        else:
            r.back(speed)
        if self._turn_epoch is not epoch or not self.lid_full:
            self.refusals += 1
            self._turn_idle()
            return False
        return True

    def lid_left_full(self) -> None:
        """The rotator's interlock: the lid left fully open. Any thread; the first edge."""
        self._stop_turn()

    @property
    def shares_driver(self) -> bool:
        """The rotator is the roller's driver's second channel (they share nSLEEP)."""
        return self.rotator_settings.driver == "shared"

    @property
    def rotating(self) -> bool:
        return self.board.rotator.is_active

    @property
    def turn(self) -> str:
        """``idle``, ``run`` (turning), ``hold`` (braked at home) or ``brake`` (stopping)."""
        return self._turn

    # -- driver power --

    def idle(self) -> None:
        """Both channels let go and the driver asleep (the unit going to sleep, a fault)."""
        self.lid_left()

    # -- leases: renewed by the reactor, enforced by the guard thread --

    def expire(self, now: float) -> float:
        """The guard's check at ``now``: end every drive whose time is up, or whose lid pin
        reads against it; the time of the next check (NEVER: nothing to watch).

        A brake that has held its time is the normal end of a stop. A run or turn whose
        lease has lapsed means the reactor stopped renewing it: it is stopped at once (the
        driver asleep), counted and reported through ``on_fault``.
        """
        try:
            self._check(now, renew=False)
        except Exception as exc:  # the guard never ends: safe, reported, and on it goes
            self._failed(exc, "the guard thread")
        return self._next_check(now)

    def _tick(self, eventtime: float) -> float:
        """The reactor's renewal: every quarter lease (and each dead-man half period)
        while a channel is driven or braking; nSLEEP's read-back checked with it."""
        self._check(eventtime, renew=True)
        if self._roller is IDLE and self._turn is IDLE:
            self.copper_check_soon(SLEEP_SETTLE)  # the driver must read asleep
            return NEVER
        if self.copper.woken_reads_low(eventtime, self._woke_at):
            return NEVER
        nxt = self._next_check(eventtime)
        if self.board.deadman is not None and self.board.motor_enable.is_active:
            self.deadman_edge()
            nxt = min(nxt, eventtime + DEADMAN_HALF_PERIOD)
        return nxt

    def _check(self, now: float, renew: bool) -> None:
        """Each channel: a lapsed lease ends it, a lid pin against it ends it, a brake
        that has held its time ends; with ``renew`` (the reactor) a run is renewed."""
        thread = "the reactor" if renew else "the guard thread"
        roller, until = self._roller, self._roller_until
        if roller is RUN:
            if now >= until:
                self._lapsed("roller run", thread, until, self._halt_roller)
            elif not self.lid_closed:
                self._halt_roller()
                self._interlock("closed")
            elif renew:
                self._roller_until = now + self.motor.lease
        elif roller is BRAKE and now >= until:
            self._roller_idle()
        turn, until = self._turn, self._turn_until
        if turn is RUN:
            if now >= until:
                self._lapsed("rotator turn", thread, until, self._halt_turn)
            elif not self.lid_full:
                self._halt_turn()
                self._interlock("full")
            elif renew:
                self._turn_until = now + self.motor.lease
        elif turn is not IDLE and (now >= until or (turn is HOLD and not self.lid_full)):
            self._halt_turn()  # a brake that has held its time; a hold the lid let go

    def _next_check(self, now: float) -> float:
        deadlines = [until for state, until in ((self._roller, self._roller_until),
                                                (self._turn, self._turn_until))
                     if state is not IDLE]
        if not deadlines:
            return NEVER
        # While anything is driven, the lid pins are read every quarter lease.
        return min(now + self.motor.lease / 4, *deadlines)

    def _lapsed(self, what: str, thread: str, until: float,
                halt: Callable[[], None]) -> None:
        """The lease of ``what`` due at ``until`` found lapsed on ``thread``: the drive is
        stopped, then counted and told by the first thread to find it. The reactor and the
        guard can both find one lapse while the first one's stop is still writing the pins
        (the state is recorded after them): the second writes the pins again, and is quiet.
        A lease is known by its deadline: a later drive's is later."""
        with self._taking:
            mine = self._lapsed_leases.get(what) != until
            self._lapsed_leases[what] = until
        try:
            halt()
        finally:  # counted and told even when the halt's writes failed (that is reported too)
            if mine:
                self._lapse(what, thread)

    def _lapse(self, what: str, thread: str) -> None:
        self._lapses.append(what)
        log.error("%s lapsed: the reactor did not renew it within %.0f ms; stopped (%s)",
                  what, self.motor.lease * 1000, thread)
        self._report(f"{what} lapsed: the reactor did not renew it in time "
                     f"(blocked or starved); stopped by {thread}")

    def _interlock(self, lid: str) -> None:
        log.warning("the lid reads not %s with no edge seen: %s stopped", lid,
                    "the roller" if lid == "closed" else "the turn")
        if self.on_interlock is not None:
            self.on_interlock(lid)

    def _kick(self) -> None:
        """A drive began: make sure the reactor's tick and the guard are watching it."""
        self._guard_wake.set()
        if self._tick_timer.waketime == NEVER:
            self.reactor.update_timer(self._tick_timer, self._clock())

    def start_guard(self) -> None:
        """Start the guard thread (a real process; tests on a manual reactor call expire)."""
        if self._guard is not None:
            return
        self._guard_stop = False
        self.guard_woke = self._clock()
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
            self.guard_loops += 1
            now = self.guard_woke = self._clock()
            self._guard_wake.clear()
            deadline = self.expire(now)
            self._guard_wake.wait(max(0.0, min(deadline - self._clock(), GUARD_BEAT)))

    @property
    def guarded(self) -> bool:
        """The guard thread was started (and not stopped)."""
        return self._guard is not None

    def dead_layers(self) -> list[str]:
        """The threads a layer of the interlock runs on that have ended: the guard (once
        started) and the pin library's callback threads. Empty: every one is alive. (A
        guard that lives but no longer wakes shows in ``guard_loops`` standing still.)"""
        dead = []
        guard = self._guard
        if guard is not None and not guard.is_alive():
            dead.append("the guard thread ended")
        dead += [f"the pin library's thread {t.name} ended"
                 for t in self.board.pin_threads() if not t.is_alive()]
        return dead

    def _layers_up(self) -> None:
        dead = self.dead_layers()
        if dead:
            self.safe()
            raise LayerDown("a safety layer is down: " + "; ".join(dead) + "; nothing runs")

    # -- the copper, read back (reactor thread): ``launcher.firmware.copper`` --

    def copper_check_soon(self, delay: float = 0.0) -> None:
        """Read the read-backs ``delay`` from now (once nothing is driven): at start, after
        a lid move (``CONTACT_SETTLE``), after ``clear``, after each drive."""
        self.copper.check_soon(delay)

    def start_checks(self) -> None:
        """The start's test of nSLEEP (wake it, then let it sleep; with the dead-man, by
        its wave), then the read-backs' check. Only with ``pins.sleep_sense`` wired."""
        self.copper.start()

    @property
    def at_rest(self) -> bool:
        """Both channels idle, and runs allowed: the copper may be read."""
        return self._roller is IDLE and self._turn is IDLE and not self._disabled

    def deadman_edge(self) -> None:
        """One edge of the dead-man's square wave."""
        deadman = self.board.deadman
        assert deadman is not None
        self._deadman_level = not self._deadman_level
        if self._deadman_level:
            deadman.on()
        else:
            deadman.off()

    def deadman_low(self) -> None:
        """The dead-man's wave stopped, low (its one-shot lets nSLEEP fall)."""
        if self.board.deadman is not None:
            self._deadman_level = False
            self.board.deadman.off()

    # -- the amplifier (the cue player switches it through ``amp``) --

    @property
    def amp(self) -> Amp:
        return Amp(self.board)

    # -- everything --

    def safe(self) -> list[tuple[str, Exception]]:
        """Driver asleep first, then every input low (``Board.drive_safe``), every part
        tried; the state after. Never raises: returns what could not be driven."""
        return self._all_safe()

    def _all_safe(self, drive: bool = True) -> list[tuple[str, Exception]]:
        """The one go-safe sequence of every stop of both channels: each channel taken (a
        new epoch, so a command that raced it undoes itself), then every pin written
        (``Board.drive_safe``, in ``SAFE_ORDER``; not with ``drive=False``: the board
        did it already), and only then the state recorded. Never raises: returns what
        could not be driven."""
        self._roller_epoch = self._turn_epoch = object()
        failed = self.board.drive_safe() if drive else []
        self._deadman_level = False
        self._roller, self._roller_until = IDLE, NEVER
        self._turn, self._turn_until = IDLE, NEVER
        return failed

    def shutdown(self) -> None:
        """Safe, and refusing every run and turn from now on (until ``enable``)."""
        self._disabled = True
        for part, exc in self.safe():
            log.error("shutting down: driving %s safe failed: %s", part, exc)
        self.stop_guard()

    def enable(self) -> None:
        self._disabled = False

    def close(self) -> None:
        """Shut down and let go of the lid pins (the board stays open)."""
        self.shutdown()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        if self.board.on_callback_error == self._callback_failed:
            self.board.on_callback_error = None

    # -- failures, from any thread --

    def _failed(self, exc: BaseException, thread: str, drive: bool = True) -> None:
        """A bug on ``thread``: every actuator safe first (unless the board already did
        it), the traceback logged once, then ``on_fault``. Never raises."""
        try:
            for part, error in self._all_safe(drive):
                log.error("driving %s safe failed: %s", part, error)
            detail = f"{thread}: {type(exc).__name__}: {exc}"
            if detail not in self._reported:
                self._reported.add(detail)
                log.error("internal error on %s; motors off\n%s", thread,
                          "".join(traceback.format_exception(exc)).rstrip())
            self._report(detail)
        except Exception:
            log.exception("reporting a failure on %s failed", thread)

    def _pin_failures(self, failed: list[tuple[str, Exception]], what: str) -> None:
        detail = f"{what} could not drive " + "; ".join(
            f"{part} ({type(exc).__name__}: {exc})" for part, exc in failed)
        log.error("%s", detail)
        self._report(detail)

    def _report(self, detail: str) -> None:
        hook = self.on_fault
        if hook is not None:
            try:
                hook(detail)
            except Exception:
                log.exception("reporting %r failed", detail)

    # -- one channel at a time (the stops write pins first, then the state) --

    def _wake_driver(self) -> None:
        if not self.board.motor_enable.is_active:
            self.wakes += 1
            self._woke_at = self._clock()
            self.board.motor_enable.on()

    def _driver_in_use(self, but: str) -> bool:
        """Whether the driver must stay awake for the other channel than ``but``."""
        if but == "roller":
            return self._turn is not IDLE and self.shares_driver
        return self._roller is not IDLE

    def _sleep_driver(self) -> None:
        self.board.motor_enable.off()
        self.deadman_low()

    def _roller_idle(self) -> None:
        """Coast: nSLEEP first when the rotator does not need it, then both inputs low."""
        try:
            if not self._driver_in_use("roller"):
                self._sleep_driver()
        finally:
            self.board.motor.stop(brake=False)
        self._roller, self._roller_until = IDLE, NEVER

    def _halt_roller(self) -> None:
        """A stop from any thread: the channel is taken (a new epoch) before its pins."""
        self._roller_epoch = object()
        self._roller_idle()

    def _turn_idle(self) -> None:
        try:
            if not self._driver_in_use("turn"):
                self._sleep_driver()
        finally:
            self.board.rotator.off()
        self._turn, self._turn_until = IDLE, NEVER

    def _halt_turn(self) -> None:
        self._turn_epoch = object()
        self._turn_idle()

    def _stop_turn(self) -> None:
        """A turn stopped at once, from any thread: braked for ``motor.brake_ms`` where it
        can be (the bridge awake: it was turning), else let go; idle, it is let go again."""
        self._turn_epoch = object()
        if self._turn is not RUN or not self.board.rotator.can_brake:
            self._turn_idle()
            return
        self.board.rotator.brake()
        self._turn, self._turn_until = BRAKE, self._clock() + self.motor.brake_time
        self._guard_wake.set()  # maybe on the pin thread: the tick is armed (it was turning)


class Amp:
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
