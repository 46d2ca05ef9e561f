"""The simulator's own physics: cards are conserved, histories stay bounded, and the
cartridge runs on and its Hall switches sample as the fitting notes say."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from hal.base import Rotator
from hal.sim import HALL_LAG, HISTORY, PIN_HISTORY, Physics, SimLauncher
from launcher.core import config
from launcher.core.reactor import ManualReactor
from launcher.sim.rig import CUE_LOG, SimRig


def _card_leaving(rig: SimRig) -> object:
    """Press until a shot starts, then step until a card is in the beam, leaving normally."""
    for _ in range(50):
        rig.sim.press()
        for _ in range(100):
            rig.advance(0.005)
            if rig.sim.in_beam is not None:
                return rig.sim.in_beam
        rig.settle()
        rig.advance(1.0)
    raise AssertionError("no card reached the beam in 50 presses")


def _conserved(rig: SimRig, loaded: int) -> None:
    sim = rig.sim
    assert None not in sim.ejected and None not in sim.tray
    in_beam = 1 if sim.in_beam is not None else 0
    assert len(sim.cartridge) + sim.ejected_total + in_beam == loaded


def test_unjam_during_a_normal_passage_adds_no_phantom_card() -> None:
    """`unjam` with no jam armed, while a card leaves normally, does not count it twice."""
    rig = SimRig(seed=3)
    rig.load([f"c{i}" for i in range(30)])
    card = _card_leaving(rig)
    assert not rig.sim.jammed
    rig.sim.clear_jam()
    rig.advance(0.5)
    rig.settle()
    _conserved(rig, 30)
    assert list(rig.sim.ejected).count(card) == 1
    rig.close()


def test_jam_then_unjam_before_the_card_would_have_left_counts_it_once() -> None:
    """A jam armed while a card is already leaving, then cleared at once: one card out."""
    rig = SimRig(seed=3)
    rig.load([f"c{i}" for i in range(30)])
    card = _card_leaving(rig)
    rig.sim.jam()
    rig.sim.clear_jam()
    rig.advance(0.5)
    rig.settle()
    _conserved(rig, 30)
    assert list(rig.sim.ejected).count(card) == 1
    rig.close()


def test_a_stuck_card_leaves_when_the_jam_is_cleared() -> None:
    rig = SimRig(seed=3)
    rig.load([f"c{i}" for i in range(30)])
    rig.sim.jam()
    card = _card_leaving(rig)
    rig.advance(0.2)
    assert rig.sim.in_beam == card  # stuck
    rig.sim.clear_jam()
    assert rig.sim.in_beam is None and rig.sim.ejected[-1] == card
    rig.advance(1.0)
    _conserved(rig, 30)
    rig.close()


def test_cards_are_conserved_over_random_unjams_mid_passage() -> None:
    """The defect's own shape: random unjams/jams at random instants of many shots."""
    rng = random.Random(10_000)
    rig = SimRig(seed=5)
    loaded = 200
    rig.load([f"c{i}" for i in range(loaded)])
    for _ in range(1000):
        match rng.randrange(4):
            case 0:
                rig.sim.press()
            case 1:
                rig.sim.clear_jam()
            case 2:
                if rng.random() < 0.2:
                    rig.sim.jam()
            case _:
                pass
        rig.advance(rng.choice([0.0, 0.005, 0.005, 0.01, 0.01, 0.02, 0.03, 0.1, 0.5]))
        _conserved(rig, loaded)
        if rig.state == "fault":
            rig.sim.clear_jam()
            rig.app.clear_fault()
    rig.close()


def test_the_motor_and_pin_histories_are_bounded() -> None:
    reactor = ManualReactor()
    sim = SimLauncher(reactor, config.load().pins)
    sim.board.motor_enable.on()
    motor = sim.board.motor
    for i in range(HISTORY + 50):
        motor.forward(0.5 + (i % 2) * 0.25)
        reactor.advance(0.001)
    assert len(sim.motor_history) == HISTORY
    assert sim.motor_history[-2:] == list(sim.motor_history)[-2:]  # slices like a list
    assert sim.motor_history[-1].in1 == 0.5 + ((HISTORY + 49) % 2) * 0.25
    in1 = sim.pin(config.load().pins.motor_in1)
    assert len(in1.states) == PIN_HISTORY
    motor.stop()
    assert not sim.motor_running
    sim.board.close()


def test_the_ejected_cards_are_bounded_and_all_counted() -> None:
    reactor = ManualReactor()
    sim = SimLauncher(reactor, config.load().pins, keep=5)
    sim.load(f"c{i}" for i in range(20))
    sim.board.motor_enable.on()
    sim.board.motor.forward(1.0)
    reactor.advance(10.0)  # far longer than 20 cards take
    sim.board.motor.stop()
    assert sim.ejected_total == 20 and not sim.cartridge
    assert list(sim.ejected) == [f"c{i}" for i in range(15, 20)]
    assert sim.take() == [f"c{i}" for i in range(20)]  # the tray is emptied by take()
    sim.board.close()


def test_the_cue_log_is_bounded_and_counts_every_cue() -> None:
    rig = SimRig(seed=1)
    before = rig.cues.total
    for i in range(CUE_LOG + 10):
        rig.cues.play(f"cue{i}")
    assert len(rig.cues.played) == CUE_LOG
    assert rig.cues.played[-1] == f"cue{CUE_LOG + 9}" and rig.cues.played[0] == "cue10"
    assert rig.cues.total == before + CUE_LOG + 10
    rig.close()


# -- the cartridge: run-on after the drive stops, and Hall switches that sample -------------


def _cartridge(physics: Physics) -> tuple[ManualReactor, SimLauncher, Rotator]:
    """The rotator on both inputs of the driver's second channel, the driver awake and the
    lid fully open (its power contact is in the rotator's lead: hal/circuit.py)."""
    reactor = ManualReactor()
    pins = replace(config.load().pins, rotator_in2=9)
    sim = SimLauncher(reactor, pins, physics)
    sim.open_lid(full=True)
    sim.board.motor_enable.on()
    return reactor, sim, sim.board.rotator


LAGGY = HALL_LAG  # late switches, a coasting gear motor


def test_a_coasting_cartridge_runs_on_and_a_braked_one_barely():
    for stop, run_on in (("off", LAGGY.coast_deg), ("brake", LAGGY.brake_deg)):
        reactor, sim, rot = _cartridge(LAGGY)
        rot.on()
        reactor.advance(0.3)  # 45 degrees at full drive
        at_stop = sim.angle
        getattr(rot, stop)()
        reactor.advance(1.0)
        assert sim.angle - at_stop == pytest.approx(run_on, abs=LAGGY.step_deg)


def test_a_drive_that_lasts_no_step_moves_nothing():
    """Between two pin writes the inputs ask for a drive for microseconds: at rest, that
    must not start a coast; while creeping back, it must not turn the run-on around."""
    physics = replace(LAGGY, brake_deg=8.0)  # 2 degrees from half speed
    reactor, sim, rot = _cartridge(physics)
    rot.brake()  # passes (1, 0): ahead, for no time at all
    rot.off()  # passes (1, 0) again
    reactor.advance(1.0)
    assert sim.angle == 0.0
    rot.back(0.5)
    reactor.advance(0.24)  # 18 degrees back at half speed
    before = sim.angle
    rot.brake()  # passes (1, 0.5): ahead, for no time at all
    reactor.advance(1.0)
    ran = (before - sim.angle) % 360.0  # backwards
    assert ran == pytest.approx(physics.brake_deg * 0.5 ** 2, abs=physics.step_deg)


def test_micropower_hall_switches_report_only_when_they_sample():
    reactor, sim, rot = _cartridge(LAGGY)
    period, zone = LAGGY.hall_period, LAGGY.home_zone_deg
    rot.on()
    left_at = reported_at = None
    for _ in range(2000):
        reactor.advance(0.001)
        if left_at is None and abs(sim.detent_offset) > zone:
            left_at = reactor.monotonic()
        if left_at is not None and not sim.board.home.is_active:
            reported_at = reactor.monotonic()
            break
    assert left_at is not None and reported_at is not None
    assert 0 <= reported_at - left_at <= period + 0.001
    assert reported_at / period == pytest.approx(round(reported_at / period), abs=0.02)
