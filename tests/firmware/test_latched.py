"""Latched faults: a fault of the copper or of a sensor that the firmware found keeps the
unit from shooting through lid cycles, `clear` and a reboot, until the check that found it
passes again (``m.PROOFS``) and then `clear`; each latched class's whole path, on the
simulated launcher's circuit (hal/electrical.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rigs import settings

from hal.circuit_faults import NetShort, PartFailure
from launcher.core import machine as m
from launcher.core.profiles import parse_profile
from launcher.firmware.actuators import CONTACT_SETTLE
from launcher.firmware.console import Console
from launcher.firmware.registry import E_STATE
from launcher.firmware.state import StateStore
from launcher.sim.rig import SimRig

LID_REST = CONTACT_SETTLE + 0.05  # a lid move, then at rest long enough to be read
Break = Callable[[Any], None]  # done to the simulated launcher: the fault in its copper
DEAL = parse_profile("deal 3")
_running: list[SimRig] = []


@pytest.fixture(autouse=True)
def _closed() -> Iterator[None]:
    yield
    while _running:
        _running.pop().close()


def unit(path: Path, broken: Break | None, **changes: Any) -> SimRig:
    """A unit dealing 3 cards a press (once it may), its state file at ``path``, ``broken``
    from power-on."""
    rig = SimRig(settings(**changes), store=StateStore(path), before_start=broken)
    _running.append(rig)
    rig.sim.load(range(60))
    rig.app.load(60)
    rig.app.use_profile(DEAL)  # refused in a fault: set again once it is left
    rig.advance(0.3)
    return rig


def reboot(rig: SimRig, path: Path, broken: Break | None, **changes: Any) -> SimRig:
    """The firmware stopped (its state written) and started again on the same copper."""
    _running.remove(rig)
    rig.close()
    return unit(path, broken, **changes)


def lid_cycle(rig: SimRig, full: bool = True) -> None:
    rig.sim.open_lid(full=full)
    rig.advance(LID_REST)
    rig.settle()
    rig.sim.close_lid()
    rig.advance(LID_REST)


def shoots(rig: SimRig) -> bool:
    """A press shoots cards (the roller's cards leave the slot)."""
    before = rig.sim.ejected_total
    rig.press()
    return rig.sim.ejected_total > before


def latched(rig: SimRig, code: str) -> None:
    """``code`` is latched (and maybe another the same cause made: the newest is shown)."""
    mem = rig.app.machine.memory
    assert rig.state == m.LATCHED and code in mem.latched and mem.fault == mem.latched[-1], (
        rig.state, mem.fault, mem.latched)
    assert rig.app.led.pattern == m.FAULT_BLINKS[mem.fault]
    assert rig.app.status()["latched"] == ",".join(mem.latched)


def refused_clear(rig: SimRig, code: str, stays: bool = True) -> None:
    """`clear` answers one error line naming what to do, and the fault stays."""
    console = Console(rig.app, write=lambda line: None)
    before = list(rig.app.machine.memory.latched)
    reply = console.handle_line("clear")
    rig.advance(0.2)
    assert reply == [f"error {E_STATE} {m.clear_refusal(before)}"]
    assert m.PROOF_HINTS[code] in reply[0]
    if stays:
        latched(rig, code)


def held_through_everything(rig: SimRig, path: Path, broken: Break, code: str,
                            **changes: Any) -> SimRig:
    """Latched through two lid cycles, a `clear` and a reboot, and no press shoots."""
    latched(rig, code)
    for _ in range(2):
        lid_cycle(rig)
        latched(rig, code)
    assert not shoots(rig)
    refused_clear(rig, code)
    assert not shoots(rig)
    rig = reboot(rig, path, broken, **changes)
    latched(rig, code)
    assert rig.faults[0]["at"] == "start"  # said again at the start
    assert not shoots(rig)
    lid_cycle(rig)
    latched(rig, code)
    return rig


def proven_then_cleared(rig: SimRig, code: str) -> None:
    """Proven gone: a fault `clear` leaves (the lid alone does not), and then it shoots."""
    assert rig.state == m.FAULT and rig.app.machine.memory.latched == []
    assert ("fault_proven", {"code": code, "by": m.PROOFS[code] and
            rig.app.events("fault_proven")[-1][1]["by"]}) in rig.app.events()
    assert rig.app.status()["latched"] == "proven"
    lid_cycle(rig, full=False)
    assert rig.state == m.FAULT  # a lid cycle does not leave it: `clear` does
    console = Console(rig.app, write=lambda line: None)
    assert console.handle_line("clear") == [f"ok cleared={code} state=ready"]
    rig.advance(LID_REST)
    assert rig.state == m.READY and rig.app.status().get("latched") is None
    assert rig.app.use_profile(DEAL)
    assert shoots(rig)


def weld(part: str) -> Break:
    return lambda sim: sim.inject(PartFailure(part, "welded"))


@pytest.mark.parametrize("part", ["S3", "S4"])
def test_a_welded_power_contact_stays_latched_until_a_lid_cycle_shows_it_opening(
        tmp_path: Path, part: str) -> None:
    """S3 (the lid's, in the roller's lead) welded, found at the first opening, used to
    clear itself at the closing; S4 (the full-open one, in the rotator's) is found at start."""
    path = tmp_path / "state.json"
    rig = unit(path, weld(part))
    if part == "S3":
        assert shoots(rig)  # shut, a closed contact is right: nothing is seen yet
        rig.sim.open_lid(full=False)
        rig.advance(LID_REST)
    rig = held_through_everything(rig, path, weld(part), "power_contact")
    rig.sim.repair()
    rig.advance(LID_REST)
    latched(rig, "power_contact")  # repaired is not proven
    rig.sim.open_lid(full=True)
    rig.advance(LID_REST)
    latched(rig, "power_contact")  # half the proof: fully open, it read as it should
    rig.sim.close_lid()
    rig.advance(LID_REST)
    proven_then_cleared(rig, "power_contact")


def test_a_half_proof_then_the_fault_again_starts_the_proof_afresh(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    rig = unit(path, weld("S3"))
    rig.sim.open_lid(full=False)
    rig.advance(LID_REST)
    latched(rig, "power_contact")
    rig.sim.close_lid()
    rig.advance(LID_REST)  # shut, the welded contact reads right: not the proof's first step
    assert rig.app.machine.memory.proof["power_contact"] == []
    rig.sim.repair()
    rig.sim.open_lid(full=True)
    rig.advance(LID_REST)
    assert rig.app.machine.memory.proof["power_contact"] == ["full"]
    rig.sim.inject(PartFailure("S3", "welded"))  # it welds again before the lid shuts
    rig.sim.open_lid(full=False)
    rig.advance(LID_REST)  # and reads wrong: the proof starts afresh
    assert rig.app.machine.memory.proof["power_contact"] == []
    rig.sim.repair()
    rig.sim.close_lid()
    rig.advance(LID_REST)
    latched(rig, "power_contact")  # shut alone is no proof
    lid_cycle(rig)
    assert rig.state == m.FAULT


def sleep_short(sim: Any) -> None:
    sim.inject(NetShort("motor_sleep", "3V3"))


@pytest.mark.parametrize("broken, changes", [
    (sleep_short, {}),
    (lambda sim: sim.inject(PartFailure("U2", "q_stuck_high")), {"deadman": 10}),
], ids=["nsleep_shorted_high", "deadman_q_stuck_high"])
def test_a_driver_that_cannot_sleep_stays_latched_until_its_start_test_passes(
        tmp_path: Path, broken: Break, changes: dict[str, Any]) -> None:
    """nSLEEP's start test (with the dead-man, its wave): failed at power-on, it fails again
    at every restart; repaired, the refused `clear` runs it again, and it proves it gone."""
    path = tmp_path / "state.json"
    rig = unit(path, broken, **changes)
    rig = held_through_everything(rig, path, broken, "driver_sleep", **changes)
    rig.sim.repair()
    rig.advance(LID_REST)
    latched(rig, "driver_sleep")
    refused_clear(rig, "driver_sleep", stays=False)  # its start test ran again, and passed
    assert rig.state == m.FAULT
    proven_then_cleared(rig, "driver_sleep")


def test_a_driver_repaired_while_off_is_proven_at_the_next_start(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    rig = unit(path, sleep_short)
    latched(rig, "driver_sleep")
    rig = reboot(rig, path, None)
    proven_then_cleared(rig, "driver_sleep")


def full_switch_stuck(sim: Any) -> None:
    sim.stick("lid_open", True)  # the full-open switch held pressed, the lid shut


def nc_stuck_closed(sim: Any) -> None:
    sim.stick("lid_closed_nc", True)  # the NC twin reads closed whatever the lid does


@pytest.mark.parametrize("broken", [full_switch_stuck, nc_stuck_closed])
def test_a_lid_sensor_fault_stays_latched_until_the_switches_read_apart_both_ways(
        tmp_path: Path, broken: Break) -> None:
    path = tmp_path / "state.json"
    rig = unit(path, broken)
    rig = held_through_everything(rig, path, broken, "lid_sensor")
    for sensor in ("lid_open", "lid_closed_nc"):
        rig.sim.stick(sensor, None)
    rig.advance(LID_REST)
    latched(rig, "lid_sensor")
    lid_cycle(rig)
    proven_then_cleared(rig, "lid_sensor")


def test_a_bug_on_top_of_a_latched_fault_clears_back_to_the_latched_one(tmp_path: Path):
    rig = unit(tmp_path / "state.json", weld("S3"))
    rig.sim.open_lid(full=False)
    rig.advance(LID_REST)
    rig.app._fault_internal("a test's bug")
    rig.advance(0)
    assert rig.state == m.FAULT and rig.app.machine.memory.fault == "internal"
    lid_cycle(rig, full=False)
    assert rig.state == m.FAULT  # the lid does not leave it with a fault latched beneath
    rig.app.clear_fault()
    rig.advance(LID_REST)
    latched(rig, "power_contact")


def test_two_latched_faults_each_need_their_own_proof(tmp_path: Path) -> None:
    rig = unit(tmp_path / "state.json", weld("S3"))
    rig.sim.open_lid(full=False)
    rig.advance(LID_REST)
    rig.sim.stick("lid_closed_nc", False)  # the NC twin off its wire: agrees with NO, open
    rig.advance(0.2)
    assert rig.app.machine.memory.latched == ["power_contact", "lid_sensor"]
    latched(rig, "lid_sensor")  # the newest is shown
    rig.sim.stick("lid_closed_nc", None)
    rig.sim.close_lid()
    rig.advance(LID_REST)
    lid_cycle(rig)
    latched(rig, "power_contact")  # the sensor proven; the contact still welded
    rig.sim.repair()
    lid_cycle(rig)
    proven_then_cleared(rig, "power_contact")


def test_an_ordinary_fault_still_leaves_by_a_lid_cycle_and_is_not_kept(tmp_path: Path):
    path = tmp_path / "state.json"
    rig = unit(path, None)
    rig.sim.jam()
    rig.sim.press()
    rig.advance(2.0)
    assert rig.state == m.FAULT and rig.app.machine.memory.fault == "jam"
    assert "latched" not in rig.app.status()
    rig.sim.clear_jam()
    lid_cycle(rig, full=False)
    assert rig.state == m.READY


@pytest.mark.parametrize("net, rail, changes", [
    ("motor_in1", "3V3", {}), ("motor_in2", "VM", {}),
    ("rotator", "3V3", {"rotator_in2": 9}), ("rotator_in2", "VM", {"rotator_in2": 9})])
def test_a_driver_input_held_high_is_found_at_start_before_the_driver_wakes(
        tmp_path: Path, net: str, rail: str, changes: dict[str, Any]) -> None:
    """A driver input shorted high (no read-back sees it with the driver asleep) would run
    its channel whenever the driver wakes: on the shared driver, during every flip (the
    roller) or shot (the rotator), with the lid's contact the one barrier left. Its pad reads
    high while the Pi drives it low: found at start, before nSLEEP's start test wakes the
    driver (the roller never turns), latched; repaired, the lid shut proves it gone."""
    path = tmp_path / "state.json"

    def broken(sim: Any) -> None:
        sim.inject(NetShort(net, rail))

    rig = unit(path, broken, **changes)
    assert rig.app.machine.memory.fault == "driver_input"
    # The start test never woke the driver, and the roller never turned.
    assert not any(s.enabled or s.drive for s in rig.sim.motor_history), rig.sim.motor_history
    reason = [d for k, d in rig.app.events("readback") if d["code"] == "driver_input"][-1]
    assert reason["reason"].startswith(f"{net} reads high at the Pi's pad")
    rig = held_through_everything(rig, path, broken, "driver_input", **changes)
    rig.sim.repair()
    rig.sim.open_lid(full=False)
    rig.advance(LID_REST)
    latched(rig, "driver_input")  # repaired, the lid not shut: not proven yet
    rig.sim.close_lid()
    rig.advance(LID_REST)
    proven_then_cleared(rig, "driver_input")


def test_a_state_file_that_does_not_read_holds_every_class_until_each_check_passes(
        tmp_path: Path) -> None:
    """The state file may have held a latched fault: one that does not read (a card's
    corruption, a torn write) used to start the unit fresh, the latch forgotten. Now every
    latched class this unit can prove is held, each left only when its check passes again,
    and then `clear`; a unit without nSLEEP's read-back is not asked for its proof."""
    path = tmp_path / "state.json"
    path.write_text('{"version": 1, "side": "mi')  # torn
    rig = unit(path, None)
    reset = rig.app.events("state_reset")
    assert reset and "every latched fault class held" in reset[0][1]["reason"]
    # The start's own checks (nSLEEP's test, the pads with the lid shut) prove theirs at once.
    assert [d["code"] for _, d in rig.app.events("fault_proven")] == ["driver_sleep",
                                                                       "driver_input"]
    latched(rig, "lid_sensor")
    assert rig.app.machine.memory.latched == ["power_contact", "lid_sensor"]
    assert not shoots(rig)
    refused_clear(rig, "lid_sensor")
    lid_cycle(rig)  # fully open and shut: the contacts' read-backs and the lid switch
    proven_then_cleared(rig, "lid_sensor")
    rig = reboot(rig, path, None)  # written again, readable: nothing held
    assert rig.state == m.READY and shoots(rig)
    _running.remove(rig)
    rig.close()  # its state written; then the card garbles it
    path.write_text("\0" * 64)
    rig = unit(path, None, power_contact_sense=None, rotator_contact_sense=None)
    assert rig.app.machine.memory.latched == ["lid_sensor"]  # no read-back to prove it by


def test_a_state_file_that_reads_but_fails_its_check_holds_like_one_that_does_not_read(
        tmp_path: Path) -> None:
    """A welded S3 latched, then one bit of the file flips where the JSON still reads (a
    count, or the name of the fault's record): refused by its checksum, the start holds every
    class and says which, and the welded contact keeps the unit from shooting."""
    path = tmp_path / "state.json"
    rig = unit(path, weld("S3"))
    lid_cycle(rig, full=False)  # found ajar
    latched(rig, "power_contact")
    _running.remove(rig)
    rig.close()
    text = path.read_text()
    assert '"fault"' in text
    path.write_text(text.replace('"fault"', '"faulv"'))  # 0x74 -> 0x76: one bit
    rig = unit(path, weld("S3"))
    reset = rig.app.events("state_reset")
    assert reset and "failed its check" in reset[0][1]["reason"]
    assert reset[0][1]["held"] == "power_contact,lid_sensor,driver_sleep,driver_input"
    latched(rig, "power_contact")
    assert not shoots(rig)
