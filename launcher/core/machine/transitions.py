"""The whole machine as a table: for an event in a state, the first row whose guard holds
is taken (``Machine.step``); and the diagram made from it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from launcher.core.machine.actions import (
    _abort_shot,
    _arrive,
    _beam_fault,
    _brake_at_home,
    _card_in_beam,
    _card_out,
    _clear_fault,
    _clear_fault_open,
    _clear_refused,
    _creep_home,
    _debug_card_in,
    _debug_card_out,
    _debug_drain,
    _debug_last_card,
    _debug_refused,
    _debug_rotate,
    _debug_run,
    _debug_run_lid,
    _debug_run_over,
    _dry,
    _fault_lid_opened,
    _fault_reminder,
    _finish_shot,
    _jam,
    _late_card_out,
    _left_home,
    _lid_closed,
    _lid_moved,
    _lid_opened,
    _lid_sensor,
    _lid_warning,
    _load,
    _mismatch,
    _overrun,
    _pause_turn,
    _press_busy,
    _press_ignored,
    _proof_lost,
    _proof_seen,
    _ran_empty,
    _readback,
    _rearm_idle,
    _relatch,
    _reload,
    _resume_turn,
    _rotation_timeout,
    _side_moved,
    _sleep,
    _start_flip,
    _start_shot,
    _stock_floor,
    _turn_refusal,
    _use_profile,
    _wake,
    _wake_lid,
)
from launcher.core.machine.guards import (
    _all_proven,
    _arrived,
    _arrived_lid_closed,
    _at_stock_floor,
    _beam_stuck,
    _brakes_at_home,
    _can_rotate,
    _card_in_slot,
    _cycled_closed,
    _empty,
    _last_card,
    _lid_is_closed,
    _lid_is_full,
    _lucky,
    _mashed,
    _new_lid_fault,
    _new_readback_fault,
    _past_home,
    _pending_arrival,
    _pending_mismatch,
    _roller_card_left,
    _sensor_disagrees,
    _side_mismatch,
    _still_latched,
    _turn_pending,
)
from launcher.core.machine.view import MachineView
from launcher.core.machine.vocabulary import (
    ASLEEP,
    BEAM_BLOCKED,
    BEAM_CLEAR,
    BRAKING,
    CHECKED,
    CLEAR,
    DEBUG_DRAIN,
    DEBUG_ROTATE,
    DEBUG_RUN,
    DEBUG_RUN_NOW,
    DEBUG_STOP,
    FAULT,
    HOME,
    HOME_LEFT,
    INTERNAL,
    LATCHED,
    LID_CLOSED,
    LID_FULL,
    LID_LEFT_CLOSED,
    LID_LEFT_FULL,
    LID_OPEN,
    LID_SENSOR,
    LOAD,
    PRESS,
    PROFILE,
    READBACK,
    READY,
    ROTATING,
    SHOOTING,
    SLEEP_NOW,
    STATES,
    T_CARD,
    T_DEBUG,
    T_IDLE,
    T_JAM,
    T_ROTATION,
    T_RUN,
    T_SETTLE,
    T_TIMED,
    TURNING,
    WAKE_NOW,
    YELLOW_BACK,
    YELLOW_FRONT,
    Command,
    Ev,
    Event,
    State,
)

Guard = Callable[[MachineView, Event, float], bool]
Action = Callable[[MachineView, Event, float], Iterable[Command]]


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


T = Transition
TRANSITIONS: tuple[Transition, ...] = (
    # Rows of several states, written once. (A state's rows for one event are tried in
    # the table's order: these come first.)
    # A press too soon after the last one is ignored, where a press would do something.
    *(T(s, PRESS, s, _press_ignored, _mashed) for s in (READY, LID_OPEN, FAULT, LATCHED)),
    # Loading counts the cards, whatever the state.
    *(T(s, LOAD, s, _load) for s in STATES),
    # Busy at the idle timeout: no sleep; it is set again.
    *(T(s, T_IDLE, s, _rearm_idle) for s in (SHOOTING, *TURNING, DEBUG_RUN, DEBUG_DRAIN)),
    # Ready: press your luck.
    T(READY, PRESS, READY, _turn_refusal, _turn_pending),
    T(READY, PRESS, READY, _reload, _empty),
    T(READY, PRESS, FAULT, _beam_fault, _beam_stuck),
    T(READY, PRESS, READY, _stock_floor, _at_stock_floor),
    T(READY, PRESS, SHOOTING, _start_shot, _lucky, draws=True),
    T(READY, PRESS, READY, _dry, draws=True),
    T(READY, LID_LEFT_CLOSED, LID_OPEN, _lid_opened),
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
    T(SHOOTING, PRESS, SHOOTING, _press_busy),
    # Lid open: no shooting; fully open turns the cartridge once per opening.
    T(LID_OPEN, LID_FULL, ROTATING, _resume_turn, _turn_pending),
    T(LID_OPEN, LID_FULL, ROTATING, _start_flip, _can_rotate),
    T(LID_OPEN, LID_CLOSED, READY, _lid_closed),
    T(LID_OPEN, PRESS, LID_OPEN, _lid_warning),
    T(LID_OPEN, T_IDLE, ASLEEP, _sleep),
    T(LID_OPEN, SLEEP_NOW, ASLEEP, _sleep),
    T(LID_OPEN, PROFILE, LID_OPEN, _use_profile),
    T(LID_OPEN, DEBUG_ROTATE, ROTATING, _debug_rotate, _lid_is_full),
    T(LID_OPEN, HOME, FAULT, _mismatch, _pending_mismatch),
    T(LID_OPEN, HOME, LID_OPEN, _arrive, _pending_arrival),
    # Rotating: to the next detent, then the side is read from the sensor.
    T(ROTATING, HOME_LEFT, ROTATING, _left_home),
    T(ROTATING, HOME, FAULT, _mismatch, _side_mismatch),
    T(ROTATING, HOME, BRAKING, _brake_at_home, _brakes_at_home),
    T(ROTATING, HOME, READY, _arrive, _arrived_lid_closed),
    T(ROTATING, HOME, LID_OPEN, _arrive, _arrived),
    # The turn goes on only while the lid is fully open (fingers): leaving it pauses it.
    # (The lid may already read closed: its closing edge can come first out of debounce.)
    T(ROTATING, LID_LEFT_FULL, READY, _pause_turn, _lid_is_closed),
    T(ROTATING, LID_LEFT_FULL, LID_OPEN, _pause_turn),
    # Braking (pins.rotator_in2 wired): at home with the brake on, until the settle timer
    # reads the sensor again; creep back if it stopped past the magnet. The lid leaving
    # fully open ends the turn where it is, at home.
    T(BRAKING, HOME, FAULT, _mismatch, _side_mismatch),
    T(BRAKING, T_SETTLE, ROTATING, _creep_home, _past_home),
    T(BRAKING, T_SETTLE, READY, _arrive, _lid_is_closed),
    T(BRAKING, T_SETTLE, LID_OPEN, _arrive),
    T(BRAKING, LID_LEFT_FULL, READY, _arrive, _lid_is_closed),
    T(BRAKING, LID_LEFT_FULL, LID_OPEN, _arrive),
    # Either way the rotation timer bounds the whole turn; the lid closing or a press does
    # not stop it.
    *(row for s in TURNING for row in (
        T(s, T_ROTATION, FAULT, _rotation_timeout),
        T(s, LID_CLOSED, s, _lid_moved),
        T(s, LID_LEFT_CLOSED, s, _lid_moved),
        T(s, PRESS, s, _press_busy),
    )),
    # Asleep: the press that wakes the unit is consumed.
    T(ASLEEP, PRESS, READY, _wake, _lid_is_closed),
    T(ASLEEP, PRESS, LID_OPEN, _wake),
    T(ASLEEP, WAKE_NOW, READY, _wake, _lid_is_closed),
    T(ASLEEP, WAKE_NOW, LID_OPEN, _wake),
    T(ASLEEP, LID_LEFT_CLOSED, LID_OPEN, _wake_lid),
    # Fault: motors are off; a lid cycle (open, then closed) or `clear` gets out; `clear`
    # alone, once a latched fault is proven gone (and back to it, from a fault on top of it).
    T(FAULT, PRESS, FAULT, _fault_reminder),
    T(FAULT, LID_LEFT_CLOSED, FAULT, _fault_lid_opened),
    T(FAULT, LID_CLOSED, READY, _clear_fault, _cycled_closed),
    T(FAULT, CLEAR, LATCHED, _relatch, _still_latched),
    T(FAULT, CLEAR, READY, _clear_fault, _lid_is_closed),
    T(FAULT, CLEAR, LID_OPEN, _clear_fault_open),
    # Latched: a fault of the copper or a sensor, motors off. Neither the lid, nor `clear`,
    # nor a reboot gets out: only the check that found it passing again, then `clear`.
    T(LATCHED, PRESS, LATCHED, _fault_reminder),
    T(LATCHED, CLEAR, LATCHED, _clear_refused),
    T(LATCHED, CHECKED, FAULT, _proof_seen, _all_proven),
    T(LATCHED, CHECKED, LATCHED, _proof_seen),
    # Debug run: the console's capped motor run, known to the machine like a shot. Ended
    # with a card in the slot, it drains: the motor off, until that card leaves.
    T(DEBUG_RUN, T_DEBUG, DEBUG_DRAIN, _debug_drain, _card_in_slot),
    T(DEBUG_RUN, T_DEBUG, READY, _debug_run_over),
    T(DEBUG_RUN, BEAM_CLEAR, DEBUG_RUN, _debug_card_out),
    T(DEBUG_DRAIN, BEAM_CLEAR, READY, _debug_last_card),
    *(row for s in (DEBUG_RUN, DEBUG_DRAIN) for row in (
        T(s, DEBUG_STOP, DEBUG_DRAIN, _debug_drain, _card_in_slot),
        T(s, DEBUG_STOP, READY, _debug_run_over),
        T(s, T_RUN, FAULT, _overrun),
        T(s, T_JAM, FAULT, _jam),
        T(s, LID_LEFT_CLOSED, LID_OPEN, _debug_run_lid),
        T(s, BEAM_BLOCKED, s, _debug_card_in),
        T(s, PRESS, s, _debug_refused),
    )),
    # No turn going on: a side sensor that changes is a fault, not a new side.
    *(T(s, ev, FAULT, _side_moved, _sensor_disagrees)
      for s in (READY, LID_OPEN, SHOOTING, DEBUG_RUN, DEBUG_DRAIN)
      for ev in (YELLOW_BACK, YELLOW_FRONT)),
    # Any other state: a card the roller pushed into the slot is counted when it leaves.
    *(T(s, BEAM_CLEAR, s, _late_card_out, _roller_card_left)
      for s in (READY, LID_OPEN, *TURNING, ASLEEP, FAULT, LATCHED)),
    # Any state: the lid switch's two contacts agree, so neither can be believed (latched).
    *(T(s, LID_SENSOR, LATCHED, _lid_sensor) for s in STATES if s is not LATCHED),
    T(LATCHED, LID_SENSOR, LATCHED, _lid_sensor, _new_lid_fault),
    T(LATCHED, LID_SENSOR, LATCHED, _proof_lost),
    # Any state: a read-back of the copper says it is not as the firmware drives it (latched).
    *(T(s, READBACK, LATCHED, _readback) for s in STATES if s is not LATCHED),
    T(LATCHED, READBACK, LATCHED, _readback, _new_readback_fault),
    T(LATCHED, READBACK, LATCHED, _proof_lost),
    # Any state, on a bug the shell caught: ``Machine.handle`` sends ``internal`` to
    # ``_internal`` (fault "internal") whatever the state.
)


_BY_STATE_EVENT: dict[tuple[State, Ev], list[Transition]] = {}
for _t in TRANSITIONS:
    _BY_STATE_EVENT.setdefault((_t.source, _t.event), []).append(_t)


def mermaid() -> str:
    """The state diagram, made from ``TRANSITIONS`` (the README shows this text).

    Grouped by the state a row leaves, in the table's order within it. Bookkeeping rows are
    left out: ``load`` (counts only), timer re-arms in place, and the count of a card that
    leaves the slot after its shot.
    """
    lines = ["stateDiagram-v2", f"    [*] --> {READY}"]
    lines.append(f"    note right of {FAULT}: from any state on {INTERNAL} (a bug; board safe)")
    seen: set[tuple[str, str, str]] = set()
    by_source = sorted(TRANSITIONS, key=lambda t: STATES.index(t.source))  # (stable)
    for t in by_source:
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
