"""hardware/bring-up.md's "Brake at home" step works as it is written: it told the maker to
type `rotate` with the lid closed and the unit ready, which the console refuses (the
rotator turns only with the lid fully open)."""

from __future__ import annotations

import re
from pathlib import Path

from launcher.core import config
from launcher.firmware.console import Console
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras

STEP = re.search(r"\*\*Brake at home\*\*(.*?)\n- \[ \]|\*\*Brake at home\*\*(.*?)\n\n",
                 (Path(__file__).resolve().parents[2] / "hardware" / "bring-up.md")
                 .read_text(encoding="utf-8"), re.S)


def _step() -> str:
    assert STEP is not None
    return " ".join((STEP.group(1) or STEP.group(2)).split())


def _console(rig: SimRig) -> Console:
    return Console(rig.app, **console_extras(rig.sim))


def test_the_brake_at_home_step_is_done_with_the_lid_fully_open():
    step = _step()
    assert "lid closed" not in step and "fully open" in step
    settings = config.settings_from_dict(config.merge(config.default_raw(),
                                                      {"pins": {"rotator_in2": 9}}))
    rig = SimRig(settings, seed=1)
    console = _console(rig)
    try:
        # What the step said before: refused.
        console.handle_line("debug on")
        assert console.handle_line("rotate")[-1].startswith("error ")
        # As it says now: open the lid fully, let that turn end, then rotate a few times.
        assert console.handle_line("lid full")[-1].startswith("ok")
        rig.advance(3)
        for _ in range(3):
            assert console.handle_line("rotate")[-1].startswith("ok rotator=on")
            rig.advance(3)
            assert "home=true" in console.handle_line("side")[-1]
        flips = [d for kind, d in rig.app.events() if kind == "flip"]
        assert len(flips) == 4  # the opening's turn and three `rotate`s, each to a detent
        assert console.handle_line("debug off")[-1].startswith("ok")
    finally:
        console.close()
        rig.close()
