"""The console's debug commands: motor runs and rotations, gated and stopped by the lid."""

from __future__ import annotations

from consoles import Session

from launcher.core import machine as m
from launcher.firmware.app_commands import MOTOR_RUN_MAX_MS
from launcher.firmware.registry import (
    E_DEBUG,
    E_STATE,
    E_VALUE,
)

# --- debug commands ----------------------------------------------------------------------


def test_motor_run_needs_debug_a_closed_lid_and_is_capped(session: Session) -> None:
    motor = session.rig.app.board.motor
    assert session.final("motor run 100").startswith(f"error {E_DEBUG} ")
    session("debug on")
    assert session.final(f"motor run {MOTOR_RUN_MAX_MS + 1}").startswith(f"error {E_VALUE} ")
    session("lid open")
    session.rig.advance(0.05)
    assert session.final("motor run 100") == f"error {E_STATE} refused: the lid is not closed"
    assert motor.speed == 0
    session("lid close")
    session.rig.advance(0.05)
    assert session.final(f"motor run {MOTOR_RUN_MAX_MS}").startswith("ok motor=on ")
    assert motor.speed > 0
    session.rig.advance(MOTOR_RUN_MAX_MS / 1000 - 0.001)
    assert motor.speed > 0
    session.rig.advance(0.002)
    assert motor.speed == 0
    assert "# event debug_run_end end=done after=0.3" in session.events
    assert session.rig.state == m.READY


def test_motor_run_stops_when_the_lid_opens(session: Session) -> None:
    session("debug on")
    session("motor run 300")
    session.rig.advance(0.05)
    session.rig.sim.open_lid(full=False)
    session.rig.advance(0)
    assert session.rig.app.board.motor.speed == 0
    assert "# event debug_run_end end=interrupted after=0.05" in session.events
    assert session.rig.state == m.LID_OPEN


def test_a_motor_run_is_known_to_the_machine_and_counts_its_cards(session: Session) -> None:
    session("cards 10")
    session("load 10")
    session("debug on")
    session("motor run 300")
    assert session.rig.state == m.DEBUG_RUN
    assert session.final("press") == "ok state=debug_run"  # refused: no shot mid-run
    assert "# event refused reason=\"debug run\"" in session.events
    session.rig.advance(0.5)  # the run is over, and it pushed cards out of the slot
    ran = len(session.rig.sim.ejected)
    assert ran > 0 and session.rig.state == m.READY
    assert session.rig.inventory == 10 - ran == len(session.rig.sim.cartridge)


def test_debug_off_and_reset_stop_a_run(session: Session) -> None:
    motor = session.rig.app.board.motor
    session("debug on")
    session("motor run 300")
    session("debug off")
    assert motor.speed == 0
    session("debug on")
    session("motor run 300")
    session.console.reset()
    mode = session.console.session
    assert motor.speed == 0 and not mode.debug and not mode.json
    assert session.final("motor run 100").startswith(f"error {E_DEBUG} ")


def open_fully_and_flip(session: Session) -> None:
    """Lift the lid fully: the cartridge flips by itself once (to Wild), and rests there."""
    session.rig.sim.open_lid()
    session.rig.settle()
    assert session.rig.state == m.LID_OPEN and session.rig.side == "wild"


def test_rotate_turns_to_the_next_detent_and_reads_the_side(session: Session) -> None:
    board = session.rig.app.board
    limit = session.rig.settings.timing.rotation_timeout
    session("debug on")
    assert session.final("rotate") == (
        f"error {E_STATE} refused: the rotator turns only with the lid fully open")
    open_fully_and_flip(session)
    assert session.final("rotate") == f"ok rotator=on limit={limit:g}"
    assert session.final("rotate") == f"error {E_STATE} refused while rotating"
    assert session.final("motor run 10") == f"error {E_STATE} refused: the lid is not closed"
    session.rig.advance(3.0)
    assert not board.rotator.is_active
    assert "# event flip side=mild" in session.events
    assert session.rig.sim.side == session.rig.side == "mild"
    assert session.rig.state == m.LID_OPEN and not session.rig.faults


def test_a_debug_rotation_then_a_press_leaves_the_side_the_sensor_reads(
        session: Session) -> None:
    # Once, the console turned the cartridge behind the machine's back and a press 0.75 s
    # later left it ready on the wrong side, between detents. Now the machine owns the turn.
    session("debug on")
    open_fully_and_flip(session)
    session("rotate")
    session.rig.advance(0.75)
    session("press")
    assert session.rig.state == m.ROTATING  # the press does not interrupt the turn
    session.rig.settle()
    assert session.rig.state == m.LID_OPEN
    assert session.rig.side == session.rig.sim.side == "mild"
    assert session.rig.app.board.home.is_active


def test_rotate_with_a_stalled_rotator_is_a_fault_with_the_rotator_off(
        session: Session) -> None:
    limit = session.rig.settings.timing.rotation_timeout
    session("debug on")
    open_fully_and_flip(session)
    session.rig.sim.stall_rotator()
    session("rotate")
    session.rig.advance(limit - 0.1)
    assert session.rig.app.board.rotator.is_active
    session.rig.advance(0.2)
    assert not session.rig.app.board.rotator.is_active
    assert session.rig.state == m.FAULT
    assert session.rig.faults[-1]["code"] == "rotation_timeout"


def test_the_lid_leaving_fully_open_stops_a_turn_and_the_next_opening_finishes_it(
        session: Session) -> None:
    rig = session.rig
    rig.sim.open_lid()
    rig.advance(0.5)  # mid-turn
    assert rig.state == m.ROTATING and rig.app.board.rotator.is_active
    angle = rig.sim.angle
    rig.sim.open_lid(full=False)  # the lid comes down a little
    # Stopped on the pin edge itself, before the reactor has run anything.
    assert not rig.app.board.rotator.is_active and rig.sim.level("motor_sleep") == 0
    rig.advance(2.0)
    assert rig.sim.angle == angle and rig.state == m.LID_OPEN
    assert '# event turn_paused reason="the lid left fully open"' in session.events
    rig.sim.close_lid()
    rig.advance(1.0)
    assert rig.state == m.READY and rig.sim.angle == angle
    rig.sim.open_lid()
    rig.settle()
    assert "# event turn_resumed" in session.events
    assert rig.sim.angle == 180.0 and rig.side == "wild" and rig.state == m.LID_OPEN
    assert not rig.faults and rig.app.machine.memory.counters["flips"] == 1
