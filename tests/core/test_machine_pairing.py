"""The machine's side of web pairing: an open window is an LED the machine decides
(``led_of``), in every state, with a fault's code first; the row changes nothing else."""

from __future__ import annotations

import pytest

from launcher.core import config
from launcher.core import machine as m
from launcher.core.machine import Command, Event


def machine_in(state: m.State, fault: str | None = None) -> m.Machine:
    mach = m.Machine(m.MachineSettings.of(config.load()))
    mach.memory.fault = fault
    mach.state = state  # entered, its LED sent
    return mach


@pytest.mark.parametrize("state", [s for s in m.STATES if m.whole(s) not in (m.FAULT, m.LATCHED)])
def test_a_window_blinks_slowly_in_every_state_but_a_fault(state: m.State) -> None:
    mach = machine_in(state)
    before = mach.led
    assert mach.handle(Event(m.PAIRING, 1), 0.0) == [Command(m.LED, "pairing")]
    assert mach.at is state and mach.memory.pairing
    assert mach.handle(Event(m.PAIRING, 1), 1.0) == []  # sent once
    assert mach.handle(Event(m.PAIRING, 0), 2.0) == [Command(m.LED, before)]
    assert mach.at is state and not mach.memory.pairing


@pytest.mark.parametrize("state", [m.FAULT, m.FAULT_OPENED, m.LATCHED])
def test_a_fault_s_code_wins_over_a_window(state: m.State) -> None:
    mach = machine_in(state, fault="jam")
    assert mach.handle(Event(m.PAIRING, 1), 0.0) == []
    assert mach.led == m.FAULT_BLINKS["jam"] and mach.memory.pairing
    mach.memory.fault = None
    assert m.led_of(m.READY, mach.memory) == "pairing"  # the window still shows once it clears


def test_the_release_has_no_row_and_pairing_is_not_drawn() -> None:
    assert all(not m.rows(s, m.RELEASE) for s in m.STATES)
    assert "pairing" not in m.mermaid() and "release" not in m.mermaid()
    assert m.led_fields("pairing") == {"pattern": "slow_blink"}
