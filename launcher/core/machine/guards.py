"""The guards: named functions of the machine, the event and the time, so the diagram can
show them. They only read. (``sensed_side``, ``proof_of`` and ``next_step`` are the reads the
actions share.)"""

from __future__ import annotations

from launcher.core.machine.memory import Owed
from launcher.core.machine.view import MachineView
from launcher.core.machine.vocabulary import PROOFS, Event


def mashed(m: MachineView, e: Event, now: float) -> bool:
    return now - m.memory.last_press < m.settings.timing.mash_guard


def empty(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.inventory == 0


def beam_stuck(m: MachineView, e: Event, now: float) -> bool:
    return m.has_beam and m.inputs.beam_blocked


def at_stock_floor(m: MachineView, e: Event, now: float) -> bool:
    floor, left = m.profile.stock_floor, m.memory.inventory
    return floor > 0 and left is not None and left <= floor


def lucky(m: MachineView, e: Event, now: float) -> bool:
    """The shell's luck draw for this press gave cards."""
    return e.value > 0


def last_card(m: MachineView, e: Event, now: float) -> bool:
    """The card leaving the beam now completes the shot, or empties the cartridge."""
    shot, left = m.memory.shot, m.memory.inventory
    assert shot is not None
    return shot.seen + 1 >= shot.target or (left is not None and left <= 1)


def side_mismatch(m: MachineView, e: Event, now: float) -> bool:
    """The detent a turn reached shows the side it was not meant to."""
    expected = m.memory.expected_side
    return expected is not None and sensed_side(m) != expected


def brakes(m: MachineView, e: Event, now: float) -> bool:
    """``pins.rotator_in2`` is wired: the cartridge can brake at home."""
    return m.settings.brakes


def past_home(m: MachineView, e: Event, now: float) -> bool:
    """The brake has held, and the cartridge stopped off the home magnet: it can creep back."""
    return not m.inputs.home and m.settings.rotator.creep_speed > 0


def can_rotate(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.rotation_armed


def turn_owed(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.owed is not Owed.NOTHING


def lid_is_full(m: MachineView, e: Event, now: float) -> bool:
    return m.inputs.lid_full


def pending_arrival(m: MachineView, e: Event, now: float) -> bool:
    """A stopped turn reached its detent anyway (it coasted there, or a hand turned it)."""
    return m.memory.owed is Owed.OFF_DETENT


def pending_mismatch(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.owed is Owed.OFF_DETENT and side_mismatch(m, e, now)


def new_lid_fault(m: MachineView, e: Event, now: float) -> bool:
    return "lid_sensor" not in m.memory.latched


def new_readback_fault(m: MachineView, e: Event, now: float) -> bool:
    return e.detail not in m.memory.latched


def lid_is_closed(m: MachineView, e: Event, now: float) -> bool:
    return m.inputs.lid_closed


def lid_may_clear(m: MachineView, e: Event, now: float) -> bool:
    """The fault is one a lid cycle may leave (a latched fault proven gone, or one on top of a
    latched fault, is left by `clear` only)."""
    mem = m.memory
    return mem.fault not in PROOFS and not mem.latched


def sensed_side(m: MachineView) -> str:
    return "mild" if m.inputs.yellow_back else "wild"


def roller_card_left(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.card_in_slot


def card_in_slot(m: MachineView, e: Event, now: float) -> bool:
    return m.has_beam and m.inputs.beam_blocked


def sensor_disagrees(m: MachineView, e: Event, now: float) -> bool:
    """Not while a turn waits: a stopped cartridge may coast past the side sensor's edge."""
    return sensed_side(m) != m.memory.side and m.memory.owed is Owed.NOTHING


def proof_of(e: Event) -> tuple[str, str]:
    """A ``checked`` event's fault code and what its check saw."""
    code, _, what = e.detail.partition(":")
    return code, what


def next_step(m: MachineView, e: Event) -> bool:
    """This check is the next step of a latched fault's proof (``PROOFS``)."""
    code, what = proof_of(e)
    mem = m.memory
    if code not in mem.latched:
        return False
    seen, steps = mem.proof.get(code, []), PROOFS[code]
    return len(seen) < len(steps) and steps[len(seen)] == what


def _proves(m: MachineView, e: Event) -> bool:
    """This check is the last step of a latched fault's proof: it is gone."""
    code, _ = proof_of(e)
    return next_step(m, e) and len(m.memory.proof.get(code, [])) == len(PROOFS[code]) - 1


def all_proven(m: MachineView, e: Event, now: float) -> bool:
    """The check proves the last latched fault gone: `clear` may leave it now."""
    return _proves(m, e) and len(m.memory.latched) == 1


def still_latched(m: MachineView, e: Event, now: float) -> bool:
    """A fault came on top of a latched one (a bug): leaving it goes back to the latched."""
    return bool(m.memory.latched)
