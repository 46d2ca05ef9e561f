"""``launcher selftest`` on the simulated launcher: all parts pass; each fault names its part."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import replace

import pytest

from hal.sim import Physics, SimLauncher
from launcher.cli.main import main
from launcher.core import config
from launcher.core.machine import MachineSettings
from launcher.core.reactor import RealReactor
from launcher.firmware.selftest import (
    BEAM,
    BUTTON,
    FAIL,
    HOME,
    LID_CLOSED,
    LID_OPEN,
    MOTOR,
    MOTOR_PULSE,
    PARTS,
    PASS,
    ROTATOR,
    SIDE,
    SKIP,
    SOUND_MILD,
    SOUND_WILD,
    HumanOperator,
    RealRunner,
    Report,
    SelfTest,
)
from launcher.sim import selftest
from launcher.sim.selftest import ScriptedOperator, simulated_unit

SETTINGS = config.load()


def run_walkthrough(prepare: Callable[[SimLauncher, object], None] | None = None,
              physics: Physics | None = None, settings: config.Settings = SETTINGS
              ) -> tuple[Report, SimLauncher, ScriptedOperator]:
    """Run the self-test on a fresh simulated unit; the sim is left open for inspection."""
    sim, player, runner = simulated_unit(settings, physics)
    if prepare is not None:
        prepare(sim, player)
    operator = ScriptedOperator(sim, player)
    report = SelfTest(sim.board, MachineSettings.of(settings), runner, operator, player).run()
    operator.close()
    return report, sim, operator


def running_spans(sim: SimLauncher) -> list[float]:
    """How long each run of the roller lasted, from the simulator's motor history."""
    spans, start = [], None
    for sample in sim.motor_history:
        if sample.running and start is None:
            start = sample.time
        elif not sample.running and start is not None:
            spans.append(sample.time - start)
            start = None
    assert start is None, "the motor was left running"
    return spans


def actuators_off(sim: SimLauncher) -> bool:
    return all(sim.level(name) == 0 for name in ("motor_in1", "motor_in2", "motor_sleep",
                                                 "rotator", "led"))


def test_every_part_passes_on_the_simulated_launcher():
    report, sim, operator = run_walkthrough()
    assert {p: r.status for p, r in report.results.items()} == dict.fromkeys(PARTS, PASS)
    assert report.ok and report.failed() == []
    # It did what it asked for: one half turn, stopped on the detent, and one short run.
    assert sim.angle == 180.0 and sim.side == "wild"
    assert running_spans(sim) == [pytest.approx(MOTOR_PULSE)]
    assert len(sim.ejected) >= 1
    assert operator.log == ["press", "open-ajar", "close", "open-full", "close-again",
                            "block-beam", "load", "motor", "led", "sound", "sound"]
    assert actuators_off(sim)
    sim.board.close()


def stick(sensor: str, level: bool):
    return lambda sim, player: sim.stick(sensor, level)


# name: (fault, physics, the parts that must FAIL, the parts that must be SKIPped)
FAULTS = {
    "dead button": (stick("button", False), None, {BUTTON}, set()),
    "button stuck down": (stick("button", True), None, {BUTTON}, set()),
    "lid-closed switch stuck closed": (stick("lid_closed", True), None, {LID_CLOSED},
                                       {ROTATOR, HOME, SIDE}),
    "lid-closed switch dead": (stick("lid_closed", False), None, {LID_CLOSED}, {MOTOR}),
    "lid-open switch stuck": (stick("lid_open", True), None, {LID_OPEN}, set()),
    "lid-open switch dead": (stick("lid_open", False), None, {LID_OPEN},
                             {ROTATOR, HOME, SIDE}),
    "stalled rotator": (lambda sim, player: sim.stall_rotator(), None, {ROTATOR},
                        {HOME, SIDE}),
    "home sensor stuck at a detent": (stick("home", True), None, {HOME}, set()),
    "home sensor dead": (stick("home", False), None, {HOME}, set()),
    "side sensor stuck": (stick("yellow_back", True), None, {SIDE}, set()),
    "beam stuck blocked": (stick("exit_beam", True), None, {BEAM}, set()),
    "beam dead": (stick("exit_beam", False), None, {BEAM}, set()),
    "jammed roller": (lambda sim, player: sim.jam(), None, {MOTOR}, set()),
    "roller not gripping": (lambda sim, player: sim.stall_roller(), None, {MOTOR}, set()),
    "audio device lost": (lambda sim, player: player.speaker.lose_device(), None,
                          {SOUND_MILD, SOUND_WILD}, set()),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_each_fault_fails_its_own_part(fault):
    prepare, physics, fails, skips = FAULTS[fault]
    report, sim, _ = run_walkthrough(prepare, physics)
    statuses = {p: r.status for p, r in report.results.items()}
    assert {p for p, s in statuses.items() if s == FAIL} == fails
    assert {p for p, s in statuses.items() if s == SKIP} == skips
    assert all(s == PASS for p, s in statuses.items() if p not in fails | skips)
    assert not report.ok
    for part in fails | skips:
        assert report[part].detail  # every verdict that is not a pass says why
    # Whatever went wrong, the roller ran at most once, briefly, and everything is off.
    assert all(span <= MOTOR_PULSE + 1e-9 for span in running_spans(sim))
    assert actuators_off(sim)
    sim.board.close()


def test_the_failing_reasons_point_at_the_hardware():
    report, sim, _ = run_walkthrough(lambda sim, player: sim.stall_rotator())
    assert "did not move" in report[ROTATOR].detail
    sim.board.close()
    report, sim, _ = run_walkthrough(lambda sim, player: sim.jam())
    assert "stuck in the slot" in report[MOTOR].detail
    sim.board.close()


def _sim_test() -> tuple[SelfTest, SimLauncher]:
    sim, player, runner = simulated_unit(SETTINGS)
    test = SelfTest(sim.board, MachineSettings.of(SETTINGS), runner,
                    ScriptedOperator(sim, player), player)
    return test, sim


def test_a_motor_pulse_never_exceeds_the_cap():
    test, sim = _sim_test()
    test.pulse(5.0)
    assert running_spans(sim) == [pytest.approx(MOTOR_PULSE)]
    sim.board.close()


def test_a_motor_pulse_stops_when_the_lid_lifts():
    test, sim = _sim_test()
    sim.reactor.register_timer(lambda t: sim.open_lid(full=False) or float("inf"), 0.1)
    test.pulse(MOTOR_PULSE)
    assert running_spans(sim) == [pytest.approx(0.1, abs=0.011)]
    sim.board.close()


def test_without_a_beam_the_motor_is_judged_by_eye():
    settings = config.settings_from_dict(
        config.merge(config.default_raw(), {"pins": {"exit_beam": -1}}))
    report, sim, _ = run_walkthrough(settings=settings)
    assert report[BEAM].status == "N/A" and report[MOTOR].status == PASS
    assert report.ok
    sim.board.close()


def test_the_command_passes_and_fails(monkeypatch, capsys):
    assert main(["selftest", "--auto"]) == 0
    assert "every part passed" in capsys.readouterr().out
    real = selftest.run_auto

    def with_stalled_rotator(settings, out):
        return real(settings, out, prepare=lambda sim, player: sim.stall_rotator())

    monkeypatch.setattr(selftest, "run_auto", with_stalled_rotator)
    assert main(["selftest", "--auto"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  rotator" in out
    assert "3 of 11 parts not passed: rotator, home sensor, side sensor" in out


def test_without_a_pi_the_interactive_test_points_at_auto(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    path = tmp_path / "launcher.toml"
    path.write_text('[board]\npin_factory = "mock"\n', encoding="utf-8")
    assert main(["selftest", "--config", str(path)]) == 2
    assert "--auto" in capsys.readouterr().err


def test_the_human_operator_reads_answers():
    out = io.StringIO()
    human = HumanOperator(out, io.StringIO("\ny\nno\n"))
    human.confirm("load", "Put cards in.")
    assert human.ask("led", "Is the LED lit?") is True
    assert human.ask("sound", "Did you hear it?") is False
    assert human.ask("sound", "Again?") is False  # end of input is a no
    assert "[1] Put cards in. Then press Enter." in out.getvalue()


def test_the_real_runner_returns_as_soon_as_the_condition_holds():
    runner = RealRunner(RealReactor())
    assert runner.run_until(lambda: True, 60.0) is True  # no waiting for the timeout
    assert runner.run_until(lambda: False, 0.0) is False


NC_WIRED = replace(SETTINGS, pins=replace(SETTINGS.pins, lid_closed_nc=7))


def test_a_two_contact_lid_passes_when_its_contacts_disagree():
    report, sim, _ = run_walkthrough(settings=NC_WIRED)
    assert report.ok, report.lines()
    sim.board.close()


@pytest.mark.parametrize("level", [True, False])
def test_a_two_contact_lid_whose_nc_wire_is_stuck_fails_the_lid_switch(level: bool):
    report, sim, _ = run_walkthrough(stick("lid_closed_nc", level), settings=NC_WIRED)
    assert report[LID_CLOSED].status == FAIL
    assert "pins.lid_closed_nc" in report[LID_CLOSED].detail
    assert actuators_off(sim)
    sim.board.close()
