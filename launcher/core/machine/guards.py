"""The guards: named functions of the machine, the event and the time, so the diagram can
show them. They only read."""

from __future__ import annotations

from launcher.core.machine.view import MachineView
from launcher.core.machine.vocabulary import PROOFS, Event

# Guards: named functions so the diagram can show them.


def _mashed(m: MachineView, e: Event, now: float) -> bool:
    return now - m.memory.last_press < m.settings.timing.mash_guard


def _empty(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.inventory == 0


def _beam_stuck(m: MachineView, e: Event, now: float) -> bool:
    return m.has_beam and m.inputs.beam_blocked


def _at_stock_floor(m: MachineView, e: Event, now: float) -> bool:
    floor, left = m.profile.stock_floor, m.memory.inventory
    return floor > 0 and left is not None and left <= floor


def _lucky(m: MachineView, e: Event, now: float) -> bool:
    """The shell's luck draw for this press gave cards."""
    return e.value > 0


def _last_card(m: MachineView, e: Event, now: float) -> bool:
    """The card leaving the beam now completes the shot, or empties the cartridge."""
    shot, left = m.memory.shot, m.memory.inventory
    assert shot is not None
    return shot.seen + 1 >= shot.target or (left is not None and left <= 1)


def _side_mismatch(m: MachineView, e: Event, now: float) -> bool:
    expected = m.memory.expected_side
    return m.memory.left_home and expected is not None and _sensed_side(m) != expected


def _arrived(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.left_home


def _arrived_lid_closed(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.left_home and m.inputs.lid_closed


def _brakes_at_home(m: MachineView, e: Event, now: float) -> bool:
    return m.settings.brakes and m.memory.left_home


def _past_home(m: MachineView, e: Event, now: float) -> bool:
    """The brake has held, and the cartridge stopped off the home magnet: it can creep back."""
    return not m.inputs.home and m.settings.rotator.creep_speed > 0


def _can_rotate(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.rotation_armed


def _turn_pending(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.turn_pending


def _lid_is_full(m: MachineView, e: Event, now: float) -> bool:
    return m.inputs.lid_full


def _pending_arrival(m: MachineView, e: Event, now: float) -> bool:
    """A stopped turn reached its detent anyway (it coasted there, or a hand turned it)."""
    return m.memory.turn_pending and m.memory.left_home


def _pending_mismatch(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.turn_pending and _side_mismatch(m, e, now)


def _new_lid_fault(m: MachineView, e: Event, now: float) -> bool:
    return "lid_sensor" not in m.memory.latched


def _new_readback_fault(m: MachineView, e: Event, now: float) -> bool:
    return e.detail not in m.memory.latched


def _lid_is_closed(m: MachineView, e: Event, now: float) -> bool:
    return m.inputs.lid_closed


def _cycled_closed(m: MachineView, e: Event, now: float) -> bool:
    """The lid opened and closed since the fault, and it is one the lid may leave (a latched
    fault proven gone is left by `clear` only)."""
    mem = m.memory
    return mem.lid_cycled and mem.fault not in PROOFS and not mem.latched


def _sensed_side(m: MachineView) -> str:
    return "mild" if m.inputs.yellow_back else "wild"


def _roller_card_left(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.card_in_slot


def _card_in_slot(m: MachineView, e: Event, now: float) -> bool:
    return m.has_beam and m.inputs.beam_blocked


def _sensor_disagrees(m: MachineView, e: Event, now: float) -> bool:
    """Not while a turn waits: a stopped cartridge may coast past the side sensor's edge."""
    return _sensed_side(m) != m.memory.side and not m.memory.turn_pending


def _proof(e: Event) -> tuple[str, str]:
    """A ``checked`` event's fault code and what its check saw."""
    code, _, what = e.detail.partition(":")
    return code, what


def _next_step(m: MachineView, e: Event) -> bool:
    """This check is the next step of a latched fault's proof (``PROOFS``)."""
    code, what = _proof(e)
    mem = m.memory
    if code not in mem.latched:
        return False
    seen, steps = mem.proof.get(code, []), PROOFS[code]
    return len(seen) < len(steps) and steps[len(seen)] == what


def _proves(m: MachineView, e: Event) -> bool:
    """This check is the last step of a latched fault's proof: it is gone."""
    code, _ = _proof(e)
    return _next_step(m, e) and len(m.memory.proof.get(code, [])) == len(PROOFS[code]) - 1


def _all_proven(m: MachineView, e: Event, now: float) -> bool:
    """The check proves the last latched fault gone: `clear` may leave it now."""
    return _proves(m, e) and len(m.memory.latched) == 1


def _still_latched(m: MachineView, e: Event, now: float) -> bool:
    """A fault came on top of a latched one (a bug): leaving it goes back to the latched."""
    return bool(m.memory.latched)
