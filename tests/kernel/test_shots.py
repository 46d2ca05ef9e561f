"""Press, the roller runs, the beam counts N cards, the roller stops: the real path."""

from __future__ import annotations

import time

import pytest
from kerneltier import PINS, LineWatch, levels, record


@pytest.mark.parametrize("side", ["mild", "wild"])
@pytest.mark.parametrize("seed", [1, 7, 23])
def test_a_press_shoots_exactly_the_cards_the_firmware_drew(world_factory, firmware, side,
                                                            seed):
    world = world_factory(side=side)
    fw = firmware(seed=seed)
    fw.ready()
    in1 = LineWatch(PINS.motor_in1)
    try:
        shots = 0
        for _ in range(12):  # a dry streak never passes len(hazard) - 1 (at most 5)
            mark = fw.mark()
            before = world.ejected()
            world.do(lambda sim: sim.press())
            _, kind, data = fw.first(("dry", "shoot"), mark)
            if kind == "dry":
                assert data["side"] == side
                time.sleep(0.3)  # past the mash guard
                continue
            assert data["side"] == side
            asked = int(data["cards"])
            assert in1.is_running(0.5), "the roller does not run"
            shot = fw.event("shot", mark, timeout=15)
            assert shot[2]["cards"] == str(asked)
            # The roller stopped, and it stays stopped; the cards that left are the count.
            assert in1.low_since(hold=0.05, timeout=2) is not None
            time.sleep(0.2)
            assert world.ejected() - before == asked
            assert levels("motor_in1")["motor_in1"] == 0 or levels("motor_in2")["motor_in2"]
            shots += 1
            if shots == 2:
                break
            time.sleep(0.3)
        assert shots == 2, f"fewer than two shots in 12 presses on {side}\n{fw.log()}"
    finally:
        in1.close()
    record(f"shots-{side}-{seed}", shots=shots, rate=world.port.rate)
