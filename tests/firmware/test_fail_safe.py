"""Fail safe, one owner: a bug stops the motor, the interlock never waits, disk never blocks.

Each test names the safe state it expects. All of them run on the manual reactor except
the slow-store test, which needs the real writer thread (it waits on events, never sleeps),
and the `launcher run` import test, which needs a fresh process.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from launcher.core import config
from launcher.core import machine as m
from launcher.firmware.state import StateStore
from launcher.sim.rig import SimRig


def always_shoot(settings: config.Settings, cards: int = 4) -> config.Settings:
    table = config.side_luck("luck.mild", {"hazard": [1.0], "sizes": [cards], "weights": [1]})
    return replace(settings, luck=replace(settings.luck, mild=table))


def test_a_raising_action_mid_shot_stops_the_motor_in_the_same_turn(
        caplog: pytest.LogCaptureFixture) -> None:
    rig = SimRig(always_shoot(config.load()), seed=1)
    faults: list[str] = []
    rig.app.listeners.append(lambda kind, data: faults.append(data.get("code", ""))
                             if kind == "fault" else None)

    def broken(mach: m.Machine, e: m.Event, now: float) -> list[m.Command]:
        raise RuntimeError("injected bug in the card-in-beam action")

    with m.rows_replaced(m.Transition(m.SHOOTING, m.BEAM_BLOCKED, m.SHOOTING, broken)):
        rig.load([f"c{i}" for i in range(10)])
        rig.sim.press()
        rig.advance(0)
        assert rig.state == m.SHOOTING and rig.sim.motor_running
        with caplog.at_level(logging.ERROR, logger="launcher"):
            while rig.sim.in_beam is None:
                rig.advance(0.005)
                assert rig.now < 1.0, "no card reached the beam"
        entered = rig.now
        # Within the reactor turn that delivered the edge: motor off, rotator off, fault
        # raised.
        assert not rig.sim.motor_running
        assert rig.sim.motor_history[-1].time <= entered
        assert rig.state == m.FAULT and rig.app.machine.memory.fault == "internal"
        assert faults == ["internal"]
        assert caplog.text.count("Traceback") == 1 and "injected bug" in caplog.text
        # It stays in the fault: time passing and presses change nothing.
        rig.advance(10)
        rig.sim.press()
        rig.advance(0.5)
        assert rig.state == m.FAULT and not rig.sim.motor_running
        assert rig.app.events("fault")[-1][1]["error"].startswith(
            "the reactor, posted callback")
    assert m.rows(m.SHOOTING, m.BEAM_BLOCKED)[0].action is not broken  # the table's again
    rig.close()


def test_a_raising_timer_faults_and_the_machine_does_not_run_on(
        caplog: pytest.LogCaptureFixture) -> None:
    rig = SimRig(seed=1)

    def bad(eventtime: float) -> float:
        raise ValueError("timer bug")

    rig.reactor.register_timer(bad, rig.now + 1.0, "buggy")
    with caplog.at_level(logging.ERROR, logger="launcher"):
        rig.advance(2.0)
    assert rig.state == m.FAULT
    assert rig.app.events("fault")[-1][1]["error"] == (
        "the reactor, timer buggy: ValueError: timer bug")
    rig.app.clear_fault()
    assert rig.state == m.READY
    rig.close()


def test_a_lid_edge_inside_the_debounce_window_stops_the_motor_at_once() -> None:
    settings = always_shoot(config.load(), cards=8)
    assert settings.timing.debounce >= 0.01  # the window the lid edge falls into
    rig = SimRig(settings, seed=1)
    rig.load([f"c{i}" for i in range(20)])
    rig.sim.open_lid(full=False)
    rig.advance(0.2)
    rig.sim.close_lid()  # reported at once; the lid switch is locked out for `debounce`
    rig.advance(0.002)
    rig.sim.press()
    rig.advance(0.002)
    assert rig.state == m.SHOOTING and rig.sim.motor_running
    lifted = rig.now
    assert lifted < 0.2 + settings.timing.debounce  # still inside the lock-out window
    rig.sim.open_lid(full=False)
    rig.advance(0)
    assert not rig.sim.motor_running
    assert not rig.sim.motor_commanded  # the firmware's own stop, not only the copper's
    assert rig.sim.motor_history[-1].time == lifted
    assert rig.state == m.LID_OPEN
    rig.close()


def test_the_interlock_refuses_a_run_when_the_pin_reads_open() -> None:
    rig = SimRig(always_shoot(config.load()), seed=1)
    rig.load(["a", "b", "c", "d"])
    # The lid lifts, and the machine has not heard yet (the edge is still queued).
    rig.sim.stick("lid_closed", False)
    assert rig.app.actuators.run_motor(0.8) is False
    assert rig.app.board.motor.speed == 0 and rig.app.actuators.refusals == 1
    rig.sim.stick("lid_closed", None)
    rig.close()


class BlockingWrite:
    """A state store's write that blocks until released, as a stalled SD card does."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.texts: list[str] = []

    def __call__(self, path: Path, text: str) -> None:
        self.entered.set()
        assert self.release.wait(10), "the test never released the write"
        self.texts.append(text)


def test_a_slow_store_does_not_delay_a_press(tmp_path: Path) -> None:
    write = BlockingWrite()
    store = StateStore(tmp_path / "state.json", write=write)
    rig = SimRig(always_shoot(config.load(), cards=2), seed=1, store=store)
    try:
        rig.load([f"c{i}" for i in range(10)])  # a change: a save follows 0.2 s later
        rig.advance(0.3)
        assert write.entered.wait(10)  # the writer thread is stuck inside the write
        rig.sim.press()
        rig.advance(0)
        # The press was handled and the motor started while the write is still blocked.
        assert rig.state == m.SHOOTING and rig.sim.motor_running
        assert not write.release.is_set()
        rig.settle()
        rig.advance(0.5)  # more saves queue up behind the blocked one: the last one wins
    finally:
        write.release.set()
    assert store.flush(10)
    assert len(write.texts) == 2  # the blocked write, then only the newest state
    assert json.loads(write.texts[-1])["counters"]["cards_shot"] == 2
    rig.close()


def test_stale_temporary_files_are_removed_at_start(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(StateStore(None).load().to_json())
    stale = [tmp_path / ".state.json.k2j3h4", tmp_path / ".state.json.zz01"]
    for s in stale:
        s.write_text('{"version": 1, "side": "wi')  # a write cut off by a power cut
    unrelated = tmp_path / ".other.json.abc"
    unrelated.write_text("x")
    rig = SimRig(seed=1, store=StateStore(path))
    assert not any(s.exists() for s in stale)
    assert unrelated.exists() and path.exists()
    assert rig.app.store.problem is None
    rig.close()


RUN_PROBE = textwrap.dedent('''
    import sys
    import hal.gpio as gpio
    import launcher.firmware.runner as runner
    from hal.base import Board

    class Pin:
        def __init__(self, active=False):
            self.is_active = active
        def subscribe(self, callback):
            return lambda: None
        def on(self):
            self.is_active = True
        def off(self):
            self.is_active = False
        def close(self):
            pass

    class Motor:
        speed = 0.0
        def forward(self, speed):
            self.speed = speed
        def stop(self, brake=True):
            self.speed = 0.0
        def close(self):
            pass

    def board(pins, name):
        return Board(button=Pin(), lid_closed=Pin(True), lid_open=Pin(), exit_beam=Pin(),
                     home=Pin(True), yellow_back=Pin(True), motor=Motor(),
                     motor_enable=Pin(), rotator=Pin(), amp=Pin(), led=Pin(), name=name)

    gpio.open_board = board  # a real board as far as the firmware can tell
    real_run = runner.run_firmware

    def run_then_stop(app, *args, **kw):
        app.reactor.register_timer(lambda t: app.reactor.stop() or float("inf"), 0.0)
        return real_run(app, *args, **kw)

    runner.run_firmware = run_then_stop
    from launcher.cli.main import main
    code = main(["run", "--config", sys.argv[1], "--seed", "1"])
    loaded = sorted(m for m in sys.modules if m.startswith(
        ("hal.sim", "launcher.sim", "launcher.games", "gpiozero.pins.mock", "matplotlib")))
    print("exit", code, "loaded", loaded)
''')


def test_launcher_run_imports_no_simulation_module(tmp_path: Path) -> None:
    cfg = tmp_path / "launcher.toml"
    cfg.write_text(textwrap.dedent(f'''
        [board]
        pin_factory = "lgpio"
        [audio]
        backend = "null"
        [console]
        port = ""
        [state]
        path = "{tmp_path / 'state.json'}"
    '''))
    proc = subprocess.run([sys.executable, "-c", RUN_PROBE, str(cfg)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "exit 0 loaded []", proc.stdout + proc.stderr
    assert "started on lgpio" in proc.stderr
    # A good start on a real board leaves its pins for a safe-stop whose config breaks later.
    assert json.loads((tmp_path / "last-good-pins.json").read_text())["pins"]["motor_in1"] == 12
