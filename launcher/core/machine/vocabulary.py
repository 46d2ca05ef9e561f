"""The machine's vocabulary: its states, the events it takes, the commands it gives, and
the faults with their blink codes. Nothing here decides anything."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any, NamedTuple

from launcher.core.machine.memory import Inputs


class State(StrEnum):
    READY = "ready"
    SHOOTING = "shooting"
    LID_OPEN = "lid_open"
    ROTATING = "rotating"
    BRAKING = "braking"  # a turn at home with the brake on, until the sensor is read again
    ASLEEP = "asleep"
    FAULT = "fault"
    # A fault of the copper or of a sensor (``PROOFS``), motors off: neither the lid, nor
    # `clear`, nor a reboot leaves it; only the check that found it passing again (then it
    # is a fault `clear` leaves).
    LATCHED = "latched"
    DEBUG_RUN = "debug_run"  # the console's `motor run`: the motor on for a capped time
    DEBUG_DRAIN = "debug_drain"  # the run is over, motor off: a card still in the slot may leave
    # Parts of a state: what a flag of it used to say, made a state the table names. The
    # console, the log and ``Machine.state`` say the whole (``PART_OF``); the rows, the part.
    LEAVING = "leaving"  # rotating, still on the detent it left: a home edge is no arrival
    FAULT_OPENED = "fault_opened"  # the lid opened since the fault: closing it leaves it


(READY, SHOOTING, LID_OPEN, ROTATING, BRAKING, ASLEEP, FAULT, LATCHED, DEBUG_RUN,
 DEBUG_DRAIN, LEAVING, FAULT_OPENED) = State
STATES = tuple(State)  # every state the table names, the parts included
PART_OF = {LEAVING: ROTATING, FAULT_OPENED: FAULT}
TURNING = (ROTATING, BRAKING)  # the states of a turn of the cartridge (as ``state`` says them)


def whole(state: State) -> State:
    """The state the console says for ``state``: its whole, for a part."""
    return PART_OF.get(state, state)


def parts(*states: State) -> tuple[State, ...]:
    """``states`` with the parts of each: the rows that hold in a state hold in its parts."""
    return tuple(s for w in states for s in (w, *(p for p, of in PART_OF.items() if of is w)))

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
    "driver_sleep": 11,  # nSLEEP reads against what the driver was told (a short, the one-shot)
    "driver_input": 12,  # a driver input reads high at the Pi's pad while driven low (a short)
}
FAULT_OF_BLINKS = {n: code for code, n in FAULT_BLINKS.items()}

# The latched faults, each with what proves it gone: the observations its check must make
# again, in this order, after the fault, before `clear` may leave it (``checked`` events,
# "code:what"; one that reads wrong again starts the proof afresh).
PROOFS: dict[str, tuple[str, ...]] = {
    # A lid cycle, fully open and then shut: every power contact's read-back agreed with the
    # lid at rest both ways (the lid's open and the rotator's closed, then the other way).
    "power_contact": ("full", "closed"),
    # The same cycle with the sensing pair plausible at rest both ways (NO and NC apart).
    "lid_sensor": ("full", "closed"),
    # nSLEEP's start test passing again (with the dead-man, its wave): at a restart, or run
    # again by a `clear` that was refused.
    "driver_sleep": ("start_test",),
    # Every driver input's pad reading low again, at rest with the lid shut.
    "driver_input": ("closed",),
}
# What to do for each, in the words `clear` answers when it is refused (``clear_refusal``).
PROOF_HINTS = {
    "power_contact": "repair the power contact, then open the lid fully and close it: its "
                     "read-back must follow the lid both ways",
    "lid_sensor": "repair the lid switch, then open the lid fully and close it: its NO and NC "
                  "contacts must read apart both ways",
    "driver_sleep": "repair nSLEEP's wiring; its start test runs again now (and at each start) "
                    "and must pass",
    "driver_input": "repair the driver input's wiring (a short to 3.3 V or to the pack), then "
                    "close the lid: every input must read low at rest",
}




def clear_refusal(latched: Iterable[str]) -> str:
    """Why `clear` cannot leave these latched faults yet, and what to do."""
    return "; ".join(f"fault {code} is latched until proven gone: {PROOF_HINTS[code]}"
                     for code in latched) + "; then `clear`"


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
    CHECKED = "checked"  # a latched fault's check passed (detail: "code:what it saw")
    # A web pairing window opened (value 1) or closed (0): the LED shows it (``led_of``).
    PAIRING = "pairing"
    # The button let go. No row takes it: the shell's pairing reads it, to tell a hold that
    # confirms a window from a press (launcher/firmware/pairing.py).
    RELEASE = "release"


(PRESS, LID_CLOSED, LID_LEFT_CLOSED, LID_FULL, LID_LEFT_FULL, BEAM_BLOCKED, BEAM_CLEAR, HOME,
 HOME_LEFT, YELLOW_BACK, YELLOW_FRONT, T_CARD, T_JAM, T_RUN, T_TIMED, T_ROTATION, T_IDLE,
 T_DEBUG, T_SETTLE, LOAD, CLEAR, SLEEP_NOW, WAKE_NOW, DEBUG_RUN_NOW, DEBUG_ROTATE, DEBUG_STOP,
 INTERNAL, PROFILE, LID_SENSOR, READBACK, CHECKED, PAIRING, RELEASE) = Ev


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


# Timer names, by the event each one sends when it fires.
TIMERS = {T_CARD: "card", T_JAM: "jam", T_RUN: "run", T_TIMED: "timed",
          T_ROTATION: "rotation", T_IDLE: "idle", T_DEBUG: "debug", T_SETTLE: "settle"}
TIMER_EVENTS = {name: event for event, name in TIMERS.items()}



class Cmd(StrEnum):
    MOTOR = "motor"  # arg: speed (0 = stop)
    ROTATOR = "rotator"  # arg: a Turn; data: speed, when slow
    CUE = "cue"  # arg: cue name
    POWER = "power"  # arg: bool (False = asleep: driver, amp and LED off)
    LED = "led"  # arg: "ready" | "busy" | "off" | "pairing" | blink count for a fault
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


TURN_WAITING = "the cartridge is between detents: open the lid fully to turn it"
