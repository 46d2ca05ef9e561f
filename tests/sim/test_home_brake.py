"""Stopping at home with late Hall switches: the whole firmware on the simulated launcher.

``HALL_LAG`` is a cartridge whose home switch samples every 50 ms and whose gear motor runs
on after it is let go. Without ``pins.rotator_in2`` the firmware can only let it coast, and
it stops well past the home magnet; with it, the firmware brakes, reads the sensor again,
and creeps back, so every flip ends on the magnet.
"""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hal.sim import HALL_LAG, Physics, SimLauncher
from launcher.core import config
from launcher.core import machine as m
from launcher.core.reactor import ManualReactor
from launcher.firmware.app import build_app
from launcher.firmware.state import StateStore
from launcher.sim.rig import CueLog, SimRig

BRAKE_PIN = 4  # the suggested BIN2 pin (hardware/pinout.md)


def braking(settings: config.Settings | None = None, creep: float = 0.3) -> config.Settings:
    s = settings or config.load()
    return replace(s, pins=replace(s.pins, rotator_in2=BRAKE_PIN),
                   rotator=replace(s.rotator, creep_speed=creep))


def flips(rig: SimRig, n: int, seed: int = 1) -> list[float]:
    """``n`` flips, each at a random phase of the Hall switches' sampling; where each ended."""
    rnd = random.Random(seed)
    events: list[str] = []
    rig.app.listeners.append(lambda kind, data: events.append(kind))
    offsets = []
    for _ in range(n):
        rig.advance(rnd.uniform(0.0, 0.05))
        side = rig.flip()
        assert side == rig.sim.side  # the firmware read the side the cartridge shows
        offsets.append(rig.sim.detent_offset)
    assert events.count("flip") == n
    return offsets


def rotator_at_rest(rig: SimRig) -> bool:
    return rig.sim.level("rotator") == 0 and rig.sim.level("rotator_in2") == 0


def test_without_a_brake_the_late_switch_leaves_the_cartridge_past_its_magnet():
    """What the allowance is for: coasting, every flip stops outside the magnet's reach."""
    rig = SimRig(physics=HALL_LAG)
    offsets = flips(rig, 20)
    assert not rig.faults
    assert min(offsets) > HALL_LAG.home_zone_deg, offsets  # past it, every time
    assert max(offsets) <= 12.0 + 7.5  # coast + one sampling period of travel


def test_with_rotator_in2_every_flip_ends_on_the_magnet_and_the_rotator_let_go():
    rig = SimRig(braking(), physics=HALL_LAG)
    offsets = flips(rig, 40)
    assert not rig.faults
    assert max(abs(o) for o in offsets) <= HALL_LAG.home_zone_deg, offsets
    assert rotator_at_rest(rig) and rig.sim.board.home.is_active


def test_a_cartridge_braked_past_the_magnet_creeps_back_onto_it():
    # A brake that lets it run 6 degrees from full speed: it ends past the 4-degree magnet
    # on most flips, and the creep back must bring it home every time.
    physics = replace(HALL_LAG, brake_deg=6.0)
    rig = SimRig(braking(), physics=physics)
    offsets = flips(rig, 40)
    creeps = rig.app.machine.memory.counters.get("creeps", 0)
    assert not rig.faults and creeps >= 10, creeps
    assert max(abs(o) for o in offsets) <= physics.home_zone_deg, offsets
    assert rotator_at_rest(rig)


def test_told_not_to_creep_it_says_where_it_stopped():
    physics = replace(HALL_LAG, brake_deg=6.0)
    rig = SimRig(braking(creep=0.0), physics=physics)
    offsets = flips(rig, 20)
    past = sum(abs(o) > physics.home_zone_deg for o in offsets)
    assert past >= 5 and rig.app.machine.memory.counters["overshoots"] == past
    assert not rig.faults and rotator_at_rest(rig)


def test_a_rotator_that_stalls_while_creeping_back_faults_with_both_inputs_low():
    physics = replace(HALL_LAG, brake_deg=6.0)
    rig = SimRig(braking(), physics=physics)
    events: list[str] = []
    rig.app.listeners.append(lambda kind, data: events.append(kind))
    for _ in range(40):
        rig.sim.open_lid(full=True)
        rig.advance(0.01)
        while rig.state in m.TURNING and "creep" not in events:
            rig.advance(0.005)
        if "creep" in events:
            break
        rig.settle()
        rig.sim.close_lid()
        rig.advance(0.1)
    assert "creep" in events, "no flip needed a creep"
    rig.sim.stall_rotator()
    rig.advance(rig.settings.timing.rotation_timeout + 0.1)
    assert [f["code"] for f in rig.faults] == ["rotation_timeout"]
    assert rotator_at_rest(rig)


def test_the_brake_works_on_an_ideal_cartridge_too():
    """No lag, no run-on: the brake holds for brake_ms and the flip ends as before."""
    rig = SimRig(braking())
    offsets = flips(rig, 6)
    assert offsets == [0.0] * 6 and not rig.faults and rotator_at_rest(rig)


def test_power_on_between_detents_homes_at_the_next_detent_not_the_one_after():
    """Before, it passed the first detent (waiting for a home_left that never came) and
    stopped half a turn later, on the other side."""
    s = config.load()
    reactor = ManualReactor()
    sim = SimLauncher(reactor, s.pins, side="wild")
    sim.angle = 90.0  # between detents, yellow half just leaving the back
    sim.stick("home", None)  # let the sensors read the new angle
    sim.stick("yellow_back", None)
    app = build_app(s, reactor, random.Random(0), sim.board, cues=CueLog(),
                    store=StateStore(None))
    homed: list[dict] = []
    app.listeners.append(lambda kind, data: homed.append(data) if kind == "homed" else None)
    app.start()
    reactor.advance(2.0)
    assert homed == [] and sim.angle == 90.0  # the lid is closed: it waits
    sim.open_lid()
    reactor.advance(2.0)
    assert homed == [{"side": "wild"}] and app.machine.state == "lid_open"
    assert sim.angle == 180.0


@st.composite
def cartridges(draw: st.DrawFn) -> Physics:
    """Late switches and run-on in the ranges the fitting notes allow: the magnet is felt
    over more than the cartridge moves in one sampling period at full drive."""
    zone = draw(st.sampled_from([4.0, 5.0, 6.0, 8.0]))
    per_period = 180.0 / HALL_LAG.rotation_time  # degrees per second at full drive
    period = draw(st.sampled_from([0.0, 0.01, 0.02, 0.03, 0.05]))
    if 2 * zone <= per_period * period:
        period = 0.02
    return replace(HALL_LAG, home_zone_deg=zone, hall_period=period,
                   coast_deg=draw(st.sampled_from([0.0, 5.0, 12.0, 20.0])),
                   brake_deg=draw(st.sampled_from([0.0, 1.5, 4.0, 8.0])))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(physics=cartridges(), seed=st.integers(0, 2**16))
def test_with_a_brake_and_creep_every_flip_ends_on_the_magnet(physics: Physics, seed: int):
    rig = SimRig(braking(), physics=physics)
    offsets = flips(rig, 6, seed)
    assert not rig.faults
    assert max(abs(o) for o in offsets) <= physics.home_zone_deg, offsets
    assert rotator_at_rest(rig)
