"""The launcher state machine: pure, events in, commands out.

The whole machine is the ``TRANSITIONS`` table below: for an event in a state, the
first row whose guard holds is taken; its action returns the commands for the shell
(motor, rotator, cues, timers, LED, events for the console and the log). The shell
turns sensor edges into events, draws each press's luck (``luck_wanted`` says when a
press needs a draw) and sends it inside the press event, runs the commands, and feeds
timer expiries back. Guards only read; nothing here reads a clock or a random source.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, NamedTuple

from launcher.core import cues
from launcher.core.config import Settings, SideLuck
from launcher.core.luck import DryStreak
from launcher.core.profiles import Profile, parse_profile

# --- states ------------------------------------------------------------------------------


class State(StrEnum):
    READY = "ready"
    SHOOTING = "shooting"
    LID_OPEN = "lid_open"
    ROTATING = "rotating"
    ASLEEP = "asleep"
    FAULT = "fault"
    DEBUG_RUN = "debug_run"  # the console's `motor run`: the motor on for a capped time


READY, SHOOTING, LID_OPEN, ROTATING, ASLEEP, FAULT, DEBUG_RUN = State
STATES = tuple(State)

# Fault codes, with the number of LED blinks that shows each one.
FAULT_BLINKS = {
    "jam": 2,
    "overrun": 3,
    "rotation_timeout": 4,
    "side_mismatch": 5,
    "beam_blocked": 6,
    "interlock": 7,
    "internal": 8,  # a bug in the firmware: the board was made safe first
    "lid_sensor": 9,  # the lid switch's two contacts agree, or closed and fully open at once
    "power_contact": 10,  # a power contact (the lid's, the rotator's) reads against the lid
    "driver_sleep": 11,  # nSLEEP reads against what the driver was told (a pull-up, a short)
}
FAULT_OF_BLINKS = {n: code for code, n in FAULT_BLINKS.items()}

# What the status LED shows, by its pattern (the ``LED`` command's argument): the README's
# blink-code table, the ``led`` event and the play screen's LED row all read it from here.
LED_SHOWS = {
    "ready": ("on", "ready to shoot"),
    "busy": ("fast blink", "busy, not ready to shoot (a shot, a turn, the lid open)"),
    "off": ("off", "asleep (a press wakes it)"),
}


def led_fields(pattern: str | int) -> dict[str, Any]:
    """The ``led`` event's data: ``pattern=on``, ``pattern=fast_blink``, ``pattern=off``, or
    ``pattern=blink_code blinks=2 fault=jam``."""
    if isinstance(pattern, int):
        return {"pattern": "blink_code", "blinks": pattern,
                "fault": FAULT_OF_BLINKS.get(pattern, "unknown")}
    return {"pattern": LED_SHOWS[pattern][0].replace(" ", "_")}


def led_shows(pattern: str | int) -> tuple[str, str]:
    """What the LED does in ``pattern``, and what that means: ``("2 blinks, pause",
    "fault jam")``."""
    if isinstance(pattern, int):
        return f"{pattern} blinks, pause", f"fault {FAULT_OF_BLINKS.get(pattern, 'unknown')}"
    return LED_SHOWS[pattern]


def led_meaning(pattern: str | int) -> str:
    """The LED as a person reads it: ``on: ready to shoot``, ``2 blinks, pause: fault jam``."""
    return ": ".join(led_shows(pattern))


def led_table() -> list[tuple[str, str]]:
    """Every pattern and its meaning, faults by their number of blinks (the README's table)."""
    return [led_shows(p) for p in (*LED_SHOWS, *sorted(FAULT_OF_BLINKS))]


# --- events ------------------------------------------------------------------------------


class Ev(StrEnum):
    """What can happen: a sensor edge, a timer, a request from the console."""

    PRESS = "press"  # value: the cards the shell's luck draw gave (0: dry)
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
    T_DEBUG = "timeout_debug"  # a debug motor run is over
    T_SETTLE = "timeout_settle"  # the brake at home has held: read the home sensor again
    LOAD = "load"  # value = cards now in the cartridge
    CLEAR = "clear"  # console: leave a fault
    SLEEP_NOW = "sleep"  # console: sleep now
    WAKE_NOW = "wake"  # console: wake up
    DEBUG_RUN = "debug_run"  # console: run the motor for value ms
    DEBUG_ROTATE = "debug_rotate"  # console: turn the cartridge to its next detent
    DEBUG_STOP = "debug_stop"  # console: end a debug run now
    INTERNAL = "internal"  # the shell caught a bug; the board is already safe
    PROFILE = "profile"  # console: behave as another profile (detail: its name)
    LID_SENSOR = "lid_sensor"  # the lid switch's NO and NC contacts have agreed too long
    READBACK = "readback"  # a read-back of the copper disagrees (detail: the fault code)


(PRESS, LID_CLOSED, LID_LEFT_CLOSED, LID_FULL, LID_LEFT_FULL, BEAM_BLOCKED, BEAM_CLEAR, HOME,
 HOME_LEFT, YELLOW_BACK, YELLOW_FRONT, T_CARD, T_JAM, T_RUN, T_TIMED, T_ROTATION, T_IDLE,
 T_DEBUG, T_SETTLE, LOAD, CLEAR, SLEEP_NOW, WAKE_NOW, DEBUG_RUN_NOW, DEBUG_ROTATE, DEBUG_STOP,
 INTERNAL, PROFILE, LID_SENSOR, READBACK) = Ev


class Event(NamedTuple):
    """Something that happened, with its number: cards drawn (press) or loaded (load).
    (Immutable; a named tuple rather than a frozen dataclass, which takes twice as long to
    make, as Command: a press makes several.)"""

    name: Ev
    value: int = 0
    detail: str = ""  # what went wrong, for ``internal``
    # Every input's level read from its pin, sent with ``clear`` and ``internal``: the
    # machine takes them before it acts, so an edge lost to a bug leaves nothing stale.
    inputs: Inputs | None = None

    def __str__(self) -> str:
        return self.name if not self.value else f"{self.name} {self.value}"


_PROBE = Event(PRESS)  # the press ``luck_wanted`` puts to the guards before a draw

# The input level each sensor event sets: (the ``Inputs`` field, its new value).
_INPUT_OF: dict[Ev, tuple[str, bool]] = {
    LID_CLOSED: ("lid_closed", True), LID_LEFT_CLOSED: ("lid_closed", False),
    LID_FULL: ("lid_full", True), LID_LEFT_FULL: ("lid_full", False),
    BEAM_BLOCKED: ("beam_blocked", True), BEAM_CLEAR: ("beam_blocked", False),
    HOME: ("home", True), HOME_LEFT: ("home", False),
    YELLOW_BACK: ("yellow_back", True), YELLOW_FRONT: ("yellow_back", False),
}

# Timer names, by the event each one sends when it fires.
TIMERS = {T_CARD: "card", T_JAM: "jam", T_RUN: "run", T_TIMED: "timed",
          T_ROTATION: "rotation", T_IDLE: "idle", T_DEBUG: "debug", T_SETTLE: "settle"}
TIMER_EVENTS = {name: event for event, name in TIMERS.items()}

# --- commands ----------------------------------------------------------------------------


class Cmd(StrEnum):
    MOTOR = "motor"  # arg: speed (0 = stop)
    ROTATOR = "rotator"  # arg: a Turn; data: speed, when slow
    CUE = "cue"  # arg: cue name
    POWER = "power"  # arg: bool (False = asleep: driver, amp and LED off)
    LED = "led"  # arg: "ready" | "busy" | "off" | blink count for a fault
    TIMER = "timer"  # arg: (timer name, waketime or None to cancel)
    EMIT = "emit"  # arg: event kind; data: its fields
    SAVE = "save"  # the persistent state changed


MOTOR, ROTATOR, CUE, POWER, LED, TIMER, EMIT, SAVE = Cmd


class Turn(StrEnum):
    """What the cartridge's gear motor does (``BRAKE``, ``BACK`` and slow ``AHEAD`` need
    ``pins.rotator_in2``)."""

    AHEAD = "ahead"  # turn forwards (full speed, unless the command gives a speed)
    BACK = "back"  # turn backwards, at the command's speed
    BRAKE = "brake"  # short the motor: it stops within a degree
    STOP = "stop"  # stop a turn now, as the lid interlock does (a brief brake where it can)
    OFF = "off"  # let go: the motor coasts


def turn(how: Turn, speed: float = 1.0) -> Command:
    return Command(ROTATOR, how, (("speed", speed),) if speed != 1.0 else ())


class Command(NamedTuple):
    """What the shell must do (immutable, as Event)."""

    kind: Cmd
    arg: Any = None
    data: tuple[tuple[str, Any], ...] = ()

    def fields(self) -> dict[str, Any]:
        return dict(self.data)


def emit(kind: str, **data: Any) -> Command:
    return Command(EMIT, kind, tuple(data.items()))


def timer(name: str, at: float | None) -> Command:
    return Command(TIMER, (name, at))


# --- the machine's memory ----------------------------------------------------------------


@dataclass(slots=True)
class Inputs:
    """The last debounced level of every input."""

    lid_closed: bool = True
    lid_full: bool = False
    beam_blocked: bool = False
    home: bool = True
    yellow_back: bool = True


@dataclass(slots=True)
class Shot:
    target: int
    seen: int = 0
    timed: bool = False


@dataclass(slots=True)
class Memory:
    """What the machine keeps between events; ``persisted`` part survives restarts."""

    side: str = "mild"
    streak: DryStreak = field(default_factory=DryStreak)
    inventory: int | None = None  # None: unknown (not loaded through the console)
    counters: dict[str, int] = field(default_factory=dict)
    last_press: float = float("-inf")
    shot: Shot | None = None
    expected_side: str | None = None  # where a rotation should land (None: homing)
    # A turn that must finish before the unit shoots: stopped by the lid leaving fully open,
    # or the cartridge found between detents; it goes on at the next full opening.
    turn_pending: bool = False
    rotation_armed: bool = True
    left_home: bool = False
    braking: bool = False  # at home with the brake on, until the settle timer reads the sensor
    creep_back: bool = True  # the next creep towards home goes backwards (else ahead)
    fault: str | None = None
    lid_cycled: bool = False  # the lid opened since the fault

    debug_run: float | None = None  # when the console's motor run started
    debug_draining: bool = False  # the run is over; a card still in the slot may leave
    card_in_slot: bool = False  # a card the roller pushed into the beam, not yet counted out

    @property
    def dry_streak(self) -> int:
        return self.streak.count

    def count(self, name: str, n: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + n


def other(side: str) -> str:
    return "wild" if side == "mild" else "mild"


# --- guards and actions ------------------------------------------------------------------

Guard = Callable[["Machine", Event, float], bool]
Action = Callable[["Machine", Event, float], Iterable[Command]]


@dataclass(frozen=True, slots=True)
class Transition:
    source: State
    event: Ev
    target: State
    action: Action | None = None
    guard: Guard | None = None
    draws: bool = False  # a press reaching this row needs the shell's luck draw

    @property
    def label(self) -> str:
        guard = f" [{self.guard.__name__.strip('_')}]" if self.guard else ""
        return f"{self.event}{guard}"


class Machine:
    """The launcher's behaviour. ``handle`` (or ``step``, the same made lazily) is the only
    way in."""

    def __init__(self, settings: Settings, memory: Memory | None = None,
                 has_beam: bool = True) -> None:
        self.settings = settings
        self.memory = memory or Memory()
        self.inputs = Inputs()
        self.state = READY
        self.has_beam = has_beam
        self.brakes = settings.pins.rotator_in2 is not None  # can brake and creep at home
        self.profile: Profile = settings.profile  # what a press does (``profile`` changes it)
        # Where ``luck_wanted`` left the press rows: (state, time, index of the drawing row).
        self._checked: tuple[State, float, int] | None = None

    # The one entry point (and its lazy form).
    def handle(self, event: Event, now: float) -> list[Command]:
        return list(self.step(event, now))

    def step(self, event: Event, now: float) -> Iterable[Command]:
        """``handle``, with the commands handed over as the action makes them: a shot's
        motor command comes before the rest is built, so the shell can start the roller
        first. The state is the new one on return; the memory, once every command is taken.
        """
        checked, self._checked = self._checked, None
        name = event.name
        if event.inputs is not None:
            self.inputs = replace(event.inputs)
        if name is INTERNAL:
            self.state = FAULT
            return _internal(self, event, now)
        rows = _BY_STATE_EVENT.get((self.state, name), ())
        if name is PRESS:
            # ``luck_wanted`` at this time and state has found the guards before the first
            # drawing row false: the press starts there (nothing has changed since).
            if checked is not None and checked[0] is self.state and checked[1] == now:
                rows = rows[checked[2]:]
        else:
            self._note_input(event)  # a press is no input level
        for t in rows:
            if t.guard is None or t.guard(self, event, now):
                out = t.action(self, event, now) if t.action else []
                self.state = t.target
                return out
        return []

    def luck_wanted(self, now: float) -> SideLuck | None:
        """The luck table a press at ``now`` draws from, or None when it would draw nothing.

        The shell asks before it sends a press, draws, and puts the result in the event;
        so the random source is the shell's, and replaying a seed replays every shot.
        The press that follows at the same time and state skips the guards found false here
        (any other event in between forgets them).
        """
        for i, t in enumerate(_BY_STATE_EVENT.get((self.state, PRESS), ())):
            if t.draws:
                self._checked = (self.state, now, i)
                return self.settings.luck.side(self.memory.side)
            if t.guard is None or t.guard(self, _PROBE, now):
                return None
        return None

    def start(self, inputs: Inputs, now: float) -> list[Command]:
        """Power-on: take the input levels, then home the cartridge if it is between detents."""
        self.inputs = inputs
        out = [Command(POWER, True), Command(CUE, cues.STARTUP)]
        sensed = "mild" if inputs.yellow_back else "wild"
        if sensed != self.memory.side:
            out.append(emit("side_changed_while_off", was=self.memory.side, now=sensed))
            self.memory.side = sensed
            out.append(Command(SAVE))
        self.state = READY if inputs.lid_closed else LID_OPEN
        if not inputs.home:
            # Between detents: home it, but only with the lid fully open (fingers).
            self.memory.expected_side = None
            if inputs.lid_full:
                self.state = ROTATING
                return [*out, *self._rotate(now)]
            return [*out, *self._wait_for_turn(now)]
        led = "ready" if inputs.lid_closed else "busy"
        return [*out, Command(LED, led), *self._idle(now)]

    def _note_input(self, event: Event) -> None:
        level = _INPUT_OF.get(event.name)
        if level is not None:
            setattr(self.inputs, *level)

    # -- helpers that build commands --

    def _idle(self, now: float) -> list[Command]:
        return [timer("idle", now + self.settings.timing.sleep_after)]

    def _stop_motor(self) -> list[Command]:
        return [Command(MOTOR, 0.0), timer("card", None), timer("jam", None),
                timer("run", None), timer("timed", None)]

    def _rotate(self, now: float) -> list[Command]:
        mem = self.memory
        # Off home already (it stopped past a magnet, or powered up between detents): no
        # home_left will come, and the next home is the arrival.
        mem.left_home = not self.inputs.home
        mem.braking = False
        mem.rotation_armed = False
        mem.turn_pending = False
        mem.creep_back = True
        return [turn(Turn.AHEAD), Command(LED, "busy"),
                timer("rotation", now + self.settings.timing.rotation_timeout)]

    def _wait_for_turn(self, now: float) -> list[Command]:
        """The cartridge is off its detent: say so, and turn it at the next full opening."""
        self.memory.turn_pending = True
        self.memory.left_home = True  # the next detent it reaches is the arrival
        return [Command(CUE, cues.LID_OPEN), Command(LED, "busy"),
                emit("turn_waiting", reason=TURN_WAITING), *self._idle(now)]

    def _fault(self, code: str, now: float, **data: Any) -> list[Command]:
        m = self.memory
        m.fault = code
        m.shot = None
        m.debug_run = None
        m.debug_draining = False
        m.braking = False
        m.turn_pending = False  # leaving the fault looks at the home sensor again
        m.lid_cycled = not self.inputs.lid_closed  # closing an open lid clears it
        m.count("faults")
        cue = cues.JAM if code == "jam" else cues.FAULT
        return [*self._stop_motor(), turn(Turn.OFF), timer("rotation", None),
                timer("settle", None), timer("debug", None), Command(CUE, cue),
                Command(LED, FAULT_BLINKS[code]), emit("fault", code=code, **data), Command(SAVE)]


TURN_WAITING = "the cartridge is between detents: open the lid fully to turn it"

# Guards: named functions so the diagram can show them.


def _mashed(m: Machine, e: Event, now: float) -> bool:
    return now - m.memory.last_press < m.settings.timing.mash_guard


def _empty(m: Machine, e: Event, now: float) -> bool:
    return m.memory.inventory == 0


def _beam_stuck(m: Machine, e: Event, now: float) -> bool:
    return m.has_beam and m.inputs.beam_blocked


def _at_stock_floor(m: Machine, e: Event, now: float) -> bool:
    floor, left = m.profile.stock_floor, m.memory.inventory
    return floor > 0 and left is not None and left <= floor


def _lucky(m: Machine, e: Event, now: float) -> bool:
    """The shell's luck draw for this press gave cards."""
    return e.value > 0


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


def _braking(m: Machine, e: Event, now: float) -> bool:
    return m.memory.braking


def _brakes_at_home(m: Machine, e: Event, now: float) -> bool:
    return m.brakes and m.memory.left_home


def _past_home(m: Machine, e: Event, now: float) -> bool:
    """The brake has held, and the cartridge stopped off the home magnet: it can creep back."""
    return not m.inputs.home and m.settings.rotator.creep_speed > 0


def _can_rotate(m: Machine, e: Event, now: float) -> bool:
    return m.memory.rotation_armed


def _turn_pending(m: Machine, e: Event, now: float) -> bool:
    return m.memory.turn_pending


def _braking_lid_closed(m: Machine, e: Event, now: float) -> bool:
    return m.memory.braking and m.inputs.lid_closed


def _lid_is_full(m: Machine, e: Event, now: float) -> bool:
    return m.inputs.lid_full


def _pending_arrival(m: Machine, e: Event, now: float) -> bool:
    """A stopped turn reached its detent anyway (it coasted there, or a hand turned it)."""
    return m.memory.turn_pending and m.memory.left_home


def _pending_mismatch(m: Machine, e: Event, now: float) -> bool:
    return m.memory.turn_pending and _side_mismatch(m, e, now)


def _new_lid_fault(m: Machine, e: Event, now: float) -> bool:
    return m.memory.fault != "lid_sensor"


def _new_readback_fault(m: Machine, e: Event, now: float) -> bool:
    return m.memory.fault != e.detail


def _lid_is_closed(m: Machine, e: Event, now: float) -> bool:
    return m.inputs.lid_closed


def _cycled_closed(m: Machine, e: Event, now: float) -> bool:
    return m.memory.lid_cycled


def _sensed_side(m: Machine) -> str:
    return "mild" if m.inputs.yellow_back else "wild"


# Actions.


def _accept_press(m: Machine, e: Event, now: float) -> None:
    mem = m.memory
    mem.last_press = now
    mem.count("presses")
    mem.streak.pressed(e.value)


def _press_ignored(m: Machine, e: Event, now: float) -> list[Command]:
    """A press inside the mash guard of the last one: nothing happens, but it is said and
    counted (``stats``: ``mashed``), so a script that presses too fast can tell."""
    m.memory.count("mashed")
    return [emit("press_ignored", reason="mashed")]


def _press_busy(m: Machine, e: Event, now: float) -> list[Command]:
    """A press while a shot or a turn goes on: it does nothing (as on the toy), and says so."""
    return [emit("press_ignored", reason=m.state)]


def _dry(m: Machine, e: Event, now: float) -> list[Command]:
    _accept_press(m, e, now)
    mem = m.memory
    mem.count("dry")
    return [Command(CUE, cues.press(mem.side, mem.dry_streak)),
            emit("dry", side=mem.side, streak=mem.dry_streak), *m._idle(now), Command(SAVE)]


def _stock_floor(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now
    left = m.memory.inventory
    return [Command(CUE, cues.HAND_DRAW),
            emit("refused", reason=f"the stock is down to {left}: the hand is a draw"),
            *m._idle(now)]


def _use_profile(m: Machine, e: Event, now: float) -> list[Command]:
    m.profile = parse_profile(e.detail)
    m.memory.streak.flipped()  # a new game starts its streak afresh
    return [emit("profile", name=m.profile.name), *m._idle(now)]


def _reload(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now
    return [Command(CUE, cues.RELOAD), emit("empty", side=m.memory.side), *m._idle(now)]


def _turn_refusal(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now
    return [Command(CUE, cues.LID_OPEN), emit("refused", reason=TURN_WAITING), *m._idle(now)]


def _lid_warning(m: Machine, e: Event, now: float) -> list[Command]:
    return [Command(CUE, cues.LID_OPEN), emit("refused", reason="lid open"), *m._idle(now)]


def _beam_fault(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now
    return m._fault("beam_blocked", now)


def _start_shot(m: Machine, e: Event, now: float) -> Iterator[Command]:
    # The roller first, before the rest of the shot is made (see ``Machine.step``).
    yield Command(MOTOR, m.settings.motor.speed)
    _accept_press(m, e, now)
    mem = m.memory
    n = e.value
    if mem.inventory is not None:
        n = min(n, mem.inventory)
    mem.shot = Shot(target=n, timed=not m.has_beam)
    mem.count("shots")
    t = m.settings.timing
    if m.profile.lucky:
        yield Command(CUE, cues.bam(mem.side))
    yield Command(LED, "busy")
    yield emit("shoot", side=mem.side, cards=n)
    yield timer("run", now + t.max_run)
    yield timer("idle", None)
    if mem.shot.timed:
        yield timer("timed", now + n * t.timed_card)
    else:
        yield timer("card", now + t.card_timeout)


def _card_in_beam(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.card_in_slot = True
    return [timer("card", None), timer("jam", now + m.settings.timing.jam_timeout)]


def _count_card_out(m: Machine) -> None:
    mem = m.memory
    mem.card_in_slot = False
    mem.count("cards_shot")
    if mem.inventory is not None:
        mem.inventory = max(0, mem.inventory - 1)


def _card_out(m: Machine, e: Event, now: float) -> list[Command]:
    assert m.memory.shot is not None
    m.memory.shot.seen += 1
    _count_card_out(m)
    return [timer("jam", None), timer("card", now + m.settings.timing.card_timeout)]


def _roller_card_left(m: Machine, e: Event, now: float) -> bool:
    return m.memory.card_in_slot


def _late_card_out(m: Machine, e: Event, now: float) -> list[Command]:
    """A card the roller pushed into the slot left after its shot ended (a jam cleared by
    hand, a lid opened mid-shot): it has left the cartridge all the same."""
    _count_card_out(m)
    return [emit("card_out", late=True), Command(SAVE)]


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
    elif m.profile.after_shot is not None:
        out.append(Command(CUE, m.profile.after_shot))
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


def _resume_turn(m: Machine, e: Event, now: float) -> list[Command]:
    """The lid is fully open again: finish the turn that was stopped (or home the cartridge);
    the side is read from the sensor when it arrives, as after any turn."""
    return [emit("lid", position="full"), emit("turn_resumed"), *m._rotate(now),
            timer("idle", None)]


def _pause_turn(m: Machine, e: Event, now: float) -> list[Command]:
    """The lid left fully open mid-turn: the rotator is already stopped (the interlock, on
    the pin thread); the turn waits for the next full opening."""
    mem = m.memory
    mem.turn_pending = True
    mem.braking = False
    return [turn(Turn.STOP), timer("rotation", None), timer("settle", None),
            Command(CUE, cues.LID_OPEN), Command(LED, "busy"),
            emit("turn_paused", reason="the lid left fully open"), *m._idle(now)]


def _left_home(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.left_home = True
    return []


def _brake_at_home(m: Machine, e: Event, now: float) -> list[Command]:
    """Home: brake, and read the sensor again once the cartridge has surely stopped (the
    switch reports late, so it may have stopped past the magnet)."""
    m.memory.braking = True
    return [turn(Turn.BRAKE), timer("settle", now + m.settings.rotator.brake)]


def _creep_home(m: Machine, e: Event, now: float) -> list[Command]:
    """Stopped past the home magnet: turn slowly towards it (back first, then to and fro)
    until the sensor sees it again; the rotation timer still bounds the whole turn."""
    mem = m.memory
    mem.braking = False
    how = Turn.BACK if mem.creep_back else Turn.AHEAD
    mem.creep_back = not mem.creep_back
    mem.count("creeps")
    return [turn(how, m.settings.rotator.creep_speed), emit("creep", to=how)]


def _arrive(m: Machine, e: Event, now: float) -> list[Command]:
    mem = m.memory
    sensed = _sensed_side(m)
    homing = mem.expected_side is None
    mem.side = sensed
    mem.streak.flipped()
    mem.expected_side = None
    mem.turn_pending = False
    if m.inputs.lid_closed:
        mem.rotation_armed = True  # the next opening of the lid is a new one
    if not homing:
        mem.count("flips")
    mem.braking = False
    out = [turn(Turn.OFF), timer("rotation", None),
           Command(LED, "ready" if m.inputs.lid_closed else "busy"),
           emit("homed" if homing else "flip", side=sensed), *m._idle(now), Command(SAVE)]
    if not homing:
        out.insert(2, Command(CUE, cues.flip(sensed)))
    if not m.inputs.home:  # braked past the magnet, and told not to creep back
        mem.count("overshoots")
        out.append(emit("overshoot", side=sensed))
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
    m.memory.card_in_slot = False  # the count is of the cartridge: a card in the slot is out
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
    out = [Command(LED, "ready"), emit("fault_cleared", code=code, by=e.name, side=mem.side),
           *m._idle(now), Command(SAVE)]
    if not m.inputs.home:  # left between detents (a turn that timed out, say)
        mem.expected_side = None
        out += m._wait_for_turn(now)
    return out


def _clear_fault_open(m: Machine, e: Event, now: float) -> list[Command]:
    return [*_clear_fault(m, e, now), Command(LED, "busy")]


def _lid_sensor(m: Machine, e: Event, now: float) -> list[Command]:
    return m._fault("lid_sensor", now)


def _readback(m: Machine, e: Event, now: float) -> list[Command]:
    return m._fault(e.detail, now)


def _debug_run(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.debug_run = now
    return [Command(LED, "busy"), Command(MOTOR, m.settings.motor.speed),
            emit("debug_run", ms=e.value), timer("debug", now + e.value / 1000),
            timer("run", now + m.settings.timing.max_run), *m._idle(now)]


def _debug_run_over(m: Machine, e: Event, now: float) -> list[Command]:
    mem = m.memory
    started = now if mem.debug_run is None else mem.debug_run
    how = "stopped" if e.name is DEBUG_STOP else "done"
    if e.name not in (T_DEBUG, DEBUG_STOP, BEAM_CLEAR):
        how = "interrupted"
    mem.debug_run = None
    mem.debug_draining = False
    return [*m._stop_motor(), timer("debug", None), Command(LED, "ready"),
            emit("debug_run_end", end=how, after=round(now - started, 3)), *m._idle(now)]


def _debug_drain(m: Machine, e: Event, now: float) -> list[Command]:
    """The run is over with a card in the slot: motor off, and wait for the card to leave."""
    m.memory.debug_draining = True
    return [Command(MOTOR, 0.0), timer("debug", None),
            timer("jam", now + m.settings.timing.jam_timeout)]


def _debug_last_card(m: Machine, e: Event, now: float) -> list[Command]:
    return [*_debug_card_out(m, e, now), *_debug_run_over(m, e, now)]


def _draining(m: Machine, e: Event, now: float) -> bool:
    return m.memory.debug_draining


def _card_in_slot(m: Machine, e: Event, now: float) -> bool:
    return m.has_beam and m.inputs.beam_blocked


def _debug_run_lid(m: Machine, e: Event, now: float) -> list[Command]:
    return [*_debug_run_over(m, e, now), *_lid_opened(m, e, now)]


def _debug_card_in(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.card_in_slot = True
    return []


def _debug_card_out(m: Machine, e: Event, now: float) -> list[Command]:
    """A card that a debug run pushed out still leaves the cartridge: count it."""
    _count_card_out(m)
    return [emit("card_out", during="debug_run"), Command(SAVE)]


def _debug_rotate(m: Machine, e: Event, now: float) -> list[Command]:
    m.memory.expected_side = other(m.memory.side)
    return [emit("rotate", by="console"), *m._rotate(now), timer("idle", None)]


def _debug_refused(m: Machine, e: Event, now: float) -> list[Command]:
    return [emit("refused", reason="debug run")]


def _sensor_disagrees(m: Machine, e: Event, now: float) -> bool:
    """Not while a turn waits: a stopped cartridge may coast past the side sensor's edge."""
    return _sensed_side(m) != m.memory.side and not m.memory.turn_pending


def _side_moved(m: Machine, e: Event, now: float) -> list[Command]:
    """The side sensor changed with no turn going on: the cartridge moved, or the sensor lies."""
    out = m._fault("side_mismatch", now, expected=m.memory.side, sensed=_sensed_side(m))
    m.memory.side = _sensed_side(m)  # as after a turn: the sensor is the truth, and it faulted
    return out


def _internal(m: Machine, e: Event, now: float) -> list[Command]:
    return m._fault("internal", now, error=e.detail)


T = Transition
TRANSITIONS: tuple[Transition, ...] = (
    # Ready: press your luck.
    T(READY, PRESS, READY, _press_ignored, _mashed),
    T(READY, PRESS, READY, _turn_refusal, _turn_pending),
    T(READY, PRESS, READY, _reload, _empty),
    T(READY, PRESS, FAULT, _beam_fault, _beam_stuck),
    T(READY, PRESS, READY, _stock_floor, _at_stock_floor),
    T(READY, PRESS, SHOOTING, _start_shot, _lucky, draws=True),
    T(READY, PRESS, READY, _dry, draws=True),
    T(READY, LID_LEFT_CLOSED, LID_OPEN, _lid_opened),
    T(READY, LOAD, READY, _load),
    T(READY, T_IDLE, ASLEEP, _sleep),
    T(READY, SLEEP_NOW, ASLEEP, _sleep),
    T(READY, DEBUG_RUN_NOW, DEBUG_RUN, _debug_run),
    T(READY, PROFILE, READY, _use_profile),
    T(READY, HOME, FAULT, _mismatch, _pending_mismatch),
    T(READY, HOME, READY, _arrive, _pending_arrival),
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
    T(SHOOTING, PRESS, SHOOTING, _press_busy),
    T(SHOOTING, T_IDLE, SHOOTING, _rearm_idle),
    # Lid open: no shooting; fully open turns the cartridge once per opening.
    T(LID_OPEN, LID_FULL, ROTATING, _resume_turn, _turn_pending),
    T(LID_OPEN, LID_FULL, ROTATING, _start_flip, _can_rotate),
    T(LID_OPEN, LID_CLOSED, READY, _lid_closed),
    T(LID_OPEN, PRESS, LID_OPEN, _press_ignored, _mashed),
    T(LID_OPEN, PRESS, LID_OPEN, _lid_warning),
    T(LID_OPEN, LOAD, LID_OPEN, _load),
    T(LID_OPEN, T_IDLE, ASLEEP, _sleep),
    T(LID_OPEN, SLEEP_NOW, ASLEEP, _sleep),
    T(LID_OPEN, PROFILE, LID_OPEN, _use_profile),
    T(LID_OPEN, DEBUG_ROTATE, ROTATING, _debug_rotate, _lid_is_full),
    T(LID_OPEN, HOME, FAULT, _mismatch, _pending_mismatch),
    T(LID_OPEN, HOME, LID_OPEN, _arrive, _pending_arrival),
    # Rotating: to the next detent, then the side is read from the sensor.
    T(ROTATING, HOME_LEFT, ROTATING, _left_home),
    T(ROTATING, HOME, FAULT, _mismatch, _side_mismatch),
    T(ROTATING, HOME, ROTATING, None, _braking),
    T(ROTATING, HOME, ROTATING, _brake_at_home, _brakes_at_home),
    T(ROTATING, HOME, READY, _arrive, _arrived_lid_closed),
    T(ROTATING, HOME, LID_OPEN, _arrive, _arrived),
    # With pins.rotator_in2: the brake has held; creep back if it stopped past the magnet.
    T(ROTATING, T_SETTLE, ROTATING, _creep_home, _past_home),
    T(ROTATING, T_SETTLE, READY, _arrive, _lid_is_closed),
    T(ROTATING, T_SETTLE, LID_OPEN, _arrive),
    T(ROTATING, T_ROTATION, FAULT, _rotation_timeout),
    # The turn goes on only while the lid is fully open (fingers): leaving it pauses it.
    # (The lid may already read closed: its closing edge can come first out of debounce.)
    T(ROTATING, LID_LEFT_FULL, READY, _arrive, _braking_lid_closed),
    T(ROTATING, LID_LEFT_FULL, LID_OPEN, _arrive, _braking),
    T(ROTATING, LID_LEFT_FULL, READY, _pause_turn, _lid_is_closed),
    T(ROTATING, LID_LEFT_FULL, LID_OPEN, _pause_turn),
    T(ROTATING, LID_CLOSED, ROTATING, _lid_moved),
    T(ROTATING, LID_LEFT_CLOSED, ROTATING, _lid_moved),
    T(ROTATING, LOAD, ROTATING, _load),
    T(ROTATING, PRESS, ROTATING, _press_busy),
    T(ROTATING, T_IDLE, ROTATING, _rearm_idle),
    # Asleep: the press that wakes the unit is consumed.
    T(ASLEEP, PRESS, READY, _wake, _lid_is_closed),
    T(ASLEEP, PRESS, LID_OPEN, _wake),
    T(ASLEEP, WAKE_NOW, READY, _wake, _lid_is_closed),
    T(ASLEEP, WAKE_NOW, LID_OPEN, _wake),
    T(ASLEEP, LID_LEFT_CLOSED, LID_OPEN, _wake_lid),
    T(ASLEEP, LOAD, ASLEEP, _load),
    # Fault: motors are off; a lid cycle (open, then closed) or `clear` gets out.
    T(FAULT, PRESS, FAULT, _press_ignored, _mashed),
    T(FAULT, PRESS, FAULT, _fault_reminder),
    T(FAULT, LID_LEFT_CLOSED, FAULT, _fault_lid_opened),
    T(FAULT, LID_CLOSED, READY, _clear_fault, _cycled_closed),
    T(FAULT, CLEAR, READY, _clear_fault, _lid_is_closed),
    T(FAULT, CLEAR, LID_OPEN, _clear_fault_open),
    T(FAULT, LOAD, FAULT, _load),
    # Debug run: the console's capped motor run, known to the machine like a shot.
    T(DEBUG_RUN, T_DEBUG, DEBUG_RUN, _debug_drain, _card_in_slot),
    T(DEBUG_RUN, T_DEBUG, READY, _debug_run_over),
    T(DEBUG_RUN, DEBUG_STOP, DEBUG_RUN, _debug_drain, _card_in_slot),
    T(DEBUG_RUN, DEBUG_STOP, READY, _debug_run_over),
    T(DEBUG_RUN, T_RUN, FAULT, _overrun),
    T(DEBUG_RUN, T_JAM, FAULT, _jam),
    T(DEBUG_RUN, LID_LEFT_CLOSED, LID_OPEN, _debug_run_lid),
    T(DEBUG_RUN, BEAM_BLOCKED, DEBUG_RUN, _debug_card_in),
    T(DEBUG_RUN, BEAM_CLEAR, READY, _debug_last_card, _draining),
    T(DEBUG_RUN, BEAM_CLEAR, DEBUG_RUN, _debug_card_out),
    T(DEBUG_RUN, PRESS, DEBUG_RUN, _debug_refused),
    T(DEBUG_RUN, LOAD, DEBUG_RUN, _load),
    T(DEBUG_RUN, T_IDLE, DEBUG_RUN, _rearm_idle),
    # No turn going on: a side sensor that changes is a fault, not a new side.
    *(T(s, ev, FAULT, _side_moved, _sensor_disagrees)
      for s in (READY, LID_OPEN, SHOOTING, DEBUG_RUN) for ev in (YELLOW_BACK, YELLOW_FRONT)),
    # Any other state: a card the roller pushed into the slot is counted when it leaves.
    *(T(s, BEAM_CLEAR, s, _late_card_out, _roller_card_left)
      for s in (READY, LID_OPEN, ROTATING, ASLEEP, FAULT)),
    # Any state: the lid switch's two contacts agree, so neither can be believed.
    *(T(s, LID_SENSOR, FAULT, _lid_sensor) for s in STATES if s is not FAULT),
    T(FAULT, LID_SENSOR, FAULT, _lid_sensor, _new_lid_fault),
    # Any state: a read-back of the copper says it is not as the firmware drives it.
    *(T(s, READBACK, FAULT, _readback) for s in STATES if s is not FAULT),
    T(FAULT, READBACK, FAULT, _readback, _new_readback_fault),
    # Any state, on a bug the shell caught: ``Machine.handle`` sends ``internal`` to
    # ``_internal`` (fault "internal") whatever the state.
)


_BY_STATE_EVENT: dict[tuple[State, Ev], list[Transition]] = {}
for _t in TRANSITIONS:
    _BY_STATE_EVENT.setdefault((_t.source, _t.event), []).append(_t)


def mermaid() -> str:
    """The state diagram, made from ``TRANSITIONS`` (the README shows this text).

    Bookkeeping rows are left out: ``load`` (counts only), timer re-arms in place, and the
    count of a card that leaves the slot after its shot.
    """
    lines = ["stateDiagram-v2", f"    [*] --> {READY}"]
    lines.append(f"    note right of {FAULT}: from any state on {INTERNAL} (a bug; board safe)")
    seen: set[tuple[str, str, str]] = set()
    for t in TRANSITIONS:
        if t.event == LOAD or (t.event == T_IDLE and t.source == t.target) or (
                t.action is _late_card_out):
            continue
        label = t.label
        key = (t.source, t.target, label)
        if key in seen:
            continue
        seen.add(key)
        lines.append(f"    {t.source} --> {t.target}: {label}")
    return "\n".join(lines) + "\n"
