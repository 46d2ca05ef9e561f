"""The simulated launcher moves its motors by what their terminals see (hal/electrical.py on
hal/circuit.py), not by the pins' levels: the copper acts in the simulator as on a unit."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

import pytest

from hal.circuit import Build, circuit
from hal.circuit_faults import NetShort, PartFailure
from hal.sim import SimLauncher
from launcher.core import config
from launcher.core.reactor import ManualReactor

PINS = config.load().pins
DEADMAN = replace(PINS, deadman=10)


def sim(pins=PINS, build: Build | None = None) -> tuple[ManualReactor, SimLauncher]:
    reactor = ManualReactor()
    return reactor, SimLauncher(reactor, pins, build=build)


def run_roller(s: SimLauncher, speed: float = 0.85) -> None:
    s.board.motor_enable.on()
    s.board.motor.forward(speed)


def test_the_lids_power_contact_stops_the_roller_whatever_the_pins_say():
    _, s = sim()
    run_roller(s)
    assert s.motor_running and s.motor_history[-1].drive == 0.85
    s.open_lid(full=False)
    assert s.motor_commanded and not s.motor_running  # the pins still drive; the lead is open
    s.close_lid()
    assert s.motor_running
    s.board.close()


def test_a_welded_power_contact_lets_the_roller_run_with_the_lid_open():
    _, s = sim()
    s.inject(PartFailure("S3", "welded"))
    run_roller(s)
    s.open_lid(full=False)
    assert s.motor_running
    s.repair()
    assert not s.motor_running
    s.board.close()


def test_a_sleeping_driver_moves_nothing_whatever_its_inputs_say():
    _, s = sim()
    s.board.motor.forward(1.0)  # nSLEEP left low
    s.open_lid(full=True)
    s.board.rotator.on()
    assert not s.motor_running and s.solution.rotator.speed == 0
    s.board.close()


def test_the_rotator_turns_only_at_full_open():
    reactor, s = sim()
    s.board.motor_enable.on()
    s.board.rotator.on()
    reactor.advance(0.5)
    assert s.angle == 0.0  # lid shut: the full-open contact is open
    s.open_lid(full=True)
    reactor.advance(0.3)
    assert s.angle > 0.0
    s.board.close()


def test_the_read_backs_follow_the_copper_on_the_pins():
    _, s = sim()
    pc, sleep = s.pin(PINS.power_contact_sense), s.pin(PINS.sleep_sense)
    assert pc.state == 0 and sleep.state == 0  # lid shut: contact closed; driver asleep
    s.open_lid(full=False)
    assert pc.state == 1  # the contact opened
    s.board.motor_enable.on()
    assert sleep.state == 1  # nSLEEP high, read at the driver
    s.board.close()


def test_an_injected_short_is_felt_at_once_and_repaired():
    _, s = sim()
    s.board.motor_enable.on()
    assert not s.motor_running
    s.inject(NetShort("motor_in1", "3V3"))
    assert s.motor_running and not s.motor_commanded
    s.repair()
    assert not s.motor_running
    s.board.close()


def test_a_pi_that_boots_or_a_pack_that_sags_drives_nothing():
    _, s = sim()
    run_roller(s)
    s.set_pi("boot")  # every GPIO an input with its power-on pull, whatever the mock says
    assert not s.motor_running
    s.set_pi("running")
    assert s.motor_running
    s.set_supply(vm=2.0)  # under the DRV8833's 2.7 V
    assert not s.motor_running
    s.board.close()


# -- the dead-man one-shot ---------------------------------------------------------------------

def test_the_one_shot_holds_nsleep_only_while_edges_come():
    reactor, s = sim(DEADMAN)
    run_roller(s)
    assert not s.motor_running  # CLR high, but no edge yet
    dm = s.board.deadman
    for i in range(20):  # 50 Hz: a rising edge every 20 ms, for 400 ms
        (dm.on if i % 2 == 0 else dm.off)()
        assert s.motor_running or i == 0
        reactor.advance(0.01)
    assert s.motor_running
    # The last rising edge was at i = 18, 20 ms ago: the pulse lasts oneshot_width from it.
    reactor.advance(s.physics.oneshot_width - 0.021)
    assert s.motor_running  # within one pulse of the last edge
    reactor.advance(0.002)
    assert not s.motor_running and s.pin(PINS.sleep_sense).state == 0
    s.board.close()


def test_clr_low_ends_the_pulse_at_once():
    _, s = sim(DEADMAN)
    run_roller(s)
    s.board.deadman.on()
    assert s.motor_running
    s.board.motor_enable.off()
    assert not s.motor_running
    s.board.close()


def test_a_one_shot_without_its_timing_resistor_holds_on_after_one_edge():
    reactor, s = sim(DEADMAN)
    s.inject(PartFailure("R16", "open"))
    run_roller(s)
    s.board.deadman.on()
    reactor.advance(1.0)  # no edge for far longer than a pulse
    assert s.motor_running
    s.board.close()


# -- any pin port -----------------------------------------------------------------------------

class DictPins:
    """A PinPort of its own (the protocol the kernel tier's GpioSimPins keeps): levels by
    BCM number, a line toggling faster than it reports read as its duty."""

    def __init__(self) -> None:
        self.levels: dict[int, float] = {}
        self.driven: dict[int, bool] = {}
        self._listener: Callable[[], None] | None = None

    def drive(self, number: int, low: bool) -> None:
        self.driven[number] = low

    def level(self, number: int) -> float:
        return self.levels.get(number, 0.0)

    def watch(self, numbers: Iterable[int], listener: Callable[[], None]) -> None:
        self._listener = listener

    def set(self, **levels: float) -> None:
        for key, value in levels.items():
            self.levels[getattr(DEADMAN, key)] = value
        assert self._listener is not None
        self._listener()


@pytest.mark.parametrize("toggling", [0.5, 0.0])
def test_the_physics_runs_on_any_pin_port_and_a_toggling_line_is_edges(toggling):
    reactor = ManualReactor()
    port = DictPins()
    s = SimLauncher(reactor, DEADMAN, port=port)
    assert port.driven[DEADMAN.lid_closed] is True  # shut: the NO contact pulls it low
    assert port.driven[DEADMAN.lid_closed_nc] is False
    port.set(motor_sleep=1.0, motor_in1=0.85, deadman=toggling)
    reactor.advance(0.2)
    port.set()
    assert s.motor_running == bool(toggling)
    assert port.driven[DEADMAN.sleep_sense] is not bool(toggling)


def test_the_sims_circuit_is_the_units():
    _, s = sim(build=Build(rotator="mosfet"))
    assert s.circuit == circuit(PINS, Build(rotator="mosfet"))
    s.board.close()
