"""Rigs the firmware's interlock tests share: settings with some keys changed, and a unit
whose every press shoots a fixed number of cards."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from launcher.core import config
from launcher.core import machine as m
from launcher.core.profiles import parse_profile
from launcher.sim.rig import SimRig


def settings(**changes: Any) -> config.Settings:
    """The defaults with some ``[pins]`` and ``[rotator]`` keys changed, by field name."""
    s = config.load()
    pins = {k: v for k, v in changes.items() if hasattr(s.pins, k)}
    rotator = {k: v for k, v in changes.items() if hasattr(s.rotator, k)}
    unknown = set(changes) - set(pins) - set(rotator)
    assert not unknown, f"no such pin or rotator setting: {unknown}"
    return replace(s, pins=replace(s.pins, **pins), rotator=replace(s.rotator, **rotator))


def dealing_rig(cards: int = 3, **changes: Any) -> SimRig:
    """A rig whose every press shoots ``cards`` cards, with plenty loaded."""
    rig = SimRig(settings(**changes))
    rig.sim.load(range(60))
    rig.app.load(60)
    assert rig.app.use_profile(parse_profile(f"deal {cards}"))
    return rig


def press_until_shooting(rig: SimRig) -> None:
    rig.sim.press()
    rig.advance(0.0)
    assert rig.state == m.SHOOTING and rig.sim.level("motor_in1") > 0
