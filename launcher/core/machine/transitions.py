"""The whole machine as a table: for an event in a state, the first row whose guard holds
is taken (``Machine.step``); the part a row enters of a state with parts (``ENTERS``); and the
diagram made from it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from launcher.core.machine import actions as a
from launcher.core.machine import guards as g
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
    FAULT_OPENED,
    HOME,
    HOME_LEFT,
    INTERNAL,
    LATCHED,
    LEAVING,
    LID_CLOSED,
    LID_FULL,
    LID_LEFT_CLOSED,
    LID_LEFT_FULL,
    LID_OPEN,
    LID_SENSOR,
    LOAD,
    PAIRING,
    PART_OF,
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
    parts,
    whole,
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
    # A row back into its own state that enters it afresh (a new fault on a fault): the part
    # is picked again (``ENTERS``), as for a row from another state.
    reenters: bool = False

    @property
    def label(self) -> str:
        guard = f" [{self.guard.__name__.strip('_')}]" if self.guard else ""
        return f"{self.event}{guard}"


T = Transition
TRANSITIONS: tuple[Transition, ...] = (
    # Rows of several states, written once. (A state's rows for one event are tried in
    # the table's order: these come first.)
    # A press too soon after the last one is ignored, where a press would do something.
    *(T(s, PRESS, s, a.press_ignored, g.mashed)
      for s in parts(READY, LID_OPEN, FAULT, LATCHED)),
    # Loading counts the cards, whatever the state.
    *(T(s, LOAD, s, a.load) for s in STATES),
    # A web pairing window opens or closes, whatever the state: the LED says so.
    *(T(s, PAIRING, s, a.pairing) for s in STATES),
    # Busy at the idle timeout: no sleep; it is set again.
    *(T(s, T_IDLE, s, a.rearm_idle)
      for s in parts(SHOOTING, *TURNING, DEBUG_RUN, DEBUG_DRAIN)),
    # Any state, on a bug the shell caught (the board is already safe): fault "internal".
    *(T(s, INTERNAL, FAULT, a.internal_fault, reenters=True) for s in STATES),
    # Ready: press your luck.
    T(READY, PRESS, READY, a.turn_refusal, g.turn_owed),
    T(READY, PRESS, READY, a.reload, g.empty),
    T(READY, PRESS, FAULT, a.beam_fault, g.beam_stuck),
    T(READY, PRESS, READY, a.stock_floor, g.at_stock_floor),
    T(READY, PRESS, SHOOTING, a.start_shot, g.lucky, draws=True),
    T(READY, PRESS, READY, a.dry, draws=True),
    T(READY, LID_LEFT_CLOSED, LID_OPEN, a.lid_opened),
    T(READY, T_IDLE, ASLEEP, a.sleep),
    T(READY, SLEEP_NOW, ASLEEP, a.sleep),
    T(READY, DEBUG_RUN_NOW, DEBUG_RUN, a.debug_run),
    T(READY, PROFILE, READY, a.use_profile),
    T(READY, HOME, FAULT, a.mismatch, g.pending_mismatch),
    T(READY, HOME, READY, a.arrive, g.pending_arrival),
    # Shooting: the motor runs until the beam has counted the cards.
    T(SHOOTING, BEAM_BLOCKED, SHOOTING, a.card_in_beam),
    T(SHOOTING, BEAM_CLEAR, READY, a.finish_shot, g.last_card),
    T(SHOOTING, BEAM_CLEAR, SHOOTING, a.card_out),
    T(SHOOTING, T_TIMED, READY, a.finish_shot),
    T(SHOOTING, T_CARD, READY, a.ran_empty),
    T(SHOOTING, T_JAM, FAULT, a.jam),
    T(SHOOTING, T_RUN, FAULT, a.overrun),
    T(SHOOTING, LID_LEFT_CLOSED, LID_OPEN, a.abort_shot),
    T(SHOOTING, PRESS, SHOOTING, a.press_busy),
    # Lid open: no shooting; fully open turns the cartridge once per opening.
    T(LID_OPEN, LID_FULL, ROTATING, a.resume_turn, g.turn_owed),
    T(LID_OPEN, LID_FULL, ROTATING, a.start_flip, g.can_rotate),
    T(LID_OPEN, LID_CLOSED, READY, a.lid_closed),
    T(LID_OPEN, PRESS, LID_OPEN, a.lid_warning),
    T(LID_OPEN, T_IDLE, ASLEEP, a.sleep),
    T(LID_OPEN, SLEEP_NOW, ASLEEP, a.sleep),
    T(LID_OPEN, PROFILE, LID_OPEN, a.use_profile),
    T(LID_OPEN, DEBUG_ROTATE, ROTATING, a.debug_rotate, g.lid_is_full),
    T(LID_OPEN, HOME, FAULT, a.mismatch, g.pending_mismatch),
    T(LID_OPEN, HOME, LID_OPEN, a.arrive, g.pending_arrival),
    # Rotating: to the next detent, then the side is read from the sensor. A turn that
    # starts on its detent is ``leaving`` it until the sensor says it has left (``ENTERS``):
    # a home edge before that is no arrival.
    T(LEAVING, HOME_LEFT, ROTATING),
    T(ROTATING, HOME, FAULT, a.mismatch, g.side_mismatch),
    T(ROTATING, HOME, BRAKING, a.brake_at_home, g.brakes),
    T(ROTATING, HOME, READY, a.arrive, g.lid_is_closed),
    T(ROTATING, HOME, LID_OPEN, a.arrive),
    # The turn goes on only while the lid is fully open (fingers): leaving it pauses it.
    # (The lid may already read closed: its closing edge can come first out of debounce.)
    *(row for s in parts(ROTATING) for row in (
        T(s, LID_LEFT_FULL, READY, a.pause_turn, g.lid_is_closed),
        T(s, LID_LEFT_FULL, LID_OPEN, a.pause_turn),
    )),
    # Braking (pins.rotator_in2 wired): at home with the brake on, until the settle timer
    # reads the sensor again; creep back if it stopped past the magnet. The lid leaving
    # fully open ends the turn where it is, at home.
    T(BRAKING, HOME, FAULT, a.mismatch, g.side_mismatch),
    T(BRAKING, T_SETTLE, ROTATING, a.creep_home, g.past_home),
    T(BRAKING, T_SETTLE, READY, a.arrive, g.lid_is_closed),
    T(BRAKING, T_SETTLE, LID_OPEN, a.arrive),
    T(BRAKING, LID_LEFT_FULL, READY, a.arrive, g.lid_is_closed),
    T(BRAKING, LID_LEFT_FULL, LID_OPEN, a.arrive),
    # Either way the rotation timer bounds the whole turn; the lid closing or a press does
    # not stop it.
    *(row for s in parts(*TURNING) for row in (
        T(s, T_ROTATION, FAULT, a.rotation_timeout),
        T(s, LID_CLOSED, s, a.lid_moved),
        T(s, LID_LEFT_CLOSED, s, a.lid_moved),
        T(s, PRESS, s, a.press_busy),
    )),
    # Asleep: the press that wakes the unit is consumed.
    T(ASLEEP, PRESS, READY, a.wake, g.lid_is_closed),
    T(ASLEEP, PRESS, LID_OPEN, a.wake),
    T(ASLEEP, WAKE_NOW, READY, a.wake, g.lid_is_closed),
    T(ASLEEP, WAKE_NOW, LID_OPEN, a.wake),
    T(ASLEEP, LID_LEFT_CLOSED, LID_OPEN, a.wake_lid),
    # Fault: motors are off; a lid cycle (open, then closed) or `clear` gets out; `clear`
    # alone, once a latched fault is proven gone (and back to it, from a fault on top of it).
    # Entered with the lid open, or once it opens, it is ``fault_opened``: closing leaves.
    T(FAULT, LID_LEFT_CLOSED, FAULT_OPENED),
    T(FAULT_OPENED, LID_CLOSED, READY, a.clear_fault, g.lid_may_clear),
    *(row for s in parts(FAULT) for row in (
        T(s, PRESS, s, a.fault_reminder),
        T(s, CLEAR, LATCHED, a.relatch, g.still_latched),
        T(s, CLEAR, READY, a.clear_fault, g.lid_is_closed),
        T(s, CLEAR, LID_OPEN, a.clear_fault),
    )),
    # Latched: a fault of the copper or a sensor, motors off. Neither the lid, nor `clear`,
    # nor a reboot gets out: only the check that found it passing again, then `clear`.
    T(LATCHED, PRESS, LATCHED, a.fault_reminder),
    T(LATCHED, CLEAR, LATCHED, a.clear_refused),
    T(LATCHED, CHECKED, FAULT, a.proof_seen, g.all_proven),
    T(LATCHED, CHECKED, LATCHED, a.proof_seen),
    # Debug run: the console's capped motor run, known to the machine like a shot. Ended
    # with a card in the slot, it drains: the motor off, until that card leaves.
    T(DEBUG_RUN, T_DEBUG, DEBUG_DRAIN, a.debug_drain, g.card_in_slot),
    T(DEBUG_RUN, T_DEBUG, READY, a.debug_run_over),
    T(DEBUG_RUN, BEAM_CLEAR, DEBUG_RUN, a.debug_card_out),
    T(DEBUG_DRAIN, BEAM_CLEAR, READY, a.debug_last_card),
    *(row for s in (DEBUG_RUN, DEBUG_DRAIN) for row in (
        T(s, DEBUG_STOP, DEBUG_DRAIN, a.debug_drain, g.card_in_slot),
        T(s, DEBUG_STOP, READY, a.debug_run_over),
        T(s, T_RUN, FAULT, a.overrun),
        T(s, T_JAM, FAULT, a.jam),
        T(s, LID_LEFT_CLOSED, LID_OPEN, a.debug_run_lid),
        T(s, BEAM_BLOCKED, s, a.debug_card_in),
        T(s, PRESS, s, a.debug_refused),
    )),
    # No turn going on: a side sensor that changes is a fault, not a new side.
    *(T(s, ev, FAULT, a.side_moved, g.sensor_disagrees)
      for s in (READY, LID_OPEN, SHOOTING, DEBUG_RUN, DEBUG_DRAIN)
      for ev in (YELLOW_BACK, YELLOW_FRONT)),
    # Any other state: a card the roller pushed into the slot is counted when it leaves.
    *(T(s, BEAM_CLEAR, s, a.late_card_out, g.roller_card_left)
      for s in parts(READY, LID_OPEN, *TURNING, ASLEEP, FAULT, LATCHED)),
    # Any state: the lid switch's two contacts agree, so neither can be believed (latched).
    *(T(s, LID_SENSOR, LATCHED, a.lid_sensor) for s in STATES if s is not LATCHED),
    T(LATCHED, LID_SENSOR, LATCHED, a.lid_sensor, g.new_lid_fault),
    T(LATCHED, LID_SENSOR, LATCHED, a.proof_lost),
    # Any state: a read-back of the copper says it is not as the firmware drives it (latched).
    *(T(s, READBACK, LATCHED, a.readback) for s in STATES if s is not LATCHED),
    T(LATCHED, READBACK, LATCHED, a.readback, g.new_readback_fault),
    T(LATCHED, READBACK, LATCHED, a.proof_lost),
)

# The part a row into a state with parts enters, by what the machine reads as it enters:
# a turn starting on its detent is ``leaving`` it; a fault entered with the lid open counts
# the lid as opened (closing it leaves).
ENTERS: dict[State, Callable[[MachineView], State]] = {
    ROTATING: lambda m: LEAVING if m.inputs.home else ROTATING,
    FAULT: lambda m: FAULT if m.inputs.lid_closed else FAULT_OPENED,
}
# What the diagram notes of each part (it draws a part's rows only where its whole's differ).
PART_NOTES = {
    LEAVING: "part of rotating, still on its detent: the rows of rotating but home's",
    FAULT_OPENED: "part of fault, the lid opened since: the rows of fault, and lid_closed",
}

_ROWS: dict[tuple[State, Ev], list[Transition]] = {}
for _t in TRANSITIONS:
    _ROWS.setdefault((_t.source, _t.event), []).append(_t)


def rows(state: State, event: Ev) -> Sequence[Transition]:
    """The rows for ``event`` in ``state``, in the table's order."""
    return _ROWS.get((state, event), ())


@contextmanager
def rows_replaced(*replacements: Transition) -> Iterator[None]:
    """A test hook: within the block the machine takes these rows for their (state, event)
    instead of the table's (a broken action, to see what the shell does with a bug)."""
    keys = {(t.source, t.event) for t in replacements}
    saved = {k: _ROWS.get(k) for k in keys}
    for k in keys:
        _ROWS[k] = [t for t in replacements if (t.source, t.event) == k]
    try:
        yield
    finally:
        for k, old in saved.items():
            if old is None:
                del _ROWS[k]
            else:
                _ROWS[k] = old


def mermaid() -> str:
    """The state diagram, made from ``TRANSITIONS`` (the README shows this text).

    Grouped by the state a row leaves (a part with its whole), in the table's order within
    it; a part's rows only where they differ from its whole's. Bookkeeping rows are left
    out: ``load`` (counts only), ``pairing`` (the LED only), timer re-arms in place, and the
    count of a card that leaves the slot after its shot; ``internal``, a row from every
    state, is a note.
    """
    lines = ["stateDiagram-v2", f"    [*] --> {READY}"]
    lines.append(f"    note right of {FAULT}: from any state on {INTERNAL} (a bug; board safe)")
    lines += [f"    note right of {part}: {PART_NOTES[part]}" for part in PART_OF]

    def key(t: Transition) -> tuple[str, str, str]:
        return t.source, t.target, t.label

    def as_whole(t: Transition) -> tuple[str, str, str]:
        target = whole(t.source) if t.target is t.source else t.target
        return whole(t.source), target, t.label

    of_wholes = {key(t) for t in TRANSITIONS if t.source not in PART_OF}
    seen: set[tuple[str, str, str]] = set()
    by_source = sorted(TRANSITIONS, key=lambda t: STATES.index(whole(t.source)))  # (stable)
    for t in by_source:
        if t.event in (LOAD, PAIRING, INTERNAL) or (
                t.event == T_IDLE and t.source == t.target) or (
                t.action is a.late_card_out) or key(t) in seen:
            continue
        seen.add(key(t))
        if t.source in PART_OF and as_whole(t) in of_wholes:
            continue
        lines.append(f"    {t.source} --> {t.target}: {t.label}")
    return "\n".join(lines) + "\n"
