"""The actions: what a transition does, as the commands it returns for the shell. None sends
an LED command: the LED is the state's (``led.led_of``), sent by the machine as it enters one.
(``idle``, ``rotate`` and ``wait_for_turn`` build commands ``Machine.start`` shares.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from launcher.core import cues
from launcher.core.machine.guards import next_step, proof_of, sensed_side
from launcher.core.machine.memory import Owed, Shot, other
from launcher.core.machine.view import MachineView
from launcher.core.machine.vocabulary import (
    BEAM_CLEAR,
    CUE,
    DEBUG_STOP,
    LEAVING,
    LID_CLOSED,
    LID_SENSOR,
    MOTOR,
    POWER,
    PROOFS,
    SAVE,
    T_DEBUG,
    TURN_WAITING,
    Command,
    Event,
    Turn,
    clear_refusal,
    emit,
    timer,
    turn,
)
from launcher.core.profiles import parse_profile


def _accept_press(m: MachineView, e: Event, now: float) -> None:
    mem = m.memory
    mem.last_press = now
    mem.count("presses")
    mem.streak.pressed(e.value)


def press_ignored(m: MachineView, e: Event, now: float) -> list[Command]:
    """A press inside the mash guard of the last one: nothing happens, but it is said and
    counted (``stats``: ``mashed``), so a script that presses too fast can tell."""
    m.memory.count("mashed")
    return [emit("press_ignored", reason="mashed")]


def press_busy(m: MachineView, e: Event, now: float) -> list[Command]:
    """A press while a shot or a turn goes on: it does nothing (as on the toy), and says so."""
    return [emit("press_ignored", reason=m.state)]


def dry(m: MachineView, e: Event, now: float) -> list[Command]:
    _accept_press(m, e, now)
    mem = m.memory
    mem.count("dry")
    return [Command(CUE, cues.press(mem.side, mem.dry_streak)),
            emit("dry", side=mem.side, streak=mem.dry_streak), *idle(m, now), Command(SAVE)]


def stock_floor(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now
    left = m.memory.inventory
    return [Command(CUE, cues.HAND_DRAW),
            emit("refused", reason=f"the stock is down to {left}: the hand is a draw"),
            *idle(m, now)]


def use_profile(m: MachineView, e: Event, now: float) -> list[Command]:
    m.profile = parse_profile(e.detail)
    m.memory.streak.flipped()  # a new game starts its streak afresh
    return [emit("profile", name=m.profile.name), *idle(m, now)]


def reload(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now
    return [Command(CUE, cues.RELOAD), emit("empty", side=m.memory.side), *idle(m, now)]


def turn_refusal(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now
    return [Command(CUE, cues.LID_OPEN), emit("refused", reason=TURN_WAITING), *idle(m, now)]


def lid_warning(m: MachineView, e: Event, now: float) -> list[Command]:
    return [Command(CUE, cues.LID_OPEN), emit("refused", reason="lid open"), *idle(m, now)]


def beam_fault(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now
    return _fault(m, "beam_blocked", now)


def start_shot(m: MachineView, e: Event, now: float) -> Iterator[Command]:
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
    yield emit("shoot", side=mem.side, cards=n)
    yield timer("run", now + t.max_run)
    yield timer("idle", None)
    if mem.shot.timed:
        yield timer("timed", now + n * t.timed_card)
    else:
        yield timer("card", now + t.card_timeout)


def card_in_beam(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.card_in_slot = True
    return [timer("card", None), timer("jam", now + m.settings.timing.jam_timeout)]


def _count_card_out(m: MachineView) -> None:
    mem = m.memory
    mem.card_in_slot = False
    mem.count("cards_shot")
    if mem.inventory is not None:
        mem.inventory = max(0, mem.inventory - 1)


def card_out(m: MachineView, e: Event, now: float) -> list[Command]:
    assert m.memory.shot is not None
    m.memory.shot.seen += 1
    _count_card_out(m)
    return [timer("jam", None), timer("card", now + m.settings.timing.card_timeout)]


def late_card_out(m: MachineView, e: Event, now: float) -> list[Command]:
    """A card the roller pushed into the slot left after its shot ended (a jam cleared by
    hand, a lid opened mid-shot): it has left the cartridge all the same."""
    _count_card_out(m)
    return [emit("card_out", late=True), Command(SAVE)]


def finish_shot(m: MachineView, e: Event, now: float) -> list[Command]:
    if e.name == BEAM_CLEAR:
        card_out(m, e, now)
    mem = m.memory
    shot = mem.shot
    assert shot is not None
    if shot.timed:
        mem.count("cards_shot", shot.target)
        if mem.inventory is not None:
            mem.inventory = max(0, mem.inventory - shot.target)
        shot.seen = shot.target
    mem.shot = None
    out = [*_stop_motor(m),
           emit("shot", side=mem.side, cards=shot.seen, asked=shot.target), *idle(m, now),
           Command(SAVE)]
    if mem.inventory == 0:
        out += [Command(CUE, cues.RELOAD), emit("empty", side=mem.side)]
    elif m.profile.after_shot is not None:
        out.append(Command(CUE, m.profile.after_shot))
    return out


def ran_empty(m: MachineView, e: Event, now: float) -> list[Command]:
    mem = m.memory
    shot = mem.shot
    assert shot is not None
    mem.shot = None
    mem.inventory = 0
    return [*_stop_motor(m), Command(CUE, cues.RELOAD),
            emit("shot", side=mem.side, cards=shot.seen, asked=shot.target),
            emit("empty", side=mem.side), *idle(m, now), Command(SAVE)]


def jam(m: MachineView, e: Event, now: float) -> list[Command]:
    return _fault(m, "jam", now)


def overrun(m: MachineView, e: Event, now: float) -> list[Command]:
    return _fault(m, "overrun", now)


def rotation_timeout(m: MachineView, e: Event, now: float) -> list[Command]:
    return _fault(m, "rotation_timeout", now)


def mismatch(m: MachineView, e: Event, now: float) -> list[Command]:
    out = _fault(m, "side_mismatch", now, expected=m.memory.expected_side,
                   sensed=sensed_side(m))
    m.memory.side = sensed_side(m)  # the sensor is the truth; the fault says they disagreed
    return out


def abort_shot(m: MachineView, e: Event, now: float) -> list[Command]:
    mem = m.memory
    shot = mem.shot
    assert shot is not None
    mem.shot = None
    return [*_stop_motor(m), emit("shot_aborted", side=mem.side, cards=shot.seen,
                                   asked=shot.target, reason="lid opened"),
            *lid_opened(m, e, now), Command(SAVE)]


def lid_opened(m: MachineView, e: Event, now: float) -> list[Command]:
    if m.memory.inventory == 0:
        m.memory.inventory = None  # opened to reload: the count is unknown until `load`
    return [Command(CUE, cues.LID_OPEN), emit("lid", position="open"), *idle(m, now)]


def lid_closed(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.rotation_armed = True
    return [emit("lid", position="closed"), *idle(m, now)]


def lid_moved(m: MachineView, e: Event, now: float) -> list[Command]:
    if e.name == LID_CLOSED:
        m.memory.rotation_armed = True
    return idle(m, now)


def start_flip(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.expected_side = other(m.memory.side)
    return [emit("lid", position="full"), *rotate(m, now), timer("idle", None)]


def resume_turn(m: MachineView, e: Event, now: float) -> list[Command]:
    """The lid is fully open again: finish the turn that was stopped (or home the cartridge);
    the side is read from the sensor when it arrives, as after any turn."""
    return [emit("lid", position="full"), emit("turn_resumed"), *rotate(m, now),
            timer("idle", None)]


def pause_turn(m: MachineView, e: Event, now: float) -> list[Command]:
    """The lid left fully open mid-turn: the rotator is already stopped (the interlock, on
    the pin thread); the turn waits for the next full opening (still on the detent it was
    leaving, or off it)."""
    m.memory.owed = Owed.ON_DETENT if m.at is LEAVING else Owed.OFF_DETENT
    return [turn(Turn.STOP), timer("rotation", None), timer("settle", None),
            Command(CUE, cues.LID_OPEN),
            emit("turn_paused", reason="the lid left fully open"), *idle(m, now)]


def brake_at_home(m: MachineView, e: Event, now: float) -> list[Command]:
    """Home: brake, and read the sensor again once the cartridge has surely stopped (the
    switch reports late, so it may have stopped past the magnet)."""
    return [turn(Turn.BRAKE), timer("settle", now + m.settings.rotator.brake)]


def creep_home(m: MachineView, e: Event, now: float) -> list[Command]:
    """Stopped past the home magnet: turn slowly towards it (back first, then to and fro)
    until the sensor sees it again; the rotation timer still bounds the whole turn."""
    mem = m.memory
    how = Turn.BACK if mem.creep_back else Turn.AHEAD
    mem.creep_back = not mem.creep_back
    mem.count("creeps")
    return [turn(how, m.settings.rotator.creep_speed), emit("creep", to=how)]


def arrive(m: MachineView, e: Event, now: float) -> list[Command]:
    mem = m.memory
    sensed = sensed_side(m)
    homing = mem.expected_side is None
    mem.side = sensed
    mem.streak.flipped()
    mem.expected_side = None
    mem.owed = Owed.NOTHING
    if m.inputs.lid_closed:
        mem.rotation_armed = True  # the next opening of the lid is a new one
    if not homing:
        mem.count("flips")
    out = [turn(Turn.OFF), timer("rotation", None),
           emit("homed" if homing else "flip", side=sensed), *idle(m, now), Command(SAVE)]
    if not homing:
        out.insert(2, Command(CUE, cues.flip(sensed)))
    if not m.inputs.home:  # braked past the magnet, and told not to creep back
        mem.count("overshoots")
        out.append(emit("overshoot", side=sensed))
    return out


def sleep(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.count("sleeps")
    return [Command(CUE, cues.SLEEP), Command(POWER, False), timer("idle", None),
            emit("sleep"), Command(SAVE)]


def wake(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.last_press = now  # the waking press is consumed, and counts for the mash guard
    return [Command(POWER, True), Command(CUE, cues.WAKE), emit("wake", by=e.name), *idle(m, now)]


def wake_lid(m: MachineView, e: Event, now: float) -> list[Command]:
    return [*wake(m, e, now), *lid_opened(m, e, now)]


def rearm_idle(m: MachineView, e: Event, now: float) -> list[Command]:
    return idle(m, now)


def load(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.inventory = e.value
    m.memory.card_in_slot = False  # the count is of the cartridge: a card in the slot is out
    return [emit("loaded", cards=e.value), Command(SAVE)]


def pairing(m: MachineView, e: Event, now: float) -> list[Command]:
    """A web pairing window opened (1) or closed (0): only the LED changes (``led_of``)."""
    m.memory.pairing = bool(e.value)
    return []


def fault_reminder(m: MachineView, e: Event, now: float) -> list[Command]:
    return [Command(CUE, cues.FAULT), emit("refused", reason=f"fault {m.memory.fault}")]


def clear_fault(m: MachineView, e: Event, now: float) -> list[Command]:
    mem = m.memory
    code = mem.fault
    mem.fault = None
    mem.rotation_armed = True
    mem.side = sensed_side(m)
    out = [emit("fault_cleared", code=code, by=e.name, side=mem.side), *idle(m, now),
           Command(SAVE)]
    if not m.inputs.home:  # left between detents (a turn that timed out, say)
        mem.expected_side = None
        out += wait_for_turn(m, now)
    return out


def lid_sensor(m: MachineView, e: Event, now: float) -> list[Command]:
    return _latch(m, "lid_sensor", now)


def readback(m: MachineView, e: Event, now: float) -> list[Command]:
    return _latch(m, e.detail, now)


def clear_refused(m: MachineView, e: Event, now: float) -> list[Command]:
    """`clear` on a latched fault whose check has not passed again: it stays."""
    return [Command(CUE, cues.FAULT), emit("refused", reason=clear_refusal(m.memory.latched))]


def proof_seen(m: MachineView, e: Event, now: float) -> list[Command]:
    """A latched fault's check passed: kept; with all it must see, that fault is proven gone
    (`clear` leaves it once no other is latched)."""
    if not next_step(m, e):
        return []  # not this proof's next step (the lid ajar, a step seen already)
    code, what = proof_of(e)
    mem = m.memory
    seen = mem.proof.setdefault(code, [])
    seen.append(what)
    if len(seen) < len(PROOFS[code]):
        return []
    mem.latched.remove(code)
    del mem.proof[code]
    mem.fault = mem.latched[-1] if mem.latched else code
    return [emit("fault_proven", code=code, by=what), Command(SAVE)]


def proof_lost(m: MachineView, e: Event, now: float) -> list[Command]:
    """A latched fault's check failed again: its proof so far counts for nothing."""
    code = "lid_sensor" if e.name is LID_SENSOR else e.detail
    m.memory.proof[code] = []
    return []


def relatch(m: MachineView, e: Event, now: float) -> list[Command]:
    """`clear` of a fault that came on top of a latched one: back to the latched fault."""
    mem = m.memory
    cleared, mem.fault = mem.fault, mem.latched[-1]
    return [emit("fault_cleared", code=cleared, by=e.name, latched=",".join(mem.latched)),
            Command(SAVE)]


def debug_run(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.debug_run = now
    return [Command(MOTOR, m.settings.motor.speed),
            emit("debug_run", ms=e.value), timer("debug", now + e.value / 1000),
            timer("run", now + m.settings.timing.max_run), *idle(m, now)]


def debug_run_over(m: MachineView, e: Event, now: float) -> list[Command]:
    mem = m.memory
    started = now if mem.debug_run is None else mem.debug_run
    how = "stopped" if e.name is DEBUG_STOP else "done"
    if e.name not in (T_DEBUG, DEBUG_STOP, BEAM_CLEAR):
        how = "interrupted"
    mem.debug_run = None
    return [*_stop_motor(m), timer("debug", None),
            emit("debug_run_end", end=how, after=round(now - started, 3)), *idle(m, now)]


def debug_drain(m: MachineView, e: Event, now: float) -> list[Command]:
    """The run is over with a card in the slot: motor off, and wait for the card to leave."""
    return [Command(MOTOR, 0.0), timer("debug", None),
            timer("jam", now + m.settings.timing.jam_timeout)]


def debug_last_card(m: MachineView, e: Event, now: float) -> list[Command]:
    return [*debug_card_out(m, e, now), *debug_run_over(m, e, now)]


def debug_run_lid(m: MachineView, e: Event, now: float) -> list[Command]:
    return [*debug_run_over(m, e, now), *lid_opened(m, e, now)]


def debug_card_in(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.card_in_slot = True
    return []


def debug_card_out(m: MachineView, e: Event, now: float) -> list[Command]:
    """A card that a debug run pushed out still leaves the cartridge: count it."""
    _count_card_out(m)
    return [emit("card_out", during="debug_run"), Command(SAVE)]


def debug_rotate(m: MachineView, e: Event, now: float) -> list[Command]:
    m.memory.expected_side = other(m.memory.side)
    return [emit("rotate", by="console"), *rotate(m, now), timer("idle", None)]


def debug_refused(m: MachineView, e: Event, now: float) -> list[Command]:
    return [emit("refused", reason="debug run")]


def side_moved(m: MachineView, e: Event, now: float) -> list[Command]:
    """The side sensor changed with no turn going on: the cartridge moved, or the sensor lies."""
    out = _fault(m, "side_mismatch", now, expected=m.memory.side, sensed=sensed_side(m))
    m.memory.side = sensed_side(m)  # as after a turn: the sensor is the truth, and it faulted
    return out


def internal_fault(m: MachineView, e: Event, now: float) -> list[Command]:
    return _fault(m, "internal", now, error=e.detail)


# Helpers that build commands, for the actions and for ``Machine.start``.


def idle(m: MachineView, now: float) -> list[Command]:
    return [timer("idle", now + m.settings.timing.sleep_after)]


def _stop_motor(m: MachineView) -> list[Command]:
    return [Command(MOTOR, 0.0), timer("card", None), timer("jam", None),
            timer("run", None), timer("timed", None)]


def rotate(m: MachineView, now: float) -> list[Command]:
    mem = m.memory
    # Whether it starts on its detent (``leaving``) or off it (it stopped past a magnet, or
    # powered up between detents: no home_left will come, and the next home is the
    # arrival) is the state it enters (``Machine.step``, ``ENTERS``).
    mem.rotation_armed = False
    mem.owed = Owed.NOTHING
    mem.creep_back = True
    return [turn(Turn.AHEAD), timer("rotation", now + m.settings.timing.rotation_timeout)]


def wait_for_turn(m: MachineView, now: float) -> list[Command]:
    """The cartridge is off its detent: say so, and turn it at the next full opening."""
    m.memory.owed = Owed.OFF_DETENT  # the next detent it reaches is the arrival
    return [Command(CUE, cues.LID_OPEN), emit("turn_waiting", reason=TURN_WAITING), *idle(m, now)]


def _latch(m: MachineView, code: str, now: float) -> list[Command]:
    """A fault of the copper or a sensor: latched, until its check passes again (``PROOFS``)."""
    out = _fault(m, code, now)
    mem = m.memory
    if code in mem.latched:
        mem.latched.remove(code)
    mem.latched.append(code)  # the newest last: the LED shows it
    mem.proof[code] = []  # what was seen before it failed again proves nothing
    return out


def _fault(m: MachineView, code: str, now: float, **data: Any) -> list[Command]:
    mem = m.memory
    mem.fault = code
    mem.shot = None
    mem.debug_run = None
    mem.owed = Owed.NOTHING  # leaving the fault looks at the home sensor again
    mem.count("faults")
    cue = cues.JAM if code == "jam" else cues.FAULT
    return [*_stop_motor(m), turn(Turn.OFF), timer("rotation", None),
            timer("settle", None), timer("debug", None), Command(CUE, cue),
            emit("fault", code=code, **data), Command(SAVE)]
