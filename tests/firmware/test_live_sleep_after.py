"""`config set timing.sleep_after_s` answers `applied=now`: the sleep countdown under way
starts again at the new length (it went on counting the old 300 s: `sleep_in=289.5` 10.5 s
after setting 10)."""

from __future__ import annotations

from launcher.core import machine as m
from launcher.firmware.console import Console
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras


def _sleep_in(console: Console) -> float:
    status = console.handle_line("status")[-1]
    return float(dict(w.split("=", 1) for w in status.split()[1:])["sleep_in"])


def test_a_new_sleep_after_restarts_the_countdown_under_way() -> None:
    rig = SimRig(seed=1)
    console = Console(rig.app, **console_extras(rig.sim))
    try:
        rig.advance(100)
        assert _sleep_in(console) == 200
        reply = console.handle_line("config set timing.sleep_after_s 10")[-1]
        assert reply.startswith("ok timing.sleep_after_s=10") and "applied=now" in reply
        assert _sleep_in(console) == 10
        rig.advance(9.9)
        assert rig.state == m.READY
        rig.advance(0.2)
        assert rig.state == m.ASLEEP
        # Asleep, there is no countdown to restart: a new length waits for the next one.
        console.handle_line("config set timing.sleep_after_s 20")
        rig.advance(60)
        assert rig.state == m.ASLEEP
    finally:
        console.close()
        rig.close()


def test_another_change_leaves_the_countdown_alone() -> None:
    rig = SimRig(seed=1)
    console = Console(rig.app, **console_extras(rig.sim))
    try:
        rig.advance(100)
        assert console.handle_line("config set timing.mash_guard_ms 300")[-1].startswith("ok")
        assert console.handle_line("luck set mild hazard [0.5, 1.0]")[-1].startswith("ok")
        assert _sleep_in(console) == 200
    finally:
        console.close()
        rig.close()
