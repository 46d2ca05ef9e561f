"""The simulator's own physics: cards are conserved, and its histories stay bounded."""

from __future__ import annotations

import random

from hal.sim import HISTORY, PIN_HISTORY, SimLauncher
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
