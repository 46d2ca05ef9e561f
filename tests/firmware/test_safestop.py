"""``launcher safe-stop`` leaves the motor and rotator pins low, whatever the dead process left."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from gpiozero import PWMOutputDevice
from gpiozero.exc import PinPWMUnsupported
from gpiozero.pins.mock import MockFactory, MockPin, MockPWMPin
from hypothesis import given, settings
from hypothesis import strategies as st

from hal.base import HardwareError
from hal.gpio import GpioOutput, build_board
from launcher.cli.main import build_parser, main
from launcher.core import config
from launcher.core import machine as m
from launcher.core.errors import ConfigError
from launcher.firmware.runner import RESTART_EXIT
from launcher.firmware.safestop import (
    SAFE_LOW,
    drive_safe,
    factory_names,
    remember_pins,
    safe_stop,
    settings_for_safe_stop,
    state_folder,
    targets,
)
from launcher.sim.rig import STEP, SimRig

MOCK = replace(config.load(), pin_factory="mock")


class ReleasedPin(MockPWMPin):
    """A mock pin that remembers the level it had when it was first let go.

    gpiozero's mock PWM pin drops to 0 when closed, which would hide a pin that safe-stop
    never drove; the level at release is what the real pin keeps (pigpio) or what the
    pull-down has to hold (lgpio).
    """

    released_at: float | None = None

    def close(self) -> None:
        if self.released_at is None:
            self.released_at = float(self.state)
        super().close()


def after_kill(dead: MockFactory) -> MockFactory:
    """What a fresh process finds after ``kill -9``: new pins at the dead process's levels.

    That is pigpio's behaviour (the daemon keeps every output as it was last set): the
    new factory holds no reservation, and each output still drives its old level.
    """
    fresh = MockFactory(pin_class=ReleasedPin)
    for name in SAFE_LOW:
        number = getattr(MOCK.pins, name)
        old, new = dead.pin(number), fresh.pin(number)
        if old.function == "output":
            new.function = "output"
            new.frequency = old.frequency
            new.state = old.state
    return fresh


def levels(factory: MockFactory) -> dict[str, float]:
    return {name: float(factory.pin(getattr(MOCK.pins, name)).state) for name in SAFE_LOW}


def grab(factory: MockFactory) -> dict[str, ReleasedPin]:
    """The pins safe-stop must drive (taken before it runs: closing the factory forgets them)."""
    return {name: factory.pin(getattr(MOCK.pins, name)) for name in SAFE_LOW}


def released(pins: dict[str, ReleasedPin]) -> dict[str, float | None]:
    return {name: pin.released_at for name, pin in pins.items()}


def stop_on(factory: MockFactory) -> tuple[str, dict]:
    """Run safe-stop against ``factory``; the factory used and the levels the pins were left at."""
    pins = grab(factory)
    used = safe_stop(MOCK, make=lambda name: factory)
    return used.factory, released(pins)


ALL_LOW = dict.fromkeys(SAFE_LOW, 0.0)


def test_a_board_killed_while_the_motor_runs():
    dead = MockFactory(pin_class=MockPWMPin)
    board = build_board(MOCK.pins, dead)
    board.motor_enable.on()
    board.motor.forward(0.85)
    board.rotator.on()
    fresh = after_kill(dead)
    assert levels(fresh) == {"motor_sleep": 1.0, "motor_in1": 0.85, "motor_in2": 0.0,
                             "rotator": 1.0}
    assert stop_on(fresh) == ("mock", ALL_LOW)
    board.close()


def _press_until_the_motor_runs(rig: SimRig) -> None:
    for _ in range(20):
        rig.sim.press()
        for _ in range(int(0.5 / STEP)):
            rig.advance(STEP)
            if rig.sim.motor_running:
                return
        rig.settle()
        rig.advance(rig.settings.timing.mash_guard + STEP)
    raise AssertionError("no shot in 20 presses")


def _mid_shot(rig: SimRig) -> None:
    rig.load([f"c{i}" for i in range(40)])
    _press_until_the_motor_runs(rig)


def _after_a_shot(rig: SimRig) -> None:
    _mid_shot(rig)
    rig.settle()  # the shot ends with a brake: IN1 and IN2 both high


def _rotating(rig: SimRig) -> None:
    rig.sim.open_lid(full=True)
    rig.advance(0.3)


def _rotator_stalled(rig: SimRig) -> None:
    rig.sim.stall_rotator()
    rig.sim.open_lid(full=True)
    rig.advance(0.3)


def _jammed(rig: SimRig) -> None:
    rig.sim.jam()
    _mid_shot(rig)
    rig.advance(rig.settings.timing.jam_timeout + 0.5)


def _asleep(rig: SimRig) -> None:
    rig.advance(rig.settings.timing.sleep_after + 1)


STATES: dict[str, tuple[Callable[[SimRig], None], Callable[[SimRig], bool]]] = {
    # name: (how to get there, what must hold there for the case to mean anything)
    "ready": (lambda rig: None, lambda rig: rig.state == m.READY),
    "mid-shot": (_mid_shot, lambda rig: rig.sim.motor_running),
    "braking after a shot": (
        _after_a_shot, lambda rig: rig.sim.level("motor_in1") == rig.sim.level("motor_in2") == 1),
    "rotating": (_rotating, lambda rig: rig.state == m.ROTATING and rig.sim.level("rotator") == 1),
    "rotator stalled": (_rotator_stalled, lambda rig: rig.sim.level("rotator") == 1),
    "jammed": (_jammed, lambda rig: rig.state == m.FAULT),
    "asleep": (_asleep, lambda rig: rig.state == m.ASLEEP),
}


@pytest.mark.parametrize("state", list(STATES))
def test_safe_stop_from_every_state_of_the_simulated_launcher(state):
    get_there, holds = STATES[state]
    rig = SimRig(seed=3)
    get_there(rig)
    assert holds(rig), f"the rig did not reach {state}"
    fresh = after_kill(rig.sim.factory)
    assert levels(fresh) == {name: rig.sim.level(name) for name in SAFE_LOW}
    assert stop_on(fresh) == ("mock", ALL_LOW)
    rig.close()


LEVEL = st.one_of(st.none(), st.just(0.0), st.just(1.0), st.floats(0.01, 1.0))


@settings(max_examples=60, deadline=None)
@given(st.fixed_dictionaries({name: LEVEL for name in SAFE_LOW}))
def test_safe_stop_from_any_pin_levels(left):
    """Any mix of outputs at any duty, or pins left as inputs (None): all low afterwards."""
    dead = MockFactory(pin_class=MockPWMPin)
    for name, level in left.items():
        pin = dead.pin(getattr(MOCK.pins, name))
        if level is not None:
            pin.function = "output"
            pin.frequency = 1000
            pin.state = level
    assert stop_on(after_kill(dead)) == ("mock", ALL_LOW)


def test_a_part_that_fails_does_not_stop_the_others():
    factory = MockFactory(pin_class=ReleasedPin)
    for name in ("motor_in1", "motor_sleep"):
        pin = factory.pin(getattr(MOCK.pins, name))
        pin.function = "output"
        pin.state = 1
    squatter = GpioOutput(MOCK.pins.rotator, factory)  # the rotator pin is taken
    pins = grab(factory)
    with pytest.raises(HardwareError, match="rotator"):
        drive_safe(MOCK.pins, factory)
    assert released(pins) == {"motor_sleep": 0.0, "motor_in1": 0.0, "motor_in2": 0.0,
                                 "rotator": None}
    squatter.close()


def test_pigpio_down_falls_back_to_the_native_factory():
    dead = MockFactory(pin_class=MockPWMPin)
    board = build_board(MOCK.pins, dead)
    board.motor_enable.on()
    board.motor.forward(1.0)
    fresh, first = after_kill(dead), after_kill(dead)
    tried: list[str] = []

    def make(name: str) -> MockFactory:
        tried.append(name)
        if name == "pigpio":
            raise HardwareError("pin factory pigpio failed: daemon not running")
        return first if tried.count("native") == 1 else fresh

    pins, slept = grab(fresh), grab(first)
    done = safe_stop(replace(MOCK, pin_factory="pigpio"), make=make)
    assert done.factory == "native"
    assert tried == ["native", "pigpio", "native"]  # nSLEEP natively first, then pigpio
    assert [str(t) for t in done.asleep_first] == [f"motor_sleep={MOCK.pins.motor_sleep}"]
    assert released(slept)["motor_sleep"] == 0.0
    assert released(pins) == ALL_LOW
    board.close()


def test_no_factory_at_all_is_an_error_naming_each_attempt():
    def make(name: str) -> MockFactory:
        raise HardwareError(f"pin factory {name} failed")

    with pytest.raises(HardwareError, match=r"pigpio failed.*native failed"):
        safe_stop(replace(MOCK, pin_factory="pigpio"), make=make)


@pytest.mark.parametrize(("factory", "model", "expected"), [
    ("lgpio", None, ["lgpio"]),
    ("pigpio", None, ["pigpio", "native"]),
    ("auto", "Raspberry Pi 5 Model B Rev 1.0", ["lgpio"]),
    ("auto", "Raspberry Pi 4 Model B Rev 1.4", ["lgpio"]),  # lgpio on every Pi
    ("auto", None, ["mock"]),
])
def test_factory_order(factory, model, expected, monkeypatch):
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    assert factory_names(replace(MOCK, pin_factory=factory), model) == expected


def _write(tmp_path, text: str):
    path = tmp_path / "launcher.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_command_exits_0_and_names_the_pins(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    path = _write(tmp_path, '[board]\npin_factory = "mock"\n[pins]\nmotor_in1 = 20\n')
    assert main(["safe-stop", "--config", path]) == 0
    out = capsys.readouterr().out
    assert "motor_in1=20" in out and "(mock; config)" in out


def test_a_config_broken_outside_the_pins_still_stops_the_right_pins(tmp_path, capsys):
    path = _write(tmp_path, '[board]\npin_factory = "mock"\n[pins]\nmotor_in1 = 20\n'
                            '[motor]\nspeed = 7.0\n')
    settings, problem = settings_for_safe_stop(path)
    assert problem is not None and problem.startswith("config error (motor.speed = 7.0")
    assert problem.endswith("stopping with its [board] and [pins]")
    assert settings.pins.motor_in1 == 20 and settings.pin_factory == "mock"
    assert main(["safe-stop", "--config", path]) == 0
    assert "motor_in1=20" in capsys.readouterr().out


def test_broken_pins_are_not_guessed(tmp_path, capsys):
    path = _write(tmp_path, '[pins]\nmotor_in1 = 13\n')  # clashes with motor_in2
    with pytest.raises(ConfigError, match=r"pins\.motor_in1"):
        settings_for_safe_stop(path)
    assert main(["safe-stop", "--config", path]) == 2
    assert "pins.motor_in1" in capsys.readouterr().err


def test_the_systemd_unit_runs_commands_the_cli_knows():
    """ExecStart and ExecStopPost name real sub-commands, the venv and the config installed."""
    root = Path(__file__).resolve().parents[2]
    unit = (root / "systemd" / "launcher.service").read_text(encoding="utf-8")
    install = (root / "systemd" / "install.sh").read_text(encoding="utf-8")
    lines = dict(re.findall(r"^(ExecStart|ExecStopPost)=(.+)$", unit, re.MULTILINE))
    assert set(lines) == {"ExecStart", "ExecStopPost"}
    parser = build_parser()
    for key, command in (("ExecStart", "run"), ("ExecStopPost", "safe-stop")):
        program, *argv = shlex.split(lines[key])
        assert program == "/opt/launcher/venv/bin/launcher"
        args = parser.parse_args(argv)
        assert args.command == command
        assert args.config == "/etc/launcher/launcher.toml"
    # The console's restart request exits with this status; systemd must restart on it.
    assert f"RestartForceExitStatus={RESTART_EXIT}" in unit
    assert f"SuccessExitStatus={RESTART_EXIT}" in unit
    assert "PREFIX=/opt/launcher\nVENV=$PREFIX/venv\n" in install
    assert "CONFIG=$CONFIG_DIR/launcher.toml" in install and "CONFIG_DIR=/etc/launcher" in install


def test_an_unreadable_config_still_stops_with_the_default_pins(tmp_path, capsys):
    path = tmp_path / "launcher.toml"
    path.write_bytes('[board]\npin_factory = "mock"\n# café\n'.encode("latin-1"))
    settings, problem = settings_for_safe_stop(str(path), state_dir=tmp_path / "none")
    assert settings.pins == config.load(None).pins
    assert problem is not None and problem.endswith("using the default pins")
    assert "not UTF-8" in problem


def test_an_unreadable_config_uses_the_pins_of_the_last_good_start(tmp_path):
    good = config.settings_from_dict(config.merge(config.default_raw(), {
        "board": {"pin_factory": "mock"}, "pins": {"motor_in1": 20, "exit_beam": -1},
        "state": {"path": str(tmp_path / "state" / "state.json")}}))
    remember_pins(good.pin_factory, good.pins, good.state_path)
    path = tmp_path / "launcher.toml"
    path.write_text("[pins\nbroken = ", encoding="utf-8")
    settings, problem = settings_for_safe_stop(str(path), state_dir=tmp_path / "state")
    assert settings.pins == good.pins and settings.pin_factory == "mock"
    assert problem is not None and "last good start" in problem
    # Broken pins with a memory use the memory; without one they are not guessed.
    path.write_text("[pins]\nmotor_in1 = 13\n", encoding="utf-8")
    assert settings_for_safe_stop(str(path), state_dir=tmp_path / "state")[0].pins == good.pins
    with pytest.raises(ConfigError):
        settings_for_safe_stop(str(path), state_dir=tmp_path / "nothing")


def test_the_command_says_which_pins_it_used(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    path = tmp_path / "launcher.toml"
    path.write_text("[[[[", encoding="utf-8")
    monkeypatch.setattr("launcher.firmware.safestop.PINS_FILE", "no-such-file.json")
    monkeypatch.setattr("launcher.firmware.safestop.pi_model", lambda: None)
    # Off a Pi "auto" is the mock factory, so this drives mock pins: the same code path.
    assert main(["safe-stop", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith("low (mock; using the default pins)")


def test_a_wired_rotator_in2_is_driven_low_too():
    """A unit killed while its rotator brakes (both inputs high) or creeps back (IN2 PWM)."""
    wired = replace(MOCK, pins=replace(MOCK.pins, rotator_in2=4))
    for hold in ("brake", "back"):
        dead = MockFactory(pin_class=MockPWMPin)
        board = build_board(wired.pins, dead)
        board.rotator.brake() if hold == "brake" else board.rotator.back(0.3)
        fresh = MockFactory(pin_class=ReleasedPin)
        for n in (wired.pins.rotator, 4):
            new = fresh.pin(n)
            new.function, new.state = "output", dead.pin(n).state
        pins = {n: fresh.pin(n) for n in (wired.pins.rotator, 4)}
        assert pins[4].state > 0
        safe_stop(wired, make=lambda name, fresh=fresh: fresh)
        assert {n: p.released_at for n, p in pins.items()} == {wired.pins.rotator: 0.0, 4: 0.0}


# --- a factory without PWM (gpiozero's native factory: the fallback from pigpio) -----------


class ReleasedPlainPin(MockPin):
    """A plain mock pin (it refuses PWM, as the native factory's pins do) that remembers the
    level it had when it was first let go."""

    released_at: float | None = None

    def close(self) -> None:
        if self.released_at is None:
            self.released_at = float(self.state)
        super().close()


def _left_high(factory: MockFactory, numbers: list[int]) -> dict[int, ReleasedPlainPin]:
    """Pins as a dead process left them: outputs, high (the registers keep the level)."""
    pins = {}
    for n in numbers:
        pin = factory.pin(n)
        pin.function, pin.state = "output", 1
        pins[n] = pin
    return pins


def test_a_factory_without_pwm_still_stops_the_roller():
    """Plain outputs: IN1 and IN2 are driven low where PWM cannot be had at all."""
    wired = replace(MOCK, pins=replace(MOCK.pins, rotator_in2=4))
    p = wired.pins
    plain = MockFactory(pin_class=ReleasedPlainPin)
    with pytest.raises(PinPWMUnsupported):  # what the old HBridgeMotor path ran into
        PWMOutputDevice(p.motor_in1, pin_factory=plain).close()
    pins = _left_high(plain, [p.motor_sleep, p.motor_in1, p.motor_in2, p.rotator, 4])
    done = safe_stop(wired, make=lambda name: plain)
    assert {n: pin.released_at for n, pin in pins.items()} == dict.fromkeys(pins, 0.0)
    assert [str(t) for t in done.driven] == [
        f"motor_sleep={p.motor_sleep}", f"motor_in1={p.motor_in1}", f"motor_in2={p.motor_in2}",
        "rotator_in2=4", f"rotator={p.rotator}"]  # hal.base.SAFE_ORDER


def test_pigpio_down_falls_back_to_native_which_has_no_pwm(tmp_path, capsys, monkeypatch):
    """The whole command: pigpiod down, the native factory (no PWM) drives every pin low."""
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    p = MOCK.pins
    plain, first = MockFactory(pin_class=ReleasedPlainPin), MockFactory(pin_class=ReleasedPlainPin)
    pins = _left_high(plain, [p.motor_sleep, p.motor_in1, p.motor_in2, p.rotator])
    slept = _left_high(first, [p.motor_sleep])
    made: list[str] = []

    def make(name: str) -> MockFactory:
        made.append(name)
        if name == "pigpio":
            raise HardwareError("pin factory pigpio failed: daemon not running")
        return first if made.count("native") == 1 else plain

    monkeypatch.setattr("launcher.firmware.safestop.make_factory", make)
    path = _write(tmp_path, '[board]\npin_factory = "pigpio"\n'
                            f'[state]\npath = "{tmp_path / "state" / "state.json"}"\n')
    assert main(["safe-stop", "--config", path]) == 0
    assert all(pin.released_at == 0.0 for pin in [*pins.values(), *slept.values()])
    assert capsys.readouterr().out.strip() == (
        f"safe-stop: motor_sleep={p.motor_sleep} low natively first, then "
        f"motor_sleep={p.motor_sleep} motor_in1={p.motor_in1} "
        f"motor_in2={p.motor_in2} rotator={p.rotator} low (native; config)")


# --- the pins the dead process drove: config and last-good-pins.json ------------------------


def _started(tmp_path: Path, **pins: int) -> config.Settings:
    """A launcher that started well with ``pins``, its state file in tmp_path/state."""
    good = config.settings_from_dict(config.merge(config.default_raw(), {
        "board": {"pin_factory": "mock"}, "pins": pins,
        "state": {"path": str(tmp_path / "state" / "state.json")}}))
    remember_pins(good.pin_factory, good.pins, good.state_path)
    return good


def test_pins_edited_while_the_firmware_ran_are_all_driven_low(tmp_path, capsys, monkeypatch,
                                                              caplog):
    """[pins] edited while it ran: the old IN1 (still at PWM 0.85) is driven low as well."""
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    _started(tmp_path)  # motor_in1 = 12, the default
    dead = MockFactory(pin_class=MockPWMPin)
    board = build_board(MOCK.pins, dead)
    board.motor_enable.on()
    board.motor.forward(0.85)
    fresh = after_kill(dead)
    old_in1, new_in1 = fresh.pin(12), fresh.pin(20)
    assert old_in1.state == pytest.approx(0.85)
    monkeypatch.setattr("launcher.firmware.safestop.make_factory", lambda name: fresh)
    path = _write(tmp_path, '[board]\npin_factory = "mock"\n[pins]\nmotor_in1 = 20\n'
                            f'[state]\npath = "{tmp_path / "state" / "state.json"}"\n')
    with caplog.at_level("WARNING", logger="launcher.firmware.safestop"):
        assert main(["safe-stop", "--config", path]) == 0
    assert old_in1.released_at == 0.0 and new_in1.released_at == 0.0
    out = capsys.readouterr().out.strip()
    assert out.startswith("safe-stop: motor_sleep=11 motor_in1=20 motor_in2=13 rotator=24")
    assert out.endswith(", and from last-good-pins.json motor_in1=12 low (mock; config)")
    assert "differ from the config's: driving motor_in1=12 low too" in caplog.text
    board.close()


def test_a_pins_typo_with_a_non_default_state_path_uses_the_memory_beside_it(
        tmp_path, capsys, monkeypatch):
    """launcher run wrote last-good-pins.json beside the configured state file: found there."""
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    good = _started(tmp_path, motor_in1=20)
    state = f'[state]\npath = "{tmp_path / "state" / "state.json"}"\n'
    path = _write(tmp_path, '[board]\npin_factory = "mock"\n[pins]\nmotor_in1 = 13\n' + state)
    settings, problem = settings_for_safe_stop(path)  # state_dir from the config's state.path
    assert settings.pins == good.pins
    assert problem is not None and str(tmp_path / "state" / "last-good-pins.json") in problem
    assert main(["safe-stop", "--config", path]) == 0
    assert "motor_in1=20" in capsys.readouterr().out
    # The rest of the config broken too, and the TOML still readable: state.path is read.
    path = _write(tmp_path, '[pins]\nmotor_in1 = 13\n[motor]\nspeed = 7.0\n' + state)
    assert settings_for_safe_stop(path)[0].pins == good.pins


@pytest.mark.parametrize(("text", "where"), [
    ('[state]\npath = "{tmp}/s/state.json"\n', "{tmp}/s"),
    ('[state]\npath = "{tmp}/s/state.json"\n[pins]\nled = 99\n', "{tmp}/s"),  # broken elsewhere
    ('[state]\npath = 5\n', None),  # not a path: the default
    ("[[[[", None),  # not TOML: the default
    ("", None),
])
def test_the_state_folder_comes_from_the_config_even_when_it_is_broken(tmp_path, text, where):
    path = _write(tmp_path, text.format(tmp=tmp_path))
    default = config.load(None).state_path.parent
    expected = default if where is None else Path(where.format(tmp=tmp_path))
    assert state_folder(path) == expected


def test_targets_are_each_number_once_and_say_where_they_came_from():
    now = replace(MOCK.pins, motor_in1=20, rotator_in2=4)
    listed = targets(now, MOCK.pins)
    assert [(str(t), t.from_memory) for t in listed] == [
        ("motor_sleep=11", False), ("motor_in1=20", False), ("motor_in1=12", True),
        ("motor_in2=13", False), ("rotator_in2=4", False), ("rotator=24", False)]
    assert targets(MOCK.pins, MOCK.pins) == targets(MOCK.pins)


def test_a_slow_factory_with_nothing_after_it_is_waited_for():
    """lgpio imports for seconds on a slow CPU: timed like pigpio's daemon, it was given up
    after FACTORY_TIMEOUT with nothing left to try, and safe-stop drove no pin at all."""
    import threading

    started = threading.Event()

    def slow(name: str) -> MockFactory:
        started.wait(0.3)  # longer than the timeout below: a step that takes its time
        return MockFactory(pin_class=ReleasedPlainPin)

    done = safe_stop(MOCK, make=slow, timeout=0.05)
    assert done.factory == "mock" and done.driven
