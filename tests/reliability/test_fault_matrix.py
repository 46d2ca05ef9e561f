"""The fault matrix: each fault, the safe state it leaves the launcher in, and what it says.

Every test names the state reached and checks the message a person sees (the console's
event line, the log line or the command's one line). docs/RELIABILITY.md is the table of
these; the audio and serial-port rows are tested where their adapters are
(`tests/hal/test_audio_backends.py`, `tests/firmware/test_console_serial.py`) and the
bad-file rows in `tests/core/test_config_inputs.py` and `tests/core/test_store.py`.
"""

from __future__ import annotations

import errno
import json
import logging
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from launcher.core import config
from launcher.core import machine as m
from launcher.firmware.console import Console
from launcher.firmware.state import StateStore
from launcher.sim.rig import SimRig

LAUNCHER = [sys.executable, "-m", "launcher.cli.main"]


class Watched:
    """A SimRig with a console whose event lines are kept, and cards loaded."""

    def __init__(self, settings: config.Settings | None = None, cards: int = 20,
                 store: StateStore | None = None) -> None:
        self.rig = SimRig(settings, seed=3, store=store)
        self.lines: list[str] = []
        self.console = Console(self.rig.app, write=self.lines.append)
        self.rig.load([f"c{i}" for i in range(cards)])

    def shoot(self) -> None:
        """Press until a shot starts (the luck table is forced to shoot in these tests)."""
        self.rig.sim.press()
        self.rig.advance(0)
        assert self.rig.state == m.SHOOTING

    def safe(self) -> None:
        """The safe state every fault leaves: motor and rotator off."""
        assert not self.rig.sim.motor_running
        assert not self.rig.sim.level("rotator")

    def close(self) -> None:
        self.console.close()
        self.rig.close()


def shooting_settings(cards: int = 3) -> config.Settings:
    s = config.load()
    table = config.side_luck("luck.mild", {"hazard": [1.0], "sizes": [cards], "weights": [1]})
    return replace(s, luck=replace(s.luck, mild=table))


def test_jam_mid_shot_faults_with_the_motor_off():
    w = Watched(shooting_settings())
    w.rig.sim.jam()
    w.shoot()
    w.rig.advance(2.0)
    assert w.rig.state == m.FAULT and w.rig.app.machine.memory.fault == "jam"
    w.safe()
    assert "# event fault code=jam" in w.lines
    assert w.rig.app.led.pattern == m.FAULT_BLINKS["jam"] == 2
    w.close()


def test_a_stalled_rotator_is_a_rotation_timeout_with_the_rotator_off():
    w = Watched()
    w.rig.sim.stall_rotator()
    w.rig.sim.open_lid(full=True)
    w.rig.advance(w.rig.settings.timing.rotation_timeout + 0.1)
    assert w.rig.state == m.FAULT and w.rig.app.machine.memory.fault == "rotation_timeout"
    w.safe()
    assert "# event fault code=rotation_timeout" in w.lines
    w.close()


def test_a_home_sensor_stuck_at_home_is_a_rotation_timeout():
    w = Watched()
    w.rig.sim.stick("home", True)  # the cartridge turns, the sensor never says it left
    w.rig.sim.open_lid(full=True)
    w.rig.advance(w.rig.settings.timing.rotation_timeout + 0.1)
    assert w.rig.app.machine.memory.fault == "rotation_timeout"
    w.safe()
    w.close()


def test_a_yellow_sensor_that_disagrees_after_a_turn_is_a_side_mismatch():
    w = Watched()
    w.rig.sim.stick("yellow_back", True)  # says Mild whatever the cartridge does
    w.rig.sim.open_lid(full=True)
    w.rig.advance(3.0)
    assert w.rig.state == m.FAULT and w.rig.app.machine.memory.fault == "side_mismatch"
    w.safe()
    assert "# event fault code=side_mismatch expected=wild sensed=mild" in w.lines
    w.close()


def test_a_yellow_sensor_that_changes_with_no_turn_is_a_side_mismatch():
    w = Watched()
    w.rig.sim.stick("yellow_back", False)
    w.rig.advance(0)
    assert w.rig.app.machine.memory.fault == "side_mismatch"
    assert "# event fault code=side_mismatch expected=mild sensed=wild" in w.lines
    w.close()


def test_a_beam_stuck_broken_refuses_the_shot():
    w = Watched(shooting_settings())
    w.rig.sim.stick("exit_beam", True)
    w.rig.advance(0)
    w.rig.sim.press()
    w.rig.advance(0)
    assert w.rig.state == m.FAULT and w.rig.app.machine.memory.fault == "beam_blocked"
    w.safe()
    # The motor never ran: not one sample of it running (the driver was never woken).
    assert not any(s.running for s in w.rig.sim.motor_history)
    assert w.rig.sim.level("motor_sleep") == 0
    assert "# event fault code=beam_blocked" in w.lines
    w.close()


def test_an_exception_inside_the_firmware_is_an_internal_fault(caplog):
    w = Watched(shooting_settings())
    w.shoot()

    def bug(eventtime: float) -> float:
        raise RuntimeError("a bug")

    w.rig.reactor.register_timer(bug, w.rig.now, "buggy")
    with caplog.at_level(logging.ERROR, logger="launcher"):
        w.rig.advance(0.001)
    assert w.rig.state == m.FAULT and w.rig.app.machine.memory.fault == "internal"
    w.safe()
    assert any(line.startswith("# event fault code=internal error=") for line in w.lines)
    assert "internal error in timer buggy; motors off" in caplog.text
    w.close()


class FullDisk:
    """A state file write that fails as a full SD card does, until there is room again."""

    def __init__(self) -> None:
        self.full = True
        self.written: list[str] = []

    def __call__(self, path: Path, text: str) -> None:
        if self.full:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.written.append(text)


def test_a_full_disk_on_save_is_logged_once_and_the_launcher_plays_on(tmp_path, caplog):
    disk = FullDisk()
    store = StateStore(tmp_path / "state.json", write=disk)
    w = Watched(shooting_settings(), store=store)
    with caplog.at_level(logging.WARNING, logger="launcher"):
        for _ in range(3):
            w.rig.press()
            w.rig.advance(0.5)
        assert store.flush(10)
        assert w.rig.state == m.READY and w.rig.faults == []  # shots went on
        assert store.last_error is not None and "No space left" in store.last_error
        assert caplog.text.count("cannot write state file") == 1
        disk.full = False
        w.rig.press()
        w.rig.advance(0.5)
        assert store.flush(10)
    assert store.last_error is None and disk.written
    assert "written again" in caplog.text
    w.close()


def test_a_pin_factory_that_cannot_start_is_one_line_naming_the_fix(tmp_path):
    cfg = tmp_path / "launcher.toml"
    cfg.write_text(f'[board]\npin_factory = "pigpio"\n[audio]\nbackend = "null"\n'
                   f'[console]\nport = ""\n[state]\npath = "{tmp_path / "s.json"}"\n')
    proc = subprocess.run([*LAUNCHER, "run", "--config", str(cfg)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: pin factory pigpio failed") and "pigpio" in last
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(("content", "expect"), [
    (b"[motor]\nspeed = 0.8\n# caf\xe9\n", "not UTF-8: byte 0xe9 on line 3"),
    (b"[motor\nspeed = ", "not valid TOML"),
])
def test_a_corrupt_config_stops_the_start_with_one_line(tmp_path, content, expect):
    cfg = tmp_path / "launcher.toml"
    cfg.write_bytes(content)
    proc = subprocess.run([*LAUNCHER, "run", "--config", str(cfg)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]  # one line
    assert proc.stderr.startswith("config error: file = ") and expect in proc.stderr


def test_a_corrupt_state_file_is_reported_and_replaced(tmp_path):
    path = tmp_path / "state.json"
    path.write_text("[" * 100_000)
    w = Watched(store=StateStore(path))
    assert "# event state_reset" not in w.lines  # reported at start, before the console
    reset = w.rig.app.events("state_reset")
    assert reset and "unreadable" in reset[0][1]["reason"]
    # The file may have held a latched fault: every class this unit can prove is held until
    # its check passes again (the start's own checks prove theirs at once: nSLEEP's test, the
    # pads), and nothing shoots meanwhile (a safe refusal, not a fresh start).
    mem = w.rig.app.machine.memory
    held = ["power_contact", "lid_sensor"]
    assert w.rig.state == m.LATCHED and mem.latched == held, mem.latched
    w.rig.advance(1)
    assert w.rig.app.store.flush(10)
    assert path.read_text().startswith("{")  # replaced by a good file, the latch in it
    assert json.loads(path.read_text())["fault"]["unproven"] == held
    w.close()
