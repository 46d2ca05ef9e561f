"""The console's dispatcher and commands, in-process on the simulated launcher."""

from __future__ import annotations

import builtins
import json
import logging
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from launcher.core import config, cues
from launcher.core import machine as m
from launcher.firmware.app_commands import MOTOR_RUN_MAX_MS
from launcher.firmware.console import HELP_ORDER, Console
from launcher.firmware.registry import (
    E_DEBUG,
    E_HARDWARE,
    E_INTERNAL,
    E_IO,
    E_LINE,
    E_STATE,
    E_UNAVAILABLE,
    E_UNKNOWN,
    E_USAGE,
    E_VALUE,
    ERROR_CODES,
    CommandError,
    Registry,
    text_value,
)
from launcher.firmware.state import StateStore
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras


class Session:
    """A console on a SimRig, with its event lines collected."""

    def __init__(self, **kw: Any) -> None:
        store = kw.pop("store", None)
        self.rig = SimRig(store=store)
        self.events: list[str] = []
        if "sim" not in kw:
            kw.update(console_extras(self.rig.sim))
        self.console = Console(self.rig.app, write=self.events.append, **kw)

    def __call__(self, line: str | bytes) -> list[str]:
        out = self.console.handle_line(line)
        self.rig.advance(0)
        return out

    def final(self, line: str | bytes) -> str:
        out = self(line)
        assert out, f"no reply to {line!r}"
        return out[-1]

    def close(self) -> None:
        self.console.close()
        self.rig.close()


@pytest.fixture
def session() -> Iterator[Session]:
    b = Session()
    yield b
    b.close()


def is_final(line: str) -> bool:
    return line == "ok" or line.startswith(("ok ", "error "))


# --- the protocol ------------------------------------------------------------------------


def test_every_reply_ends_with_one_final_line(session: Session) -> None:
    lines = ["status", "help", "help luck", "log 3", "luck show", "sounds list", "bogus",
             "load x", "", "stats", "inventory"]
    for line in lines:
        out = session(line)
        assert is_final(out[-1]), (line, out)
        assert not any(is_final(x) for x in out[:-1]), (line, out)
        assert all(x.startswith("// ") for x in out[:-1]), (line, out)


def test_error_lines_carry_a_known_code(session: Session) -> None:
    for line in ["bogus", "load", "load x", "lid", "motor run 5", "clear", "config save",
                 "reboot-safe", b"\xff"]:
        reply = session.final(line)
        code = reply.split()[1]
        assert reply.startswith("error ") and code in ERROR_CODES, reply


@pytest.mark.parametrize("word", ["stat", "statu", "STATUS", "status!", "xstatus", "sta tus",
                                  "lo", "lu", "conf", "motorrun", "json-on", "hel"])
def test_words_are_matched_exactly(session: Session, word: str) -> None:
    assert session.final(word).startswith(f"error {E_UNKNOWN} ")


def test_help_lists_every_command_and_each_one_alone(session: Session) -> None:
    out = session("help")
    names = [spec.usage for spec in session.console.commands]
    assert len(out) == len(names) + 1
    for usage, line in zip(names, out, strict=False):
        assert line.startswith(f"// {usage} ")
    for spec in session.console.commands:
        one = session(f"help {spec.name}")
        assert one[0].startswith(f"// {spec.usage} ") and one[-1] == "ok commands=1"


def test_help_lists_by_the_order_given_whoever_registered_first() -> None:
    reg = Registry(("b", "a"))
    for name in ("a x", "z", "b", "a w"):
        reg.register(name, "", name, lambda a: None)
    # A group's subcommands as registered; what the order does not name last, as registered.
    assert [s.name for s in reg] == ["b", "a x", "a w", "help", "z"]


def test_every_command_has_its_place_in_the_help_order(session: Session) -> None:
    firsts = dict.fromkeys(s.name.split(" ")[0] for s in session.console.commands)
    assert list(firsts) == list(HELP_ORDER)  # none left to come last by default


def test_registered_commands_use_the_same_dispatcher(session: Session) -> None:
    seen = []

    def hello(args: Any) -> dict[str, Any]:
        seen.append(args.words)
        return {"hello": args.word(0)}

    session.console.commands.register("hello", "NAME", "greet", hello, min_args=1, max_args=1)
    assert session.final("hello you") == "ok hello=you"
    assert session.final("hello") == f"error {E_USAGE} expected: hello NAME"
    assert seen == [["you"]]
    with pytest.raises(ValueError):
        session.console.commands.register("hello", "", "again", hello)
    with pytest.raises(ValueError):
        session.console.commands.register("status x", "", "a group over a command", hello)


def test_a_failing_command_is_an_internal_fault_with_the_motor_off(
        session: Session, caplog: pytest.LogCaptureFixture) -> None:
    def boom(args: Any) -> None:
        session.rig.app.actuators.run_motor(0.8)  # a bug that left the motor running
        raise RuntimeError("boom")

    session.console.commands.register("boom", "", "fails", boom)
    with caplog.at_level(logging.ERROR, logger="launcher"):
        reply = session.final("boom")
    assert reply == (f"error {E_INTERNAL} RuntimeError: boom (logged; launcher in fault, "
                     "`clear` leaves it)")
    assert session.rig.app.board.motor.speed == 0
    assert caplog.text.count("Traceback") == 1 and "boom" in caplog.text
    assert session.final("status").startswith("ok state=fault")
    assert any(e.startswith("# event fault code=internal") for e in session.events)
    assert session.console.counters["internal"] == 1
    assert session.final("clear").startswith("ok cleared=internal state=ready")


def test_user_errors_from_handlers_are_not_internal(session: Session) -> None:
    def picky(args: Any) -> None:
        raise CommandError(E_VALUE, "not like that")

    session.console.commands.register("picky", "", "refuses", picky)
    assert session.final("picky") == f"error {E_VALUE} not like that"
    assert session.console.counters["internal"] == 0


def test_input_is_never_evaluated(session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: Any, **kw: Any) -> None:
        raise AssertionError("the console evaluated its input")

    for name in ("eval", "exec", "compile", "__import__"):
        monkeypatch.setattr(builtins, name, forbidden)
    lines = ["__import__('os').system('true')", "eval 1+1", "exec print(1)",
             "config set console.port /dev/tty__import__('os')", "load __import__('os')",
             "luck set mild hazard [__import__('os')]", "config get __class__",
             "help __init__", "status.__class__", "{{7*7}}", "$(reboot)", "; ls"]
    replies = [session.final(line) for line in lines]
    monkeypatch.undo()
    assert all(is_final(r) for r in replies)
    # A value that is not a TOML value stays a plain string.
    assert replies[3] == "ok console.port=/dev/tty__import__('os') applied=restart unsaved=1"
    assert session.console.counters["internal"] == 0


def test_a_trailing_line_end_is_allowed(session: Session) -> None:
    assert session.final("load 3\n") == "ok inventory=3"
    assert session.final(b"load 4\r\n") == "ok inventory=4"
    assert session.final("load\n4").startswith("error line control character U+000A")


@pytest.mark.parametrize(("value", "text"), [
    (None, "none"), (True, "true"), (False, "false"), (3, "3"), (0.25, "0.25"),
    (1 / 3, "0.333333"), ("mild", "mild"), ("lid open", '"lid open"'), ("", '""'),
    ("a=b", '"a=b"'), ('say "hi"', '"say \\"hi\\""'), ([1, 0.5], "[1,0.5]"), ((), "[]"),
])
def test_text_values(value: Any, text: str) -> None:
    assert text_value(value) == text


# --- JSON mode ---------------------------------------------------------------------------


def test_json_mode_answers_and_events_are_objects(session: Session) -> None:
    assert session("json on") == ['{"ok":true,"data":{"json":"on"}}']
    session.events.clear()
    out = session("load 4") + session("bogus") + session("log 1") + session("help press")
    objs = [json.loads(x) for x in out + session.events]
    replies = [o for o in objs if "ok" in o]
    events = [o for o in objs if "event" in o]
    assert [r["ok"] for r in replies] == [True, False, True, True]
    assert replies[1]["error"] == E_UNKNOWN and "bogus" in replies[1]["message"]
    assert replies[2]["events"][0]["event"] == "loaded"
    assert replies[3]["commands"][0]["command"] == "press"
    assert events == [{"event": "loaded", "t": 0.0, "data": {"cards": 4}}]
    assert session("json off") == ["ok json=off"]


def test_json_lines_are_single_lines(session: Session) -> None:
    session("json on")
    for line in ["help", "luck show", "sounds list", "config set console.port \"/dev/ttya b\\n\""]:
        out = session(line)
        assert len(out) == 1 and "\n" not in out[0]
        json.loads(out[0])


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


# --- luck and config ---------------------------------------------------------------------


def test_luck_set_is_checked_as_config_and_applied(session: Session) -> None:
    reply = session.final("luck set wild sizes [2, 3] weights [1, 3]")
    assert reply.startswith("ok side=wild ") and "sizes=[2,3] weights=[1,3]" in reply
    assert session.rig.app.settings.luck.wild.sizes == (2, 3)
    assert session.rig.app.machine.settings.luck.wild.weights == (1.0, 3.0)
    bad = session.final("luck set wild sizes [2, 3, 4]")
    assert bad == (f"error {E_VALUE} luck.wild.weights = [1.0, 3.0]: "
                   "must have one weight per size (3)")
    assert session.rig.app.settings.luck.wild.sizes == (2, 3)  # nothing half-applied


def test_config_set_live_and_restart_keys(session: Session) -> None:
    session("debug on")  # timing, motor and pin keys are gated (debug_config_gate.txt)
    assert session.final("config set timing.jam_timeout_ms 500") == \
        "ok timing.jam_timeout_ms=500 applied=now unsaved=1"
    assert session.rig.app.settings.timing.jam_timeout == 0.5
    assert session.final("config set pins.led 4") == "ok pins.led=4 applied=restart unsaved=2"
    assert session.rig.app.settings.pins.led == 26
    assert session.final("config get pins.led") == "ok pins.led=4 running=26"
    # A live change after a pending pin change still applies (pins are not touched).
    assert session.final("config set motor.speed 0.5").endswith("applied=now unsaved=3")
    assert session.rig.app.settings.motor.speed == 0.5
    assert session.final("config set timing.debounce_ms 10").endswith("applied=restart unsaved=4")


WALK_AROUND = ["config set timing.max_run_ms 15000", "config set timing.card_timeout_ms 10000",
               "config set motor.speed 0.1", "profile deal 30", "load 100", "press"]


def test_the_config_walk_around_of_the_debug_gate_is_refused(session: Session) -> None:
    """Once: 15 s of roller without `debug on`. Every step that lengthens a run is refused."""
    session("cards 100")
    finals = [session.final(line) for line in WALK_AROUND]
    assert [f.split(" ", 2)[:2] for f in finals[:4]] == [["error", E_DEBUG]] * 4
    assert "timing.max_run_ms" in finals[0] and "profile deal 30" in finals[3]
    t = session.rig.app.settings
    assert (t.timing.max_run, t.timing.card_timeout, t.motor.speed) == (8.0, 1.5, 0.85)
    assert session.rig.app.machine.profile.name == "flip-attack"
    session.rig.advance(20)
    assert session.rig.app.events("fault") == []
    # With `debug on` the same lines go through and the roller runs the 15 s asked for.
    session("debug on")
    assert all(session.final(line).startswith("ok ") for line in WALK_AROUND)
    session.rig.advance(14.9)
    assert session.rig.app.board.motor.speed == pytest.approx(0.1)
    session.rig.advance(0.2)
    assert session.rig.app.board.motor.speed == 0
    assert session.rig.app.events("fault")[-1][1]["code"] == "overrun"


@pytest.mark.parametrize("key", [
    "motor.speed", "motor.brake", "motor.brake_ms", "motor.lease_ms", "timing.max_run_ms",
    "timing.card_timeout_ms", "timing.jam_timeout_ms", "timing.timed_card_ms",
    "timing.rotation_timeout_ms", "timing.debounce_ms", "rotator.brake_ms",
    "rotator.creep_speed", "pins.motor_in1", "pins.deadman", "pins.lid_closed_nc",
    "board.pin_factory"])
def test_keys_that_change_how_the_motors_run_are_gated_by_prefix(key: str) -> None:
    from launcher.firmware.live_config import _is_gated

    assert _is_gated(key)  # keys another branch adds (motor.lease_ms, pins.deadman) too


@pytest.mark.parametrize("key", ["timing.mash_guard_ms", "timing.sleep_after_s", "luck.seed",
                                 "luck.mild.hazard", "luck.wild.weights", "audio.volume",
                                 "console.port", "state.path", "game.profile"])
def test_keys_that_never_lengthen_a_run_are_not_gated_by_name(key: str) -> None:
    from launcher.firmware.live_config import _is_gated

    assert not _is_gated(key)


def test_every_gated_key_of_the_default_config_is_refused_then_allowed(session: Session) -> None:
    raw = config.default_raw()
    keys = [f"{table}.{k}" for table in ("motor", "timing", "rotator", "pins", "board")
            for k, v in raw[table].items() if not isinstance(v, dict)]
    for key in keys:
        value = config.get_key(raw, key)
        line = f"config set {key} {json.dumps(value)}"
        reply = session.final(line)
        if key in ("timing.mash_guard_ms", "timing.sleep_after_s"):
            assert reply.startswith(f"ok {key}="), reply
        else:
            assert reply.startswith(f"error {E_DEBUG} {key} "), reply
    session("debug on")
    for key in keys:
        value = config.get_key(raw, key)
        assert session.final(f"config set {key} {json.dumps(value)}").startswith("ok "), key


def test_shot_sizes_and_deal_n_are_gated_beyond_the_stock(session: Session) -> None:
    assert session.console.config.shot_cap == 12  # the wild side's largest shot, by default
    assert session.final("luck set mild sizes [12] weights [1]").startswith("ok ")
    assert session.final("luck set wild sizes [13]  weights [1]").startswith(f"error {E_DEBUG} ")
    assert session.final("config set luck.mild.sizes [40]").startswith(f"error {E_DEBUG} ")
    assert session.final("profile deal 12").startswith("ok ")
    assert session.final("profile deal 13").startswith(f"error {E_DEBUG} ")  # count unknown
    session("load 25")
    assert session.final("profile deal 25").startswith("ok ")  # the launcher holds them
    assert session.final("profile deal 26").startswith(f"error {E_DEBUG} ")
    assert session.final('config set game.profile "deal 26"').startswith(f"error {E_DEBUG} ")
    assert session.final('config set game.profile "deal 25"').startswith("ok ")
    session("debug on")
    assert session.final("profile deal 30").startswith("ok ")
    assert session.final("luck set wild sizes [30] weights [1]").startswith("ok ")


def test_config_errors_name_the_key(session: Session) -> None:
    assert session.final("config set motor.speed 2") == \
        f"error {E_VALUE} motor.speed = 2: must be within 0.1..1"
    assert session.final("config set motor.sped 1") == \
        f"error {E_VALUE} motor.sped = (missing): unknown key"
    assert session.final("config get motor").startswith(f"error {E_VALUE} motor is a table")


def test_config_save_writes_a_file_that_loads_back(tmp_path: Path) -> None:
    path = tmp_path / "etc" / "launcher.toml"
    b = Session(config_path=path, raw_config=config.default_raw())
    try:
        b("debug on")
        b("config set timing.jam_timeout_ms 650")
        b("luck set mild hazard [0.5, 1.0]")
        b("config set console.port \"/dev/tty my port\"")
        reply = b.final("config save")
        assert reply == f"ok path={path} saved=3 written=true"
        settings = config.load(path)
        assert settings.timing.jam_timeout == 0.65
        assert settings.luck.mild.hazard == (0.5, 1.0)
        assert settings.console.port == "/dev/tty my port"
        text = path.read_text(encoding="utf-8")
        assert "[pins]" not in text and "button" not in text  # defaults are not written
        assert b.final("config set timing.jam_timeout_ms 700").endswith("unsaved=1")
    finally:
        b.close()


def test_config_save_failure_is_an_io_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    b = Session(config_path=blocker / "launcher.toml", raw_config=config.default_raw())
    try:
        b("config set console.port /dev/ttyX")
        reply = b.final("config save")
        assert reply.startswith(f"error {E_IO} cannot write {blocker}/launcher.toml")
    finally:
        b.close()


def test_console_reads_the_config_file_when_not_given_one(tmp_path: Path) -> None:
    path = tmp_path / "launcher.toml"
    path.write_text("[motor]\nspeed = 0.6\n", encoding="utf-8")
    b = Session(config_path=path)
    try:
        assert b.final("config get motor.speed") == "ok motor.speed=0.6"
    finally:
        b.close()


# --- debug commands ----------------------------------------------------------------------


def test_motor_run_needs_debug_a_closed_lid_and_is_capped(session: Session) -> None:
    motor = session.rig.app.board.motor
    assert session.final("motor run 100").startswith(f"error {E_DEBUG} ")
    session("debug on")
    assert session.final(f"motor run {MOTOR_RUN_MAX_MS + 1}").startswith(f"error {E_VALUE} ")
    session("lid open")
    session.rig.advance(0.05)
    assert session.final("motor run 100") == f"error {E_STATE} refused: the lid is not closed"
    assert motor.speed == 0
    session("lid close")
    session.rig.advance(0.05)
    assert session.final(f"motor run {MOTOR_RUN_MAX_MS}").startswith("ok motor=on ")
    assert motor.speed > 0
    session.rig.advance(MOTOR_RUN_MAX_MS / 1000 - 0.001)
    assert motor.speed > 0
    session.rig.advance(0.002)
    assert motor.speed == 0
    assert "# event debug_run_end end=done after=0.3" in session.events
    assert session.rig.state == m.READY


def test_motor_run_stops_when_the_lid_opens(session: Session) -> None:
    session("debug on")
    session("motor run 300")
    session.rig.advance(0.05)
    session.rig.sim.open_lid(full=False)
    session.rig.advance(0)
    assert session.rig.app.board.motor.speed == 0
    assert "# event debug_run_end end=interrupted after=0.05" in session.events
    assert session.rig.state == m.LID_OPEN


def test_a_motor_run_is_known_to_the_machine_and_counts_its_cards(session: Session) -> None:
    session("cards 10")
    session("load 10")
    session("debug on")
    session("motor run 300")
    assert session.rig.state == m.DEBUG_RUN
    assert session.final("press") == "ok state=debug_run"  # refused: no shot mid-run
    assert "# event refused reason=\"debug run\"" in session.events
    session.rig.advance(0.5)  # the run is over, and it pushed cards out of the slot
    ran = len(session.rig.sim.ejected)
    assert ran > 0 and session.rig.state == m.READY
    assert session.rig.inventory == 10 - ran == len(session.rig.sim.cartridge)


def test_debug_off_and_reset_stop_a_run(session: Session) -> None:
    motor = session.rig.app.board.motor
    session("debug on")
    session("motor run 300")
    session("debug off")
    assert motor.speed == 0
    session("debug on")
    session("motor run 300")
    session.console.reset()
    mode = session.console.session
    assert motor.speed == 0 and not mode.debug and not mode.json
    assert session.final("motor run 100").startswith(f"error {E_DEBUG} ")


def open_fully_and_flip(session: Session) -> None:
    """Lift the lid fully: the cartridge flips by itself once (to Wild), and rests there."""
    session.rig.sim.open_lid()
    session.rig.settle()
    assert session.rig.state == m.LID_OPEN and session.rig.side == "wild"


def test_rotate_turns_to_the_next_detent_and_reads_the_side(session: Session) -> None:
    board = session.rig.app.board
    limit = session.rig.settings.timing.rotation_timeout
    session("debug on")
    assert session.final("rotate") == (
        f"error {E_STATE} refused: the rotator turns only with the lid fully open")
    open_fully_and_flip(session)
    assert session.final("rotate") == f"ok rotator=on limit={limit:g}"
    assert session.final("rotate") == f"error {E_STATE} refused while rotating"
    assert session.final("motor run 10") == f"error {E_STATE} refused: the lid is not closed"
    session.rig.advance(3.0)
    assert not board.rotator.is_active
    assert "# event flip side=mild" in session.events
    assert session.rig.sim.side == session.rig.side == "mild"
    assert session.rig.state == m.LID_OPEN and not session.rig.faults


def test_a_debug_rotation_then_a_press_leaves_the_side_the_sensor_reads(
        session: Session) -> None:
    # Once, the console turned the cartridge behind the machine's back and a press 0.75 s
    # later left it ready on the wrong side, between detents. Now the machine owns the turn.
    session("debug on")
    open_fully_and_flip(session)
    session("rotate")
    session.rig.advance(0.75)
    session("press")
    assert session.rig.state == m.ROTATING  # the press does not interrupt the turn
    session.rig.settle()
    assert session.rig.state == m.LID_OPEN
    assert session.rig.side == session.rig.sim.side == "mild"
    assert session.rig.app.board.home.is_active


def test_rotate_with_a_stalled_rotator_is_a_fault_with_the_rotator_off(
        session: Session) -> None:
    limit = session.rig.settings.timing.rotation_timeout
    session("debug on")
    open_fully_and_flip(session)
    session.rig.sim.stall_rotator()
    session("rotate")
    session.rig.advance(limit - 0.1)
    assert session.rig.app.board.rotator.is_active
    session.rig.advance(0.2)
    assert not session.rig.app.board.rotator.is_active
    assert session.rig.state == m.FAULT
    assert session.rig.faults[-1]["code"] == "rotation_timeout"


def test_the_lid_leaving_fully_open_stops_a_turn_and_the_next_opening_finishes_it(
        session: Session) -> None:
    rig = session.rig
    rig.sim.open_lid()
    rig.advance(0.5)  # mid-turn
    assert rig.state == m.ROTATING and rig.app.board.rotator.is_active
    angle = rig.sim.angle
    rig.sim.open_lid(full=False)  # the lid comes down a little
    # Stopped on the pin edge itself, before the reactor has run anything.
    assert not rig.app.board.rotator.is_active and rig.sim.level("motor_sleep") == 0
    rig.advance(2.0)
    assert rig.sim.angle == angle and rig.state == m.LID_OPEN
    assert '# event turn_paused reason="the lid left fully open"' in session.events
    rig.sim.close_lid()
    rig.advance(1.0)
    assert rig.state == m.READY and rig.sim.angle == angle
    rig.sim.open_lid()
    rig.settle()
    assert "# event turn_resumed" in session.events
    assert rig.sim.angle == 180.0 and rig.side == "wild" and rig.state == m.LID_OPEN
    assert not rig.faults and rig.app.machine.memory.counters["flips"] == 1


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


# --- robustness --------------------------------------------------------------------------


def test_a_failing_writer_does_not_break_the_launcher(session: Session) -> None:
    def broken(line: str) -> None:
        raise OSError("gone")

    session.console.write = broken
    assert session.final("load 3") == "ok inventory=3"
    assert session.rig.app.machine.memory.inventory == 3


def test_close_detaches_from_the_launcher(session: Session) -> None:
    session.console.close()
    session.rig.app.load(4)
    assert session.events == []


def test_random_command_sequences_keep_the_console_answering() -> None:
    """Seeded walk over every command with plausible and implausible arguments."""
    rng = random.Random(1234)
    words = ["status", "press", "lid open", "lid full", "lid close", "side", "load 5",
             "inventory", "luck show", "luck set mild hazard [0.3, 1.0]", "seed 3", "stats",
             "log 4", "sleep", "wake", "clear", "config get motor.speed",
             "config set motor.speed 0.7", "selftest", "sounds play wild_bam", "version",
             "help", "json on", "json off", "debug on", "debug off", "motor run 120",
             "rotate", "jam", "unjam", "cards 4", "load", "luck set x", "config save", "??"]
    b = Session()
    try:
        for _ in range(600):
            out = b(rng.choice(words))
            assert len(out) >= 1
            last = out[-1]
            assert is_final(last) or json.loads(last).keys() >= {"ok"}
            b.rig.advance(rng.choice([0, 0.01, 0.2, 1.0]))
        assert b.console.counters["internal"] == 0
        assert not b.rig.app.board.motor.speed or b.rig.state == m.SHOOTING
    finally:
        b.close()


def test_error_code_table_is_complete() -> None:
    import launcher.firmware.registry as c

    codes = {v for k, v in vars(c).items() if k.startswith("E_")}
    assert codes == set(ERROR_CODES)


def test_the_docs_show_every_command_with_its_help(session: Session) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "console.md").read_text(
        encoding="utf-8")
    for spec in session.console.commands:
        assert f"`{spec.usage}`" in docs, spec.usage
        assert spec.help in " ".join(docs.split()), spec.help
    for code in ERROR_CODES:
        assert f"| `{code}` |" in docs, code


def test_the_docs_say_which_module_registers_each_command(session: Session) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "console.md").read_text(
        encoding="utf-8")
    where: dict[str, str] = {}  # command name -> the module its row of the table names
    for row in re.findall(r"^  \| (`.*`) \| .* \| `(launcher/firmware/\w+\.py)`", docs, re.M):
        for name in re.findall(r"`([^`]+)`", row[0]):
            where[name] = row[1].removesuffix(".py").replace("/", ".")
    specs = list(session.console.commands)
    assert set(where) == {s.name for s in specs}
    for spec in specs:
        assert spec.handler.__module__ == where[spec.name], spec.name


@pytest.mark.parametrize("value", ['"/dev/tty\\u001b[2J"', '"/dev/ttya\\u0007b"',
                                   '"/dev/tty\\u009b31m"', '"/dev/ttyx\\u2028y"'])
def test_replies_and_events_are_always_printable(session: Session, value: str) -> None:
    out = session(f"config set console.port {value}")
    shown = session("config get console.port") + out + session.events
    assert shown and all(line.isprintable() for line in shown), shown
    assert "\\u" in out[-1]  # escaped, so the operator sees what was typed


def test_config_save_writes_toml_that_loads_again(tmp_path: Path) -> None:
    cfg = tmp_path / "launcher.toml"
    cfg.write_text("")
    b = Session(config_path=cfg)
    try:
        line = 'config set console.port "/dev/ttya\\nb \\"quoted\\" \\\\ back"'
        assert b.final(line).startswith("ok ")
        assert b.final("config save").startswith("ok ")
    finally:
        b.close()
    assert config.load(cfg).console.port == '/dev/ttya\nb "quoted" \\ back'


def test_config_set_refuses_a_missing_sound_pack(session: Session) -> None:
    reply = session.final("config set audio.pack nowhere")
    assert reply.startswith(f"error {E_VALUE} audio.pack = ") and "manifest.toml" in reply


@pytest.mark.parametrize("typed", [b"stat\x08\x08atus", b"sx\x7ftatus", b"\x08\x7fstatus"])
def test_backspace_from_miniterm_or_any_terminal_edits_the_line(session: Session,
                                                                typed: bytes) -> None:
    assert session.final(typed).startswith("ok state=ready")


def test_a_line_of_bytes_that_are_not_utf8_is_named_so_whoever_decoded_it(
        session: Session) -> None:
    """Issue 32: `press \\xff\\xfe` read by a caller with surrogateescape (stdin in a C
    locale) answered `control character U+DCFF`, while the docs say "not UTF-8"."""
    want = f"error {E_LINE} not UTF-8 (byte 0xff at offset 6)"
    assert session.final(b"press \xff\xfe") == want
    assert session.final(b"press \xff\xfe".decode("utf-8", "surrogateescape")) == want
    assert session.final("press \ud800").startswith(f"error {E_LINE} not UTF-8 (byte 0xed ")
