"""Wiring root: the imperative shell around the state machine.

``Launcher`` turns pin edges into machine events (debounced, on the reactor thread),
draws each press's luck, carries out the machine's commands through the actuator owner,
the cue player and the reactor, and tells its listeners (console, play screen, log) what
happened. A bug makes the board safe first, then becomes an ``internal`` fault, whichever
thread it happened on: the reactor's (``internal_fault``), the pin library's or the guard's
(the actuators report it), the state writer's; the fault's detail names the thread. The
board is given to it: whether it is real or simulated is decided above this layer
(``launcher.cli``), never here.
"""

from __future__ import annotations

import logging
import random
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from hal.base import Board, Output
from launcher.core import machine as m
from launcher.core.config import Settings
from launcher.core.profiles import Profile
from launcher.core.reactor import NEVER, Reactor, Timer
from launcher.core.store import Saved
from launcher.firmware import persistence
from launcher.firmware.actuators import CONTACT_SETTLE, GUARD_BEAT, GUARD_STALE, Actuators
from launcher.firmware.inputs import Inputs
from launcher.firmware.pairing import Pairing
from launcher.firmware.state import StateStore

log = logging.getLogger("launcher")

Listener = Callable[[str, dict[str, Any]], None]


class CueSink(Protocol):
    """What the shell needs from sound (``launcher.firmware.sound.CuePlayer`` is the real one)."""

    def play(self, name: str) -> None: ...
    def sleep(self) -> None: ...
    def wake(self) -> None: ...


# The blinking patterns that are not a fault's code: each one's half period (s).
BLINKS = {"busy": 0.1, "pairing": 0.5}


class LedDriver:
    """Status LED patterns on reactor time: solid, a fast or slow blink, off, or a blink
    code."""

    def __init__(self, led: Output, reactor: Reactor) -> None:
        self.led = led
        self.reactor = reactor
        self.pattern: Any = "off"
        self._step = 0
        self._timer = reactor.register_timer(self._tick, NEVER, "led")

    def set(self, pattern: Any) -> None:
        if pattern == self.pattern and pattern not in ("ready", "off"):
            return  # a blink goes on as it was: the same pattern again restarts nothing
        self.pattern = pattern
        self._step = 0
        if pattern == "ready":
            self.led.on()
            self.reactor.update_timer(self._timer, NEVER)
        elif pattern == "off":
            self.led.off()
            self.reactor.update_timer(self._timer, NEVER)
        else:
            self.reactor.update_timer(self._timer, self.reactor.monotonic())

    def _tick(self, eventtime: float) -> float:
        half = BLINKS.get(self.pattern)
        if half is not None:
            self._step ^= 1
            self._lit(self._step == 1)
            return eventtime + half
        # A fault code: n short blinks, then a pause, repeated.
        n = int(self.pattern)
        cycle = 2 * n + 4
        phase = self._step % cycle
        self._step += 1
        self._lit(phase < 2 * n and phase % 2 == 0)
        return eventtime + 0.25

    def _lit(self, on: bool) -> None:
        if on:
            self.led.on()
        else:
            self.led.off()


class _Fields:
    """An event's fields as its log line shows them (``k=v ...``), formatted only when a
    handler writes the line."""

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def __str__(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.data.items())


# The copper checks a unit can go without, and what then goes unseen (a warning at start).
UNCHECKED = (
    ("lid_closed_nc", "lid_closed_nc", "the lid switch's NC contact is not wired: a sensing "
     "contact shorted or stuck goes unseen until the lid opens (hardware/SAFETY.md)"),
    ("power_contact_sense", "power_contact", "the lid's power contact is not read back: a "
     "welded or pinched contact goes unseen"),
    ("sleep_sense", "sleep_sense", "nSLEEP is not read back: a driver held awake (a short, "
     "the one-shot stuck) goes unseen"),
    ("rotator_contact_sense", "rotator_contact", "the full-open contact in the rotator's lead "
     "is not read back: a welded or pinched one goes unseen"),
)


class Launcher:
    """The firmware running on one board."""

    def __init__(self, board: Board, reactor: Reactor, settings: m.MachineSettings,
                 rng: random.Random, cues: CueSink, store: StateStore, actuators: Actuators,
                 state_path: Path) -> None:
        """The parts as ``build_app`` makes them (the one place a unit is put together), and
        the sections of the configuration they run on: the machine's (``settings``; the
        inputs take its timing) and where the unit keeps its files (``state_path``: the
        doctor's report lies beside the state file)."""
        self.board = board
        self.reactor = reactor
        self.state_path = state_path
        self.rng = rng  # the press-your-luck draws, made here and sent inside each press
        self.cues = cues
        self.actuators = actuators
        self.store = store
        self.machine = m.Machine(settings, persistence.remembered(store, board),
                                 has_beam=board.exit_beam is not None)
        self.saver = persistence.Saver(store, reactor, lambda: self.machine.memory)
        self.led = LedDriver(board.led, reactor)
        self._led_said: Any = self.led.pattern  # the pattern the last ``led`` event named
        self.listeners: list[Listener] = []
        self.history: deque[tuple[float, str, dict[str, Any]]] = deque(maxlen=500)
        self._timers: dict[str, Timer] = {}
        self._store_hook: Callable[[BaseException], None] | None = None
        # The log lines of the dispatch under way, written once its commands are carried out.
        self._unlogged: list[tuple[str, dict[str, Any]]] | None = None
        self.inputs = Inputs(board, reactor, settings.timing, self.actuators, CONTACT_SETTLE,
                             self._input_event, self._lid_sensor)
        self.pairing = Pairing(reactor, self._pairing_shown, self._note)
        self.started = False
        self._failing = False  # inside internal_fault: a second failure is not caught

    # -- start and stop --

    def start(self) -> None:
        b = self.board
        inputs = self.inputs.read()
        self.actuators.enable()
        self.actuators.on_fault = self._bug_from_any_thread
        self.actuators.on_interlock = self._interlock_from_any_thread
        self.actuators.on_copper = self._copper_from_reactor
        self.actuators.on_checked = self._checked_from_reactor
        self._store_hook = self.store.on_failure  # whatever hook the store came with
        self.store.on_failure = self._store_failed_from_any_thread
        self.inputs.start()
        self.started = True
        self.reactor.on_error = self.internal_fault
        if self.store.problem:
            # Which classes the start holds, so the report says what was kept.
            self._note("state_reset", {"reason": self.store.problem,
                                       "held": ",".join(self.machine.memory.latched)})
            self.saver.soon()
        self._run(self.machine.start(inputs, self.reactor.monotonic()))
        self._enter()
        self._led_settled()
        self.inputs.check_pair()
        self.actuators.start_checks()
        for key, part, without in UNCHECKED:
            if getattr(b, part) is None:
                log.warning("pins.%s = -1: %s", key, without)

    def stop(self) -> None:
        """The board safe and every run refused first, then every timer cancelled, then the
        callbacks detached and the state written (the board stays open).

        In that order, nothing that is still queued (a debounce re-check, a posted edge, a
        timer) can start the roller once ``stop`` has begun.
        """
        if not self.started:
            return
        self.started = False
        self.actuators.shutdown()
        self.inputs.cancel_timers()
        self.pairing.stop()
        self.saver.cancel()
        for t in self._timers.values():
            self.reactor.update_timer(t, NEVER)
        self.led.set("off")
        self.inputs.detach()
        act = self.actuators
        act.on_fault = act.on_interlock = act.on_copper = act.on_checked = None
        self.store.on_failure = self._store_hook
        if self.reactor.on_error == self.internal_fault:
            self.reactor.on_error = None
        self.saver.now()
        self.store.close()

    def internal_fault(self, exc: BaseException, where: str) -> None:
        """A bug on the reactor thread: board safe first, then one log line and the fault.

        Installed as the reactor's error hook, so no timer or posted callback can fail
        quietly while the launcher runs on. A failure while handling a failure is not
        caught: it ends the process, and systemd's ``safe-stop`` drives the pins low.
        """
        if self._failing:
            raise exc
        self._failing = True
        try:
            failed = self.actuators.safe()
            log.error("internal error in %s; motors off, launcher in fault\n%s", where,
                      "".join(traceback.format_exception(exc)).rstrip())
            self._fault_internal(f"the reactor, {where}: {type(exc).__name__}: {exc}", failed)
        finally:
            self._failing = False

    def _fault_internal(self, detail: str,
                        failed: list[tuple[str, Exception]] | None = None) -> None:
        """The ``internal`` fault, the board already safe; every input read again from its
        pin and sent with it (an edge the bug lost leaves nothing stale behind)."""
        for part, error in failed or ():
            log.error("driving %s safe failed: %s", part, error)
        self.dispatch(m.Event(m.INTERNAL, detail=detail, inputs=self.inputs.read()))

    # -- inputs (launcher/firmware/inputs.py debounces them and checks the lid's pair) --

    def _input_event(self, event: m.Ev, now: float) -> None:
        # The button's presses and releases pass the pairing first, the one place that may
        # hold a press back (a pairing window pending); a release is no machine event.
        if event is m.PRESS or event is m.RELEASE:
            if self.pairing.button(event is m.PRESS, now):
                self.press(now)
        else:
            self.dispatch(m.Event(event), now)

    def _pairing_shown(self, on: bool) -> None:
        """A pairing window opened or closed: the machine's LED says so."""
        self.dispatch(m.Event(m.PAIRING, int(on)))

    def _lid_sensor(self, data: dict[str, str]) -> None:
        self._note("lid_sensor", data)
        self.dispatch(m.Event(m.LID_SENSOR))

    def _bug_from_any_thread(self, detail: str) -> None:
        """A bug or a lapse another thread found (the actuators made the board safe)."""
        self.reactor.post(lambda: self._bug(detail))

    def _store_failed_from_any_thread(self, exc: BaseException) -> None:
        """A bug in the state writer (not a disk error): a fault, as on any other thread.
        The writer has logged the traceback (once an outage); it keeps the state it could
        not write and tries again at the next save."""
        if self._store_hook is not None:
            self._store_hook(exc)
        self._bug_from_any_thread(f"the state writer thread: {type(exc).__name__}: {exc}")

    def _bug(self, detail: str) -> None:
        """An ``internal`` fault for a bug found off the reactor thread (one a fault: a bug
        that goes on failing while the unit is in its internal fault is only logged)."""
        if not self.started:
            return
        failed = self.actuators.safe()
        if self.machine.memory.fault == "internal":
            log.error("internal error while in the internal fault: %s", detail)
            return
        log.error("internal error (%s); motors off, launcher in fault", detail)
        self._fault_internal(detail, failed)

    def _interlock_from_any_thread(self, lid: str) -> None:
        self.reactor.post(lambda: self._interlocked(lid))

    def _interlocked(self, lid: str) -> None:
        """A lid pin read against a drive with no edge seen (the drive is stopped): the
        machine hears of it as of the edge."""
        if not self.started:
            return
        if lid == "closed":
            self._note("interlock", {"reason": "lid read open while the roller ran"})
            self.dispatch(m.Event(m.LID_LEFT_CLOSED))
        else:
            self._note("interlock", {"reason": "lid read not fully open while turning"})
            self.dispatch(m.Event(m.LID_LEFT_FULL))

    def layers_down(self) -> list[str]:
        """The safety layers whose thread is dead (the guard, the pin library's), or, for
        the guard, has not woken for ``GUARD_STALE`` (it wakes every ``GUARD_BEAT``); while
        any is, the unit is in an internal fault and the systemd watchdog is not fed."""
        act = self.actuators
        dead = act.dead_layers()
        asleep = self.reactor.monotonic() - act.guard_woke
        if act.guarded and not dead and asleep > GUARD_STALE:
            dead.append(f"the guard thread has not woken for {asleep:.1f} s (it wakes every "
                        f"{GUARD_BEAT:g} s)")
        if dead and self.started and self.machine.memory.fault != "internal":
            failed = self.actuators.safe()
            log.error("a safety layer is down (%s); motors off, launcher in fault",
                      "; ".join(dead))
            self._fault_internal("a safety layer is down: " + "; ".join(dead), failed)
        return dead

    # -- the copper's read-backs (the actuators read them) --

    def _copper_from_reactor(self, code: str, detail: str) -> None:
        """A read-back disagrees: posted, so that the check that found it has returned."""
        self.reactor.post(lambda: self._copper(code, detail))

    def _copper(self, code: str, detail: str) -> None:
        if not self.started:
            return
        if code in self.machine.memory.latched:  # still there: its proof starts afresh
            self.dispatch(m.Event(m.READBACK, detail=code))
            return
        self.actuators.safe()
        self._note("readback", {"code": code, "reason": detail})
        self.dispatch(m.Event(m.READBACK, detail=code))

    def _checked_from_reactor(self, what: str, passed: tuple[str, ...]) -> None:
        """A check of the copper passed (``what``: the lid at rest, ``full`` or ``closed``...,
        or the start test): posted, as a disagreement is, while a fault is latched (else it
        proves nothing, and nothing is posted)."""
        if self.machine.state is m.LATCHED:
            self.reactor.post(lambda: self._checked(what, passed))

    def _checked(self, what: str, passed: tuple[str, ...]) -> None:
        """What proves a latched fault gone: the checks that passed, and at a lid at rest
        the sensing pair plausible, each told to the machine (it keeps what it needs)."""
        if not self.started or self.machine.state is not m.LATCHED:
            return
        if what != "start_test" and not self.inputs.implausible():
            passed = (*passed, "lid_sensor")
        for code in passed:
            if code in self.machine.memory.latched:
                self.dispatch(m.Event(m.CHECKED, detail=f"{code}:{what}"))

    # -- the machine --

    def dispatch(self, event: m.Event, now: float | None = None) -> None:
        """Feed one event to the machine at ``now`` (the reactor's time if not given) and
        carry out what it says (reactor thread only).

        The log lines of its events are written at the end, once the pins are: a press's
        roller and cue do not wait for the journal. A dispatch inside another (an interlock
        refusal) leaves its lines to the outer one.
        """
        outer = self._unlogged is None
        if outer:
            self._unlogged = []
        try:
            machine = self.machine
            before = machine.state
            commands = machine.step(event, self.reactor.monotonic() if now is None else now)
            changed = machine.state is not before
            self._run(commands, {"from": before, "to": machine.state, "on": event.name}
                      if changed else None)
            if changed:
                self._enter()
            self._led_settled()
        finally:
            if outer:
                lines, self._unlogged = self._unlogged, None
                for kind, data in lines:
                    log.info("%s %s", kind, _Fields(data))

    def _led_settled(self) -> None:
        """One ``led`` event for each pattern the LED settles on (not each LED command: a
        dispatch may set it twice); a press that leaves it as it was costs one comparison."""
        if self.led.pattern != self._led_said:
            self._led_said = self.led.pattern
            self._note("led", m.led_fields(self._led_said))

    def _enter(self) -> None:
        """What every state needs of the outputs, whichever way it was reached (leaving a
        fault included): sound awake but asleep. The LED's pattern is the machine's, sent
        with the state's entry (``m.led_of``); the driver wakes for each run or turn and
        sleeps after it."""
        if self.machine.state is not m.ASLEEP:
            self.cues.wake()

    def _run(self, commands: Iterable[m.Command], state: dict[str, Any] | None = None) -> None:
        # The motor first, as the machine hands it over: a shot's roller must not wait for
        # its BAM to start playing, nor for the event of the state it entered (``state``),
        # which comes before the rest.
        refused = turn_refused = False
        rest = []
        actuators = self.actuators
        for c in commands:
            if c.kind is not m.MOTOR:
                rest.append(c)
            elif c.arg > 0:
                refused = not actuators.run_motor(c.arg) or refused  # False: the lid refused
            else:
                actuators.stop_motor()
        if state is not None:
            if state["to"] is not m.ASLEEP:
                self.cues.wake()  # before the cues: the new state's first cue sounds
            self._note("state", state)
        for c in rest:
            match c.kind:
                case m.CUE:
                    self.cues.play(c.arg)
                    self._note("cue", {"name": c.arg})  # what the speaker was told to play
                case m.ROTATOR:
                    ok = self.actuators.rotator(c.arg, c.fields().get("speed", 1.0))
                    turn_refused = turn_refused or not ok
                case m.TIMER:
                    self._set_timer(*c.arg)
                case m.EMIT:
                    self._note(c.arg, c.fields())
                case m.LED:
                    self.led.set(c.arg)
                case m.POWER:
                    self._power(c.arg)
                case m.SAVE:
                    self.saver.soon()
        if refused:
            # The interlock refused: the lid pin reads open, whatever the machine last heard.
            self._note("interlock", {"reason": "lid not closed; motor refused"})
            self.dispatch(m.Event(m.LID_LEFT_CLOSED))
        if turn_refused:
            self._note("interlock", {"reason": "lid not fully open; rotator refused"})
            self.dispatch(m.Event(m.LID_LEFT_FULL))

    def _power(self, awake: bool) -> None:
        # The driver wakes by itself for each run or turn; going to sleep lets go of both.
        if not awake:
            self.actuators.idle()
        if awake:
            self.cues.wake()
        else:
            self.cues.sleep()

    def _set_timer(self, name: str, at: float | None) -> None:
        t = self._timers.get(name)
        if t is None:
            event = m.Event(m.TIMER_EVENTS[name])
            t = self._timers[name] = self.reactor.register_timer(
                lambda now, e=event: self._timer_fired(e), NEVER, f"machine.{name}")
        self.reactor.update_timer(t, NEVER if at is None else at)

    def _timer_fired(self, event: m.Event) -> float:
        self.dispatch(event)
        return NEVER

    def timer_due(self, name: str) -> float:
        t = self._timers.get(name)
        return NEVER if t is None else t.waketime

    # -- what happened --

    def _note(self, kind: str, data: dict[str, Any]) -> None:
        now = self.reactor.monotonic()
        self.history.append((now, kind, data))
        if self._unlogged is not None:
            if log.isEnabledFor(logging.INFO):  # else no line, and nothing kept for one
                self._unlogged.append((kind, data))  # written when the dispatch is done
        else:
            log.info("%s %s", kind, _Fields(data))
        for listener in list(self.listeners):
            listener(kind, data)

    def events(self, kind: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        return [(k, d) for _, k, d in self.history if kind is None or k == kind]

    # -- persistence --

    def saved(self) -> Saved:
        """What the state file would keep now."""
        return persistence.saved(self.machine.memory)

    # -- requests from the button, the console and the play screen --

    def press(self, now: float | None = None) -> None:
        """One press at ``now`` (the reactor's time if not given): the luck is drawn here,
        when the machine says the press will draw.

        Under a fixed-count profile (``dealer``, ``deal N``...) the press asks for that many
        cards instead, and the generator is not touched. The draw and the press share one
        time, so they see the same machine.
        """
        machine = self.machine
        if now is None:
            now = self.reactor.monotonic()
        table = machine.luck_wanted(now)
        if table is None:
            drawn = 0
        elif machine.profile.per_press is not None:
            drawn = machine.profile.per_press
        else:
            drawn = machine.memory.streak.draw(table, self.rng)
        self.dispatch(m.Event(m.PRESS, drawn), now)

    def use_profile(self, profile: Profile) -> bool:
        """Behave as ``profile`` from the next press on; False when the machine is busy
        (shooting, turning, asleep, in a fault, or in a debug run)."""
        self.dispatch(m.Event(m.PROFILE, detail=profile.name))
        return self.machine.profile == profile

    def debug_run(self, ms: int) -> bool:
        """Ask the machine for a capped motor run; True if it started."""
        self.dispatch(m.Event(m.DEBUG_RUN_NOW, ms))
        return self.machine.state is m.DEBUG_RUN

    def debug_rotate(self) -> bool:
        """Ask the machine to turn the cartridge to its next detent; True if it started."""
        self.dispatch(m.Event(m.DEBUG_ROTATE))
        return self.machine.state is m.ROTATING

    def debug_stop(self) -> None:
        """End a debug motor run now (nothing happens if none is going on)."""
        self.dispatch(m.Event(m.DEBUG_STOP))

    def load(self, cards: int) -> None:
        self.dispatch(m.Event(m.LOAD, cards))

    def clear_fault(self) -> None:
        """Leave a fault, every input read again from its pin first. A latched fault stays
        (the machine refuses) until its check passes again; nSLEEP's start test, which
        nothing else runs again but a restart, runs now for a latched ``driver_sleep``."""
        retest = "driver_sleep" in self.machine.memory.latched
        self.dispatch(m.Event(m.CLEAR, inputs=self.inputs.read()))
        if retest and self.machine.state is m.LATCHED:
            self.actuators.start_checks()
            return
        self.inputs.check_pair()  # contacts that still agree fault again
        self.actuators.copper_check_soon()  # and copper that still disagrees

    def sleep(self) -> None:
        self.dispatch(m.Event(m.SLEEP_NOW))

    def wake(self) -> None:
        self.dispatch(m.Event(m.WAKE_NOW))

    def set_seed(self, seed: int) -> None:
        self.rng.seed(seed)
        self._note("seed", {"seed": seed})

    def retune(self, settings: m.MachineSettings) -> None:
        """Take new luck, timing and motor settings (a change of wiring needs a restart); a
        sleep countdown under way starts again at a new ``sleep_after``."""
        if settings.brakes != self.machine.settings.brakes:
            raise ValueError("pin changes need a restart")
        sleep_after = settings.timing.sleep_after != self.machine.settings.timing.sleep_after
        self.inputs.timing = settings.timing
        self.machine.settings = settings
        self.actuators.motor = settings.motor
        self.actuators.rotator_settings = settings.rotator
        if sleep_after and self.timer_due("idle") != NEVER:
            self._set_timer("idle", self.reactor.monotonic() + settings.timing.sleep_after)

    def status(self) -> dict[str, Any]:
        mem = self.machine.memory
        now = self.reactor.monotonic()
        idle = self.timer_due("idle")
        status: dict[str, Any] = {
            "state": self.machine.state,
            "side": mem.side,
            "escalation": mem.dry_streak,
            "inventory": "unknown" if mem.inventory is None else mem.inventory,
            "fault": mem.fault or "none",
            "lid": ("full" if self.board.lid_open.is_active else
                    "closed" if self.board.lid_closed.is_active else "ajar"),
            "motor": round(self.actuators.motor_speed, 3),
            # A fault never sleeps (it waits for its way out): no countdown to show.
            "sleep_in": None if idle == NEVER or mem.fault else round(max(0.0, idle - now), 1),
            "profile": self.machine.profile.name,
            "simulated": self.board.simulated,
        }
        if mem.latched or mem.fault in m.PROOFS:  # the faults not yet proven gone, or none
            status["latched"] = ",".join(mem.latched) or "proven"  # proven: `clear` leaves it
        return status


def build_app(settings: Settings, reactor: Reactor, rng: random.Random, board: Board, *,
              cues: CueSink | None = None, store: StateStore | None = None,
              warn: Callable[[str], None] = log.warning) -> Launcher:
    """The whole firmware on ``board``: actuators, sound, state file, machine. The one place
    a unit is put together, for the Pi, the simulator, the benchmarks and the tests alike.

    ``cues``: what plays the cues (default: the sound pack of ``settings.audio`` on the
    amplifier the actuators own); ``store``: the state file (default: the one at
    ``settings.state_path``; ``StateStore(None)`` keeps nothing).
    """
    actuators = Actuators(board, settings.motor, reactor, settings.rotator)
    if cues is None:
        from launcher.firmware.sound import build_cue_player

        cues = build_cue_player(settings.audio, actuators.amp, reactor, warn)
    if store is None:
        store = StateStore(settings.state_path)
    return Launcher(board, reactor, m.MachineSettings.of(settings), rng, cues, store, actuators,
                    settings.state_path)
