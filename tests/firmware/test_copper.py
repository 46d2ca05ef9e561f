"""The copper the firmware checks: the read-backs of the power contacts and of nSLEEP,
and the lid switches' plausibility, on the simulated launcher's circuit (hal/electrical.py)
with one fault injected at a time. Each fault here went unseen before these checks."""

from __future__ import annotations

import logging

import pytest
from rigs import dealing_rig, press_until_shooting

from hal.base import NEVER
from hal.circuit_faults import NetOpen, NetShort, PartFailure
from launcher.core import machine as m
from launcher.firmware.actuators import CONTACT_SETTLE, SLEEP_SETTLE
from launcher.firmware.copper import DEADMAN_CLEARED_EDGES, DEADMAN_TEST_EDGES, Phase, StartTest
from launcher.sim.rig import SimRig

LID_CYCLE = CONTACT_SETTLE + 0.05  # a lid move, then at rest long enough to be read


def faulted(rig: SimRig, code: str) -> dict:
    """``code`` was found, and is latched (tests/firmware/test_latched.py: the way out)."""
    assert rig.state == m.LATCHED and rig.app.machine.memory.fault == code, (
        rig.state, rig.app.machine.memory.fault)
    fault = rig.faults[-1]
    assert fault["code"] == code
    reasons = [d for k, d in rig.app.events("readback") if d["code"] == code]
    assert reasons, "the read-back's reason is in the log"
    return reasons[-1]


def test_a_healthy_unit_reads_its_copper_without_a_fault():
    rig = dealing_rig()
    for _ in range(3):
        rig.sim.open_lid(full=False)
        rig.advance(LID_CYCLE)
        rig.sim.close_lid()
        rig.advance(LID_CYCLE)
        press_until_shooting(rig)
        rig.settle()
        rig.advance(SLEEP_SETTLE * 2)
    rig.sim.open_lid()
    rig.settle()
    rig.sim.close_lid()
    rig.advance(LID_CYCLE)
    assert rig.faults == [] and rig.state == m.READY


@pytest.mark.parametrize("mode", ["welded", "leads_pinched", "plunger_stuck"])
def test_a_power_contact_that_stays_closed_is_found_at_the_next_lid_cycle(mode: str):
    """Copper alone cannot be trusted twice: a welded contact used to go unseen."""
    rig = dealing_rig()
    rig.sim.inject(PartFailure("S3", mode))
    rig.advance(LID_CYCLE)
    assert rig.state == m.READY  # shut, a closed contact is right
    rig.sim.open_lid(full=False)
    rig.advance(LID_CYCLE)  # one lid cycle
    reason = faulted(rig, "power_contact")
    assert "reads closed with the lid open" in reason["reason"]
    # closing the lid, and clear, while the cause is there: it stays
    rig.sim.close_lid()
    rig.advance(LID_CYCLE)
    rig.app.clear_fault()
    rig.advance(0.1)
    assert rig.app.machine.memory.latched == ["power_contact"]


@pytest.mark.parametrize("mode", ["welded", "leads_pinched", "plunger_stuck"])
def test_the_rotators_full_open_contact_stuck_closed_is_found_with_the_lid_ajar(mode: str):
    """S4, in the cartridge motor's lead: welded, it let the rotator run with the lid
    anywhere and nothing read it (the circuit campaign found it unreported)."""
    rig = dealing_rig()
    rig.sim.inject(PartFailure("S4", mode))
    rig.sim.open_lid(full=False)
    rig.advance(LID_CYCLE)
    reason = faulted(rig, "power_contact")
    assert "rotator's full-open contact reads closed" in reason["reason"]


def test_the_rotators_contact_that_never_closes_is_found_at_full_open():
    rig = dealing_rig()
    rig.sim.inject(PartFailure("S4", "open"))
    rig.sim.open_lid()
    rig.settle()
    rig.advance(LID_CYCLE)
    reason = faulted(rig, "power_contact")
    assert "rotator's full-open contact reads open" in reason["reason"]


def test_a_power_contact_that_never_closes_is_found_at_start_not_as_an_empty_launcher():
    rig = SimRig()
    rig.sim.inject(PartFailure("S3", "open"))
    rig.app.actuators.start_checks()  # the start's checks, on the broken board
    rig.advance(0.1)
    reason = faulted(rig, "power_contact")
    assert "reads open with the lid shut" in reason["reason"]


def test_nsleep_shorted_to_3v3_is_found_at_start():
    rig = SimRig()
    rig.sim.inject(NetShort("motor_sleep", "3V3"))
    rig.app.actuators.start_checks()  # the start's test, on the broken board
    rig.advance(0.1)
    reason = faulted(rig, "driver_sleep")
    assert "stayed high with the driver told to sleep" in reason["reason"]


def lagging_read_back(lag: float):
    """``before_start`` for a SimRig: nSLEEP's read-back follows the pin ``lag`` s late (an RC
    filter on the sense line; in the kernel tier, a world that polls the firmware's lines)."""
    def lag_it(sim):
        drive, sense = sim.port.drive, sim.pins.sleep_sense

        def lagged(number: int, low: bool) -> None:
            if number != sense:
                drive(number, low)
                return

            def later(eventtime: float) -> float:
                drive(number, low)
                return NEVER
            sim.reactor.register_timer(later, sim.reactor.monotonic() + lag, "test.lag")
        sim.port.drive = lagged
    return lag_it


def test_a_read_back_that_follows_nsleep_within_the_settle_time_passes_the_start_test():
    """The start's test gives the read-back SLEEP_SETTLE to follow the wake and the sleep, as
    every other read of it does (it read it at the instant it woke the driver: a read-back
    a few ms late faulted driver_sleep at every start in the kernel tier)."""
    rig = SimRig(before_start=lagging_read_back(SLEEP_SETTLE / 5))
    rig.advance(SLEEP_SETTLE * 4)
    assert rig.faults == [] and rig.state == m.READY
    assert rig.sim.level("motor_sleep") == 0  # the test over, the driver asleep


def test_a_read_back_later_than_the_settle_time_is_still_found_at_start():
    rig = SimRig(before_start=lagging_read_back(SLEEP_SETTLE * 1.5))
    rig.advance(SLEEP_SETTLE * 4)
    reason = faulted(rig, "driver_sleep")
    assert "did not rise" in reason["reason"]


@pytest.mark.parametrize("deadman", [None, 10])
def test_the_start_test_walks_its_phases_in_order_and_ends_idle(deadman, monkeypatch):
    """With the dead-man: its edges with CLR low, its edges with it high, then none; without:
    woken, then let sleep. Each step's phase, and the dead-man's level after it."""
    walked: list[tuple[Phase, int]] = []
    step = StartTest.step

    def recorded(test: StartTest, now: float) -> float:
        phase = test.phase
        nxt = step(test, now)
        walked.append((phase, test.copper.board.deadman.is_active if deadman else 0))
        return nxt

    monkeypatch.setattr(StartTest, "step", recorded)
    rig = dealing_rig(deadman=deadman)
    rig.advance(0.2)
    assert rig.faults == [] and rig.app.actuators.copper.test.phase is Phase.IDLE
    if deadman is None:
        assert walked == [(Phase.WOKEN, 0), (Phase.ASLEEP, 0)]
    else:
        phases = [Phase.CLEARED] * DEADMAN_CLEARED_EDGES + [Phase.WOKEN] * DEADMAN_TEST_EDGES
        levels = [edge % 2 == 1 for edge in range(1, len(phases))] + [False]  # the wave ended
        assert walked == [*zip(phases, levels, strict=True), (Phase.ASLEEP, False)]


def test_a_broken_nsleep_read_back_is_found_at_start():
    rig = SimRig()
    rig.sim.inject(PartFailure("R14", "open"))  # the read-back's series resistor
    rig.app.actuators.start_checks()
    rig.advance(0.1)
    faulted(rig, "driver_sleep")  # it reads as the model takes an open pin: never asleep


@pytest.mark.parametrize("mode", ["q_stuck_high", "rext_open"])
def test_a_dead_man_that_holds_nsleep_up_without_edges_is_found_at_start(mode: str):
    rig = dealing_rig(deadman=10)
    rig.advance(0.2)
    assert rig.faults == []  # healthy, the start's test passed
    rig.sim.inject(PartFailure("U2", mode))
    rig.app.actuators.start_checks()
    rig.advance(0.2)
    reason = faulted(rig, "driver_sleep")
    assert any(why in reason["reason"] for why in ("no dead-man edges", "did not rise",
                                                   "CLR held low")), reason


@pytest.mark.parametrize("fault", [NetOpen("motor_sleep", 1), NetShort("motor_sleep", "3V3")])
def test_a_dead_man_whose_clr_the_firmware_cannot_hold_low_is_found_at_start(fault):
    """CLR's wire off (the one-shot runs on its wave alone) passed the start's test: the
    circuit campaign found it unreported."""
    rig = dealing_rig(deadman=10)
    rig.advance(0.2)
    assert rig.faults == []
    rig.sim.inject(fault)
    rig.app.actuators.start_checks()
    rig.advance(0.2)
    reason = faulted(rig, "driver_sleep")
    assert "CLR held low" in reason["reason"] or "told to sleep" in reason["reason"]


def test_nsleep_shorted_high_during_a_shot_is_found_once_the_driver_should_sleep():
    rig = dealing_rig()
    press_until_shooting(rig)
    rig.sim.inject(NetShort("motor_sleep", "3V3"))
    rig.settle()
    rig.advance(rig.settings.motor.brake_time + SLEEP_SETTLE * 2)
    faulted(rig, "driver_sleep")


def test_closed_and_fully_open_at_once_is_a_lid_sensor_fault():
    rig = dealing_rig()
    rig.sim.stick("lid_open", True)  # the full-open switch stuck pressed, the lid shut
    rig.advance(0.1)
    assert rig.state == m.LATCHED and rig.app.machine.memory.fault == "lid_sensor"
    assert ("lid_sensor", {"no": "closed", "nc": "open", "full": "closed"}) in rig.app.events()


def test_a_unit_without_its_checks_says_so_at_start(caplog: pytest.LogCaptureFixture):
    with caplog.at_level(logging.WARNING):
        dealing_rig(lid_closed_nc=None, power_contact_sense=None, sleep_sense=None,
                    rotator_contact_sense=None)
    for key in ("lid_closed_nc", "power_contact_sense", "sleep_sense", "rotator_contact_sense"):
        assert f"pins.{key} = -1" in caplog.text
