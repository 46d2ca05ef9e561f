"""The console's protocol: one final line a reply, error codes, JSON mode, and robustness."""

from __future__ import annotations

import builtins
import json
import logging
import random
import re
from pathlib import Path
from typing import Any

import pytest
from consoles import Session, is_final

from launcher.core import config
from launcher.core import machine as m
from launcher.firmware.console import HELP_ORDER
from launcher.firmware.registry import (
    E_INTERNAL,
    E_LINE,
    E_UNKNOWN,
    E_USAGE,
    E_VALUE,
    ERROR_CODES,
    CommandError,
    Registry,
    text_value,
)

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
