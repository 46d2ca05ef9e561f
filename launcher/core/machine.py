"""The launcher state machine: pure, events in, commands out.

The whole machine is the ``TRANSITIONS`` table below: for an event in a state, the
first row whose guard holds is taken; its action returns the commands for the shell
(motor, rotator, cues, timers, LED, events for the console and the log). The shell
turns sensor edges into events, runs the commands, and feeds timer expiries back.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from launcher.core import cues, luck
from launcher.core.config import Settings

# --- states ------------------------------------------------------------------------------

READY = "ready"
SHOOTING = "shooting"
LID_OPEN = "lid_open"
ROTATING = "rotating"
ASLEEP = "asleep"
FAULT = "fault"
STATES = (READY, SHOOTING, LID_OPEN, ROTATING, ASLEEP, FAULT)

# Fault codes, with the number of LED blinks that shows each one.
FAULT_BLINKS = {
    "jam": 2,
    "overrun": 3,
    "rotation_timeout": 4,
    "side_mismatch": 5,
    "beam_blocked": 6,
    "interlock": 7,
}

# --- events ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """Something that happened: a sensor edge, a timer, a console request."""

    name: str
    value: int = 0  # the count for ``load``

    def __str__(self) -> str:
        return self.name if not self.value else f"{self.name} {self.value}"


PRESS = "press"
LID_CLOSED = "lid_closed"  # the lid-closed switch closed
LID_LEFT_CLOSED = "lid_left_closed"  # the lid-closed switch opened
LID_FULL = "lid_full"  # the lid reached fully open
LID_LEFT_FULL = "lid_left_full"
BEAM_BLOCKED = "beam_blocked"
BEAM_CLEAR = "beam_clear"
HOME = "home"  # the cartridge reached a detent
HOME_LEFT = "home_left"
YELLOW_BACK = "yellow_back"  # the yellow half now faces the back
YELLOW_FRONT = "yellow_front"
T_CARD = "timeout_card"  # no card reached the beam in time: empty
T_JAM = "timeout_jam"  # the beam stayed blocked: a card is stuck
T_RUN = "timeout_run"  # the motor ran for max_run
T_TIMED = "timeout_timed"  # a timed shot (no beam) is done
T_ROTATION = "timeout_rotation"
T_IDLE = "timeout_idle"
LOAD = "load"  # value = cards now in the cartridge
CLEAR = "clear"  # console: leave a fault
SLEEP_NOW = "sleep"  # console: sleep now
WAKE_NOW = "wake"  # console: wake up

TIMERS = {T_CARD: "card", T_JAM: "jam", T_RUN: "run", T_TIMED: "timed",
          T_ROTATION: "rotation", T_IDLE: "idle"}

# --- commands ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    """What the shell must do. ``kind`` is one of the names below."""

    kind: str
    arg: Any = None
    data: tuple[tuple[str, Any], ...] = ()

    def fields(self) -> dict[str, Any]:
        return dict(self.data)


MOTOR = "motor"  # arg: speed (0 = stop)
ROTATOR = "rotator"  # arg: bool
CUE = "cue"  # arg: cue name
POWER = "power"  # arg: bool (False = asleep: driver, amp and LED off)
LED = "led"  # arg: "ready" | "busy" | "off" | blink count for a fault
TIMER = "timer"  # arg: (timer name, waketime or None to cancel)
EMIT = "emit"  # arg: event kind; data: its fields
SAVE = "save"  # the persistent state changed


def emit(kind: str, **data: Any) -> Command:
    return Command(EMIT, kind, tuple(data.items()))


def timer(name: str, at: float | None) -> Command:
    return Command(TIMER, (name, at))


# --- the machine's memory ----------------------------------------------------------------


@dataclass
class Inputs:
    """The last debounced level of every input."""

    lid_closed: bool = True
    lid_full: bool = False
    beam_blocked: bool = False
    home: bool = True
    yellow_back: bool = True


@dataclass
class Shot:
    target: int
    seen: int = 0
    timed: bool = False


@dataclass
class Memory:
    """What the machine keeps between events; ``persisted`` part survives restarts."""

    side: str = "mild"
    dry_streak: int = 0
    inventory: int | None = None  # None: unknown (not loaded through the console)
    counters: dict[str, int] = field(default_factory=dict)
    last_press: float = float("-inf")
    shot: Shot | None = None
    expected_side: str | None = None  # where a rotation should land (None: homing)
    rotation_armed: bool = True
    left_home: bool = False
    fault: str | None = None
    lid_cycled: bool = False  # the lid opened since the fault

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + n


def other(side: str) -> str:
    return "wild" if side == "mild" else "mild"


# --- guards and actions ------------------------------------------------------------------

Guard = Callable[["Machine", Event, float], bool]
Action = Callable[["Machine", Event, float], list[Command]]


@dataclass(frozen=True)
class Transition:
    source: str
    event: str
    target: str
    action: Action | None = None
    guard: Guard | None = None

    @property
    def label(self) -> str:
        guard = f" [{self.guard.__name__.strip('_')}]" if self.guard else ""
        return f"{self.event}{guard}"


class Machine:
    """The launcher's behaviour. ``handle`` is the only way in."""

    def __init__(self, settings: Settings, rng: random.Random, memory: Memory | None = None,
                 has_beam: bool = True) -> None:
        self.settings = settings
        self.rng = rng
        self.memory = memory or Memory()
        self.inputs = Inputs()
        self.state = READY
        self.has_beam = has_beam
        self._drawn = 0  # cards drawn by the press being handled

    # The one entry point.
    def handle(self, event: Event, now: float) -> list[Command]:
        self._note_input(event)
        for t in _BY_STATE_EVENT.get((self.state, event.name), ()):
            if t.guard is None or t.guard(self, event, now):
                out = t.action(self, event, now) if t.action else []
                self.state = t.target
                return out
        return []

    def start(self, inputs: Inputs, now: float) -> list[Command]:
        """Power-on: take the input levels, then home the cartridge if it is between detents."""
        self.inputs = inputs
        out = [Command(POWER, True), Command(CUE, cues.STARTUP)]
        sensed = "mild" if inputs.yellow_back else "wild"
        if sensed != self.memory.side:
            out.append(emit("side_changed_while_off", was=self.memory.side, now=sensed))
            self.memory.side = sensed
            out.append(Command(SAVE))
        if not inputs.home:
            self.memory.expected_side = None
            self.state = ROTATING
            return [*out, *self._rotate(now)]
        self.state = READY if inputs.lid_closed else LID_OPEN
        return [*out, Command(LED, "ready"), *self._idle(now)]

    def _note_input(self, event: Event) -> None:
        i = self.inputs
        match event.name:
            case "lid_closed" | "lid_left_closed":
                i.lid_closed = event.name == LID_CLOSED
            case "lid_full" | "lid_left_full":
                i.lid_full = event.name == LID_FULL
            case "beam_blocked" | "beam_clear":
                i.beam_blocked = event.name == BEAM_BLOCKED
            case "home" | "home_left":
                i.home = event.name == HOME
            case "yellow_back" | "yellow_front":
                i.yellow_back = event.name == YELLOW_BACK

    # -- helpers that build commands --

    def _idle(self, now: float) -> list[Command]:
        return [timer("idle", now + self.settings.timing.sleep_after)]

    def _stop_motor(self) -> list[Command]:
        return [Command(MOTOR, 0.0), timer("card", None), timer("jam", None),
                timer("run", None), timer("timed", None)]

    def _rotate(self, now: float) -> list[Command]:
        self.memory.left_home = False
        self.memory.rotation_armed = False
        return [Command(ROTATOR, True), Command(LED, "busy"),
                timer("rotation", now + self.settings.timing.rotation_timeout)]

    def _fault(self, code: str, now: float, **data: Any) -> list[Command]:
        m = self.memory
        m.fault = code
        m.shot = None
        m.lid_cycled = not self.inputs.lid_closed  # closing an open lid clears it
        m.count("faults")
        cue = cues.JAM if code == "jam" else cues.FAULT
        return [*self._stop_motor(), Command(ROTATOR, False), timer("rotation", None),
                Command(CUE, cue), Command(LED, FAULT_BLINKS[code]),
                emit("fault", code=code, **data), Command(SAVE)]


# Guards: named functions so the diagram can show them.


def _mashed(m: Machine, e: Event, now: float) -> bool:
    return now - m.memory.last_press < m.settings.timing.mash_guard


def _not_mashed(m: Machine, e: Event, now: float) -> bool:
    return not _mashed(m, e, now)


def _empty(m: Machine, e: Event, now: float) -> bool:
    return m.memory.inventory == 0


def _beam_stuck(m: Machine, e: Event, now: float) -> bool:
    return m.has_beam and m.inputs.beam_blocked


def _lucky(m: Machine, e: Event, now: float) -> bool:
    """Draws the press's luck (the only guard that changes memory: the press is accepted)."""
    mem = m.memory
    mem.last_press = now
    mem.count("presses")
    m._drawn = luck.draw(m.settings.luck.side(mem.side), mem.dry_streak, m.rng)
    return m._drawn > 0


def _last_card(m: Machine, e: Event, now: float) -> bool:
    """The card leaving the beam now completes the shot, or empties the cartridge."""
    shot, left = m.memory.shot, m.memory.inventory
    assert shot is not None
    return shot.seen + 1 >= shot.target or (left is not None and left <= 1)


def _side_mismatch(m: Machine, e: Event, now: float) -> bool:
    expected = m.memory.expected_side
    return m.memory.left_home and expected is not None and _sensed_side(m) != expected


def _arrived(m: Machine, e: Event, now: float) -> bool:
    return m.memory.left_home


def _arrived_lid_closed(m: Machine, e: Event, now: float) -> bool:
    return m.memory.left_home and m.inputs.lid_closed


def _can_rotate(m: Machine, e: Event, now: float) -> bool:
    return m.memory.rotation_armed


def _lid_is_closed(m: Machine, e: Event, now: float) -> bool:
    return m.inputs.lid_closed


def _cycled_closed(m: Machine, e: Event, now: float) -> bool:
    return m.memory.lid_cycled


def _sensed_side(m: Machine) -> str:
    return "mild" if m.inputs.yellow_back else "wild"


# Actions.


def _dry(m: Machine, e: Event, now: float) -> list[Command]:
    mem = m.memory
    mem.dry_streak += 1
    mem.count("dry")
    return [Command(CUE, cues.press(mem.side, mem.dry_streak)),
            emit("dry", side=mem.side, streak=mem.dry_streak), *m._idle(now), Command(SAVE)]


def _reload(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now
    return [Command(CUE, cues.RELOAD), emit("empty", side=m.memory.side), *m._idle(now)]


def _lid_warning(m: Machine, e: Event, now: float) -> list[Command]:
    return [Command(CUE, cues.LID_OPEN), emit("refused", reason="lid open"), *m._idle(now)]


def _beam_fault(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now
    return m._fault("beam_blocked", now)


def _start_shot(m: Machine, e: Event, now: float) -> list[Command]:
    mem = m.memory
    n = m._drawn
    if mem.inventory is not None:
        n = min(n, mem.inventory)
    mem.shot = Shot(target=n, timed=not m.has_beam)
    mem.dry_streak = 0
    mem.count("shots")
    t = m.settings.timing
    out = [Command(CUE, cues.bam(mem.side)), Command(LED, "busy"),
           Command(MOTOR, m.settings.motor.speed), emit("shoot", side=mem.side, cards=n),
           timer("run", now + t.max_run), timer("idle", None)]
    if mem.shot.timed:
        out.append(timer("timed", now + n * t.timed_card))
    else:
        out.append(timer("card", now + t.card_timeout))
    return out


def _card_in_beam(m: Machine, e: Event, now: float) -> list[Command]:
    return [timer("card", None), timer("jam", now + m.settings.timing.jam_timeout)]


def _card_out(m: Machine, e: Event, now: float) -> list[Command]:
    mem = m.memory
    assert mem.shot is not None
    mem.shot.seen += 1
    mem.count("cards_shot")
    if mem.inventory is not None:
        mem.inventory = max(0, mem.inventory - 1)
    return [timer("jam", None), timer("card", now + m.settings.timing.card_timeout)]


def _finish_shot(m: Machine, e: Event, now: float) -> list[Command]:
    if e.name == BEAM_CLEAR:
        _card_out(m, e, now)
    mem = m.memory
    shot = mem.shot
    assert shot is not None
    if shot.timed:
        mem.count("cards_shot", shot.target)
        if mem.inventory is not None:
            mem.inventory = max(0, mem.inventory - shot.target)
        shot.seen = shot.target
    mem.shot = None
    out = [*m._stop_motor(), Command(LED, "ready"),
           emit("shot", side=mem.side, cards=shot.seen, asked=shot.target), *m._idle(now),
           Command(SAVE)]
    if mem.inventory == 0:
        out += [Command(CUE, cues.RELOAD), emit("empty", side=mem.side)]
    return out


def _ran_empty(m: Machine, e: Event, now: float) -> list[Command]:
    mem = m.memory
    shot = mem.shot
    assert shot is not None
    mem.shot = None
    mem.inventory = 0
    return [*m._stop_motor(), Command(LED, "ready"), Command(CUE, cues.RELOAD),
            emit("shot", side=mem.side, cards=shot.seen, asked=shot.target),
            emit("empty", side=mem.side), *m._idle(now), Command(SAVE)]


def _jam(m: Machine, e: Event, now: float) -> list[Command]:
    return m._fault("jam", now)


def _overrun(m: Machine, e: Event, now: float) -> list[Command]:
    return m._fault("overrun", now)


def _rotation_timeout(m: Machine, e: Event, now: float) -> list[Command]:
    return m._fault("rotation_timeout", now)


def _mismatch(m: Machine, e: Event, now: float) -> list[Command]:
    out = m._fault("side_mismatch", now, expected=m.memory.expected_side,
                   sensed=_sensed_side(m))
    m.memory.side = _sensed_side(m)  # the sensor is the truth; the fault says they disagreed
    return out


def _abort_shot(m: Machine, e: Event, now: float) -> list[Command]:
    mem = m.memory
    shot = mem.shot
    assert shot is not None
    mem.shot = None
    return [*m._stop_motor(), emit("shot_aborted", side=mem.side, cards=shot.seen,
                                   asked=shot.target, reason="lid opened"),
            *_lid_opened(m, e, now), Command(SAVE)]


def _lid_opened(m: Machine, e: Event, now: float) -> list[Command]:
    if m.memory.inventory == 0:
        m.memory.inventory = None  # opened to reload: the count is unknown until `load`
    return [Command(CUE, cues.LID_OPEN), Command(LED, "busy"), emit("lid", position="open"),
            *m._idle(now)]


def _lid_closed(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.rotation_armed = True
    return [Command(LED, "ready"), emit("lid", position="closed"), *m._idle(now)]


def _lid_moved(m: Machine, e: Event, now: float) -> list[Command]:
    if e.name == LID_CLOSED:
        m.memory.rotation_armed = True
    return m._idle(now)


def _start_flip(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.expected_side = other(m.memory.side)
    return [emit("lid", position="full"), *m._rotate(now), timer("idle", None)]


def _left_home(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.left_home = True
    return []


def _arrive(m: Machine, e: Event, now: float) -> list[Command]:
    mem = m.memory
    sensed = _sensed_side(m)
    homing = mem.expected_side is None
    mem.side = sensed
    mem.dry_streak = 0
    mem.expected_side = None
    if not homing:
        mem.count("flips")
    out = [Command(ROTATOR, False), timer("rotation", None),
           Command(LED, "ready" if m.inputs.lid_closed else "busy"),
           emit("homed" if homing else "flip", side=sensed), *m._idle(now), Command(SAVE)]
    if not homing:
        out.insert(2, Command(CUE, cues.flip(sensed)))
    return out


def _sleep(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.count("sleeps")
    return [Command(CUE, cues.SLEEP), Command(POWER, False), Command(LED, "off"),
            timer("idle", None), emit("sleep"), Command(SAVE)]


def _wake(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now  # the waking press is consumed, and counts for the mash guard
    led = "ready" if m.inputs.lid_closed else "busy"
    return [Command(POWER, True), Command(CUE, cues.WAKE), Command(LED, led),
            emit("wake", by=e.name), *m._idle(now)]


def _wake_lid(m: Machine, e: Event, now: float) -> list[Command]:
    return [*_wake(m, e, now), *_lid_opened(m, e, now)]


def _rearm_idle(m: Machine, e: Event, now: float) -> list[Command]:
    return m._idle(now)


def _load(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.inventory = e.value
    return [emit("loaded", cards=e.value), Command(SAVE)]


def _fault_reminder(m: Machine, e: Event, now: float) -> list[Command]:
    return [Command(CUE, cues.FAULT), emit("refused", reason=f"fault {m.memory.fault}")]


def _fault_lid_opened(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.lid_cycled = True
    return []


def _clear_fault(m: Machine, e: Event, now: float) -> list[Command]:
    mem = m.memory
    code = mem.fault
    mem.fault = None
    mem.rotation_armed = True
    mem.side = _sensed_side(m)
    return [Command(LED, "ready"), emit("fault_cleared", code=code, by=e.name, side=mem.side),
            *m._idle(now), Command(SAVE)]


def _clear_fault_open(m: Machine, e: Event, now: float) -> list[Command]:
    return [*_clear_fault(m, e, now), Command(LED, "busy")]


T = Transition
TRANSITIONS: tuple[Transition, ...] = (
    # Ready: press your luck.
    T(READY, PRESS, READY, None, _mashed),
    T(READY, PRESS, READY, _reload, _empty),
    T(READY, PRESS, FAULT, _beam_fault, _beam_stuck),
    T(READY, PRESS, SHOOTING, _start_shot, _lucky),
    T(READY, PRESS, READY, _dry),
    T(READY, LID_LEFT_CLOSED, LID_OPEN, _lid_opened),
    T(READY, LOAD, READY, _load),
    T(READY, T_IDLE, ASLEEP, _sleep),
    T(READY, SLEEP_NOW, ASLEEP, _sleep),
    # Shooting: the motor runs until the beam has counted the cards.
    T(SHOOTING, BEAM_BLOCKED, SHOOTING, _card_in_beam),
    T(SHOOTING, BEAM_CLEAR, READY, _finish_shot, _last_card),
    T(SHOOTING, BEAM_CLEAR, SHOOTING, _card_out),
    T(SHOOTING, T_TIMED, READY, _finish_shot),
    T(SHOOTING, T_CARD, READY, _ran_empty),
    T(SHOOTING, T_JAM, FAULT, _jam),
    T(SHOOTING, T_RUN, FAULT, _overrun),
    T(SHOOTING, LID_LEFT_CLOSED, LID_OPEN, _abort_shot),
    T(SHOOTING, LOAD, SHOOTING, _load),
    T(SHOOTING, T_IDLE, SHOOTING, _rearm_idle),
    # Lid open: no shooting; fully open turns the cartridge once per opening.
    T(LID_OPEN, LID_FULL, ROTATING, _start_flip, _can_rotate),
    T(LID_OPEN, LID_CLOSED, READY, _lid_closed),
    T(LID_OPEN, PRESS, LID_OPEN, _lid_warning, _not_mashed),
    T(LID_OPEN, LOAD, LID_OPEN, _load),
    T(LID_OPEN, T_IDLE, ASLEEP, _sleep),
    T(LID_OPEN, SLEEP_NOW, ASLEEP, _sleep),
    # Rotating: to the next detent, then the side is read from the sensor.
    T(ROTATING, HOME_LEFT, ROTATING, _left_home),
    T(ROTATING, HOME, FAULT, _mismatch, _side_mismatch),
    T(ROTATING, HOME, READY, _arrive, _arrived_lid_closed),
    T(ROTATING, HOME, LID_OPEN, _arrive, _arrived),
    T(ROTATING, T_ROTATION, FAULT, _rotation_timeout),
    T(ROTATING, LID_CLOSED, ROTATING, _lid_moved),
    T(ROTATING, LID_LEFT_CLOSED, ROTATING, _lid_moved),
    T(ROTATING, LOAD, ROTATING, _load),
    T(ROTATING, T_IDLE, ROTATING, _rearm_idle),
    # Asleep: the press that wakes the unit is consumed.
    T(ASLEEP, PRESS, READY, _wake, _lid_is_closed),
    T(ASLEEP, PRESS, LID_OPEN, _wake),
    T(ASLEEP, WAKE_NOW, READY, _wake, _lid_is_closed),
    T(ASLEEP, WAKE_NOW, LID_OPEN, _wake),
    T(ASLEEP, LID_LEFT_CLOSED, LID_OPEN, _wake_lid),
    T(ASLEEP, LOAD, ASLEEP, _load),
    # Fault: motors are off; a lid cycle (open, then closed) or `clear` gets out.
    T(FAULT, PRESS, FAULT, _fault_reminder, _not_mashed),
    T(FAULT, LID_LEFT_CLOSED, FAULT, _fault_lid_opened),
    T(FAULT, LID_CLOSED, READY, _clear_fault, _cycled_closed),
    T(FAULT, CLEAR, READY, _clear_fault, _lid_is_closed),
    T(FAULT, CLEAR, LID_OPEN, _clear_fault_open),
    T(FAULT, LOAD, FAULT, _load),
)


_BY_STATE_EVENT: dict[tuple[str, str], list[Transition]] = {}
for _t in TRANSITIONS:
    _BY_STATE_EVENT.setdefault((_t.source, _t.event), []).append(_t)


def mermaid() -> str:
    """The state diagram, made from ``TRANSITIONS`` (the README shows this text).

    Bookkeeping rows are left out: ``load`` (counts only) and timer re-arms in place.
    """
    lines = ["stateDiagram-v2", f"    [*] --> {READY}"]
    seen: set[tuple[str, str, str]] = set()
    for t in TRANSITIONS:
        if t.event == LOAD or (t.event == T_IDLE and t.source == t.target):
            continue
        label = t.label
        key = (t.source, t.target, label)
        if key in seen:
            continue
        seen.add(key)
        lines.append(f"    {t.source} --> {t.target}: {label}")
    return "\n".join(lines) + "\n"
