"""The guards: named functions of the machine, the event and the time, so the diagram can
show them. They only read."""

from __future__ import annotations

from launcher.core.machine.view import MachineView
from launcher.core.machine.vocabulary import Event

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
    return m.memory.fault != "lid_sensor"


def _new_readback_fault(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.fault != e.detail


def _lid_is_closed(m: MachineView, e: Event, now: float) -> bool:
    return m.inputs.lid_closed


def _cycled_closed(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.lid_cycled


def _sensed_side(m: MachineView) -> str:
    return "mild" if m.inputs.yellow_back else "wild"


def _roller_card_left(m: MachineView, e: Event, now: float) -> bool:
    return m.memory.card_in_slot


def _card_in_slot(m: MachineView, e: Event, now: float) -> bool:
    return m.has_beam and m.inputs.beam_blocked


def _sensor_disagrees(m: MachineView, e: Event, now: float) -> bool:
    """Not while a turn waits: a stopped cartridge may coast past the side sensor's edge."""
    return _sensed_side(m) != m.memory.side and not m.memory.turn_pending
