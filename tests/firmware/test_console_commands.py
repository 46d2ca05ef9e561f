"""The launcher through the console: presses, the lid, events, stats, `pins`, selftest, reboot."""

from __future__ import annotations

import json
from pathlib import Path

from consoles import Session

from launcher.core import config, cues
from launcher.core import machine as m
from launcher.firmware.console import Console
from launcher.firmware.registry import (
    E_HARDWARE,
    E_STATE,
    E_UNAVAILABLE,
    E_VALUE,
)
from launcher.firmware.state import StateStore
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras

# --- the launcher through the console ----------------------------------------------------


def test_press_and_events_reach_the_writer(session: Session) -> None:
    session("cards 10")
    session("load 10")
    session("luck set mild hazard [1.0] sizes [3] weights [1]")
    session.events.clear()
    assert session.final("press") == "ok state=shooting"
    session.rig.advance(1.0)
    assert "# event shoot side=mild cards=3" in session.events
    assert "# event shot side=mild cards=3 asked=3" in session.events
    assert session.final("inventory") == "ok inventory=7 cards_shot=3 cartridge=7 tray=3"


def test_lid_commands_move_the_simulated_lid(session: Session) -> None:
    assert session.final("lid open") == "ok lid=ajar"
    session.rig.advance(0.05)
    assert session.rig.state == m.LID_OPEN
    assert session.final("lid full") == "ok lid=full"
    session.rig.advance(1.5)
    assert session.rig.side == "wild"
    session("lid close")
    session.rig.advance(0.05)
    assert session.rig.state == m.READY


def test_on_real_hardware_the_lid_is_physical() -> None:
    b = Session(sim=None)
    try:
        for word in ("open", "full", "close"):
            reply = b.final(f"lid {word}")
            assert reply.startswith(f"error {E_HARDWARE} the lid is physical")
        for line in ("jam", "unjam", "cards 3"):
            assert b.final(line).startswith(f"error {E_HARDWARE} ")
        assert b.rig.sim.lid == "closed"
    finally:
        b.close()


def test_sleep_wake_clear_refuse_in_the_wrong_state(session: Session) -> None:
    assert session.final("wake") == f"error {E_STATE} not asleep (ready)"
    assert session.final("clear") == f"error {E_STATE} no fault to clear (ready)"
    assert session.final("sleep") == "ok state=asleep"
    assert session.rig.app.board.motor_enable.is_active is False
    assert session.final("sleep") == f"error {E_STATE} already asleep"
    assert session.final("wake") == "ok state=ready"


def test_clear_leaves_a_fault(session: Session) -> None:
    session("cards 5")
    session("load 5")
    session("luck set mild hazard [1.0] sizes [2] weights [1]")
    session("jam")
    session("press")
    session.rig.advance(1.0)
    assert session.rig.state == m.FAULT
    session("unjam")
    assert session.final("clear") == "ok cleared=jam state=ready"


def test_sounds_play_reaches_the_cue_player(session: Session) -> None:
    assert session.final("sounds play wild_flip") == "ok cue=wild_flip"
    assert session.rig.cues.played[-1] == "wild_flip"
    assert session.final("sounds play nope").startswith(f"error {E_VALUE} no cue 'nope'")
    assert session("sounds list")[:-1] == [f"// {c}" for c in cues.all_cues()]


def test_log_shows_the_last_events(session: Session) -> None:
    for n in (1, 2, 3):
        session(f"load {n}")
    out = session("log 2")
    assert out == ["// 0.000 loaded cards=2", "// 0.000 loaded cards=3", "ok events=2"]
    # Everything since the start: its cue and the LED lit, then the three loads.
    assert session("log") == ["// 0.000 cue name=startup", "// 0.000 led pattern=on",
                              *(f"// 0.000 loaded cards={n}" for n in (1, 2, 3)),
                              "ok events=5"]


def test_stats_counts_the_launcher_and_the_console(session: Session) -> None:
    session("press")
    session("bogus")
    reply = session.final("stats")
    assert "presses=1 " in reply and "console_errors=1 " in reply
    assert "console_lines=3 " in reply


def test_a_shorter_hazard_curve_cuts_a_longer_dry_streak_to_its_new_maximum(
        session: Session) -> None:
    session("luck set mild hazard [0.0, 0.0, 0.0, 0.0, 1.0]")
    for _ in range(3):
        assert session.final("press") == "ok state=ready"  # dry
        session.rig.advance(2)  # past the mash guard
    assert "escalation=3 " in session.final("status")
    session("luck set mild hazard [0.0, 1.0]")  # at most 1 dry press now
    assert "escalation=1 " in session.final("status")
    assert session.rig.app.machine.memory.dry_streak == 1
    assert session.final("luck show").startswith("ok side=mild dry_streak=1 ")
    assert session.final("press") == "ok state=shooting"  # the curve's 1.0: it shoots


def test_config_set_of_a_shorter_hazard_clamps_the_streak_too(session: Session) -> None:
    session("luck set mild hazard [0.0, 0.0, 0.0, 1.0]")
    for _ in range(2):
        session("press")
        session.rig.advance(2)
    assert session.rig.app.machine.memory.dry_streak == 2
    assert session.final("config set luck.mild.hazard [1.0]").startswith("ok ")
    assert "escalation=0 " in session.final("status")


class _FailingWrite:
    def __init__(self) -> None:
        self.failing = True

    def __call__(self, path: Path, text: str) -> None:
        if self.failing:
            raise RuntimeError("writer bug")
        path.write_text(text, encoding="utf-8")


def test_stats_shows_the_failed_saves_of_the_state_file(tmp_path: Path) -> None:
    write = _FailingWrite()
    store = StateStore(tmp_path / "state.json", write=write, on_failure=lambda exc: None)
    b = Session(store=store)
    try:
        b("load 5")
        b.rig.advance(0.3)  # the save after the load
        assert store.flush(10)
        reply = b.final("stats")
        assert "state_writes=0 " in reply and "state_failed_writes=1 " in reply
        assert "state_unwritten=true" in reply and 'state_error="RuntimeError: writer bug"' in reply
        write.failing = False
        b("load 6")
        b.rig.advance(0.3)
        assert store.flush(10)
        reply = b.final("stats")
        assert "state_writes=1 " in reply and "state_failed_writes=1 " in reply
        assert "state_unwritten=false" in reply and "state_error" not in reply
    finally:
        b.close()


def test_seed_replays_the_same_presses() -> None:
    def run(seed: int) -> list[str]:
        b = Session()
        try:
            b("cards 80")
            b("load 80")
            b(f"seed {seed}")
            b.events.clear()
            for _ in range(12):
                b("press")
                b.rig.advance(2.0)
            return [e for e in b.events if e.startswith(("# event dry", "# event shot "))]
        finally:
            b.close()

    first, again, other = run(7), run(7), run(8)
    assert len(first) == 12
    assert first == again
    assert first != other


# --- pins: every pin's level, read through the hal ------------------------------------------

# Ready, the lid shut: the power contact reads closed (its read-back low), nSLEEP low.
READY_PINS = ("ok motor_in1=0 motor_in2=0 motor_sleep=0 rotator=0 amp_enable=0 led=1 "
              "button=1 lid_closed=0 lid_open=1 exit_beam=1 home=0 yellow_back=0 "
              "lid_closed_nc=1 power_contact_sense=0 sleep_sense=0 "
              "rotator_contact_sense=1")


def _pins(session: Session) -> dict[str, str]:
    reply = session.final("pins")
    assert reply.startswith("ok ")
    return dict(field.split("=") for field in reply.split()[1:])


def test_pins_after_start_shows_outputs_then_raw_inputs(session: Session) -> None:
    # Ready: the driver asleep (nSLEEP low until a run), the LED lit. Inputs are raw: the pulled-up
    # button reads 1 until pressed; the closed lid switch and the home magnet pull theirs to 0.
    assert session.final("pins") == READY_PINS
    assert session.final("pins") == READY_PINS  # it only reads
    session.rig.sim.hold_button()
    session.rig.advance(0)
    assert _pins(session)["button"] == "0"  # raw, before any debounce window has passed
    session.rig.sim.release()


def test_pins_during_a_shot_shows_in1_at_the_configured_speed(session: Session) -> None:
    session("luck set mild hazard [1.0] sizes [3] weights [1]")
    session("cards 3")
    session("load 3")
    session("press")
    session.rig.advance(0.05)
    assert session.rig.state == m.SHOOTING
    levels = _pins(session)
    assert (levels["motor_in1"], levels["motor_in2"], levels["motor_sleep"]) == ("0.85", "0", "1")
    session.rig.settle()
    session.rig.advance(0.5)
    after = _pins(session)
    # Stopped: braked (both inputs 1, motor.brake = true) or coasting (both 0), never driven.
    assert after["motor_in1"] == after["motor_in2"] in ("0", "1")


def test_pins_with_the_lid_open_reads_the_lid_switch_high(session: Session) -> None:
    session("lid open")
    session.rig.advance(0.05)
    levels = _pins(session)
    assert (levels["lid_closed"], levels["lid_open"]) == ("1", "1")  # ajar: neither closed
    session("lid full")
    session.rig.advance(0.05)
    assert (_pins(session)["lid_closed"], _pins(session)["lid_open"]) == ("1", "0")


def test_pins_in_json_mode_is_an_object_of_numbers(session: Session) -> None:
    session("json on")
    obj = json.loads(session.final("pins"))
    assert obj["ok"] is True and obj["data"]["motor_in1"] == 0 and obj["data"]["button"] == 1
    assert list(obj["data"])[:4] == ["motor_in1", "motor_in2", "motor_sleep", "rotator"]


def test_pins_lists_whatever_pins_are_wired_by_their_config_names() -> None:
    """Optional pins appear when set (rotator_in2 with its duty), vanish when -1 (exit_beam),
    and a pin field added to Pins later is listed without an edit here."""
    from dataclasses import asdict, dataclass, replace

    from hal.base import Pins

    @dataclass(frozen=True)
    class MorePins(Pins):
        spare: int | None = None

    base = config.load()
    pins = MorePins(**{**asdict(replace(base.pins, rotator_in2=9, exit_beam=None)),
                       "spare": 20})
    rig = SimRig(replace(base, pins=pins))
    console = Console(rig.app, **console_extras(rig.sim))
    try:
        reply = console.handle_line("pins")[-1]
        assert "rotator_in2=0 " in reply and "exit_beam" not in reply
        assert reply.endswith(" spare=none")  # configured, but no part of this board reads it
        rig.app.board.rotator.back(0.3)
        assert "rotator=0 rotator_in2=0.3 " in console.handle_line("pins")[-1]
        rig.app.board.rotator.off()
    finally:
        console.close()
        rig.close()


def test_pins_is_not_a_debug_command(session: Session) -> None:
    assert not session.console.session.debug and session.final("pins").startswith("ok ")
    assert session("help pins")[0].startswith("// pins  every configured pin's level")


# --- selftest, version, reboot-safe ------------------------------------------------------


def test_selftest_runs_the_walk_through_on_a_simulated_unit(session: Session) -> None:
    out = session("selftest")
    assert out[-1] == 'ok parts=11 passed=11 failed=0 on="a fresh simulated launcher"'
    assert out[0] == "// PASS button"
    assert all(line.startswith("// PASS ") for line in out[:-1])
    assert session.rig.state == m.READY and session.rig.app.board.motor.speed == 0


def test_selftest_on_a_real_board_says_how_to_run_it() -> None:
    b = Session(sim=None)
    try:
        reply = b.final("selftest")
        assert reply.startswith(f"error {E_UNAVAILABLE} on a real board the self-test needs")
        assert "launcher selftest" in reply
    finally:
        b.close()


def test_reboot_safe_stops_saves_and_asks_the_owner(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    asked: list[bool] = []
    b = Session(store=StateStore(state), reboot=lambda: asked.append(True))
    try:
        b("load 9")
        b("debug on")
        b("motor run 300")
        assert b.final("reboot-safe") == "ok restart=requested unsaved=0"
        assert asked == [True]
        board = b.rig.app.board
        assert board.motor.speed == 0 and not board.motor_enable.is_active
        assert json.loads(state.read_text(encoding="utf-8"))["inventory"] == 9
        assert b.final("press") == f"error {E_STATE} the launcher is stopped for a restart"
        assert b.final("status").endswith('stopped="restart requested"')
    finally:
        b.console.close()
        b.rig.sim.board.close()
