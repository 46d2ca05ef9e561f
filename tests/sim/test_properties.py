"""Invariants under any sequence of user actions and faults (hypothesis)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from launcher.core import machine as m
from launcher.sim.rig import SimRig

ACTIONS = st.lists(
    st.one_of(
        st.just(("press",)),
        st.just(("open", False)),
        st.just(("open", True)),
        st.just(("close",)),
        st.just(("jam",)),
        st.just(("clear_jam",)),
        st.just(("stall",)),
        st.just(("unstall",)),
        st.just(("clear",)),
        st.tuples(st.just("advance"), st.floats(0.0, 400.0)),
        st.tuples(st.just("advance"), st.floats(0.0, 0.3)),
    ),
    max_size=40,
)


def act(rig: SimRig, action: tuple) -> None:
    sim = rig.sim
    match action:
        case ("press",):
            sim.press()
        case ("open", full):
            sim.open_lid(full=full)
        case ("close",):
            sim.close_lid()
        case ("jam",):
            sim.jam()
        case ("clear_jam",):
            sim.clear_jam()
        case ("stall",):
            sim.stall_rotator(True)
        case ("unstall",):
            sim.stall_rotator(False)
        case ("clear",):
            rig.app.clear_fault()
        case ("advance", seconds):
            rig.advance(seconds)
    rig.advance(0)


def check(rig: SimRig, loaded: int) -> None:
    sim, mem = rig.sim, rig.app.machine.memory
    # The interlock: once the reactor has handled the lid edge, the motor is not running.
    if sim.lid != "closed":
        assert not sim.motor_running
    assert not (rig.state == m.ASLEEP and (sim.motor_running or sim.level("rotator")))
    if rig.state == m.FAULT:
        assert not sim.motor_running and not sim.level("rotator")
    assert 0 <= mem.dry_streak <= rig.settings.luck.side(mem.side).max_dry
    in_beam = 1 if sim.in_beam is not None else 0
    assert len(sim.cartridge) + len(sim.ejected) + in_beam == loaded
    assert mem.inventory is None or mem.inventory >= 0


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), actions=ACTIONS)
def test_safety_and_conservation_hold_after_every_action(seed, actions):
    rig = SimRig(seed=seed)
    rig.load([f"c{i}" for i in range(30)])
    for action in actions:
        act(rig, action)
        check(rig, 30)
    rig.close()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), actions=ACTIONS)
def test_replay_gives_the_same_events(seed, actions):
    def run() -> list:
        rig = SimRig(seed=seed)
        rig.load([f"c{i}" for i in range(30)])
        for action in actions:
            act(rig, action)
        out = [(round(t, 9), k, d) for t, k, d in rig.app.history]
        rig.close()
        return out

    assert run() == run()
