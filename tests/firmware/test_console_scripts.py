"""Scripted console sessions (tests/firmware/scripts/*.txt) against the simulated launcher, diffed.

In the manner of Klipper's batch mode: each script is a transcript. Lines starting ``> `` are
sent to the console; the lines after them are the exact output expected (``# event`` lines
included, in order). Directives start with ``@``; ``;`` starts a comment. docs/console.md
describes the format. ``CONSOLE_SCRIPTS_UPDATE=1`` rewrites the expected output of every
script from what the console really printed (read the diff before keeping it).
"""

from __future__ import annotations

import ast
import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from launcher.core import config
from launcher.firmware.console import Console
from launcher.firmware.doctor_report import keep, report_path
from launcher.firmware.state import StateStore
from launcher.firmware.transport import LineFramer, Overlong
from launcher.sim.rig import SimRig
from launcher.sim.unit import console_extras

SCRIPTS = Path(__file__).parent / "scripts"
UPDATE = os.environ.get("CONSOLE_SCRIPTS_UPDATE") == "1"

# What `@doctor kept` keeps, as `launcher doctor --keep` would.
DOCTOR_REPORT = {"model": "Raspberry Pi 4 Model B Rev 1.5", "ok": False,
                 "at": "2026-12-06 21:00 UTC",
                 "checks": [{"status": "PASS", "item": "board", "detail": "Pi 4", "fix": None},
                            {"status": "WARN", "item": "watchdog",
                             "detail": "RuntimeWatchdogSec is not set", "fix": "install.sh"},
                            {"status": "FAIL", "item": "service user",
                             "detail": "launcher is not in gpio",
                             "fix": "sudo usermod -aG gpio launcher"}]}
# Header directives: how the launcher and the console are built.
HEADER = ("@seed", "@side", "@config", "@config-file", "@real", "@owner", "@state-file",
          "@state-path-here")
# What `@sim VERB` may do to the simulated launcher (names, never code).
SIM_VERBS = {
    "press": lambda sim: sim.press(),
    "hold": lambda sim: sim.hold_button(),
    "release": lambda sim: sim.release(),
    "ajar": lambda sim: sim.open_lid(full=False),
    "full": lambda sim: sim.open_lid(full=True),
    "close": lambda sim: sim.close_lid(),
    "stall": lambda sim: sim.stall_rotator(True),
    "unstall": lambda sim: sim.stall_rotator(False),
}


@dataclass
class Session:
    """A console on a simulated launcher, as a script sets it up."""

    tmp: Path
    seed: int = 0
    side: str = "mild"
    overrides: list[tuple[str, str]] = field(default_factory=list)
    config_file: bool = False
    state_file: bool = False
    state_path_here: bool = False  # the config's state.path in the session's own folder
    real: bool = False
    owner: bool = False
    rig: Any = None
    console: Any = None
    out: list[str] = field(default_factory=list)
    reboots: int = 0
    pid: str = ""  # the pairing window `@pair` opened: `$PAIR` in a line stands for its id
    framer: LineFramer = field(default_factory=LineFramer)

    def start(self) -> None:
        raw = config.default_raw()
        if self.state_path_here:  # what sits beside the state file (doctor.json) is ours
            raw = config.set_key(raw, "state.path", str(self.tmp / "state.json"))
        for key, text in self.overrides:
            raw = config.set_key(raw, key, config.parse_value(text))
        path = None
        if self.config_file:
            path = self.tmp / "launcher.toml"
            # As a maker writes one: only the keys that differ from the defaults.
            own: dict[str, Any] = {}
            for key, text in self.overrides:
                *tables, leaf = key.split(".")
                node = own
                for t in tables:
                    node = node.setdefault(t, {})
                node[leaf] = config.parse_value(text)
            path.write_text(config.to_toml(own), encoding="utf-8")
        store = StateStore(self.tmp / "state.json") if self.state_file else None
        self.rig = SimRig(config.settings_from_dict(raw), seed=self.seed, side=self.side,
                          store=store)
        extras = {} if self.real else console_extras(self.rig.sim)
        self.console = Console(self.rig.app, **extras, raw_config=raw, config_path=path,
                               write=self.out.append,
                               reboot=self._reboot if self.owner else None)

    def _reboot(self) -> None:
        self.reboots += 1

    def send(self, data: bytes) -> None:
        for item in self.framer.feed(data):
            if isinstance(item, Overlong):
                self.out.extend(self.console.handle_overlong(item.size))
            else:
                self.out.extend(self.console.handle_line(item))
            # As on the reactor thread: what the command set off runs before the next line.
            self.rig.advance(0)

    def take(self) -> list[str]:
        out, self.out[:] = list(self.out), []
        return out

    def close(self) -> None:
        if self.console is not None:
            self.console.close()
        if self.rig is None:
            return
        if self.console is not None and self.console.stopped:
            self.rig.sim.board.close()  # reboot-safe has stopped the launcher already
        else:
            self.rig.close()


def _header(s: Session, words: list[str]) -> None:
    d = words[0]
    if d == "@seed":
        s.seed = int(words[1])
    elif d == "@side":
        s.side = words[1]
    elif d == "@config":
        s.overrides.append((words[1], " ".join(words[2:])))
    elif d == "@config-file":
        s.config_file = True
    elif d == "@state-file":
        s.state_file = True
    elif d == "@state-path-here":
        s.state_path_here = True
    elif d == "@real":
        s.real = True
    elif d == "@owner":
        s.owner = True


def _step(s: Session, line: str) -> list[str]:
    """Carry out one command or directive; what the console printed meanwhile."""
    if line.startswith(">> "):
        s.send(ast.literal_eval(f'b"{line[3:]}"'))
    elif line.startswith("> ") or line == ">":
        s.send(line[2:].replace("$PAIR", s.pid).encode("utf-8") + b"\n")
    else:
        words = line.split()
        d = words[0]
        if d == "@advance":
            s.rig.advance(float(words[1]))
        elif d == "@sim":
            SIM_VERBS[words[1]](s.rig.sim)
            s.rig.advance(0)
        elif d == "@pair":  # a web client asks for a pairing window (POST /api/pair)
            s.pid = s.rig.app.pairing.open()
            s.rig.advance(0)
        elif d == "@doctor":  # the doctor's kept report: `kept`, `broken` or `none`
            path = report_path(s.rig.app.state_path)
            assert path.parent == s.tmp, "@doctor needs @state-path-here"
            path.unlink(missing_ok=True)
            if words[1] == "kept":
                keep(DOCTOR_REPORT, path)
            elif words[1] == "broken":
                path.write_text('{"checks": "truncated', encoding="utf-8")
        elif d == "@long":
            s.send(b"x" * int(words[1]) + b"\n")
        elif d == "@file":
            path = s.console.config.path
            return [f"| {t}" for t in path.read_text(encoding="utf-8").splitlines()]
        elif d == "@saved":
            path = s.tmp / "state.json"
            return [f"| {t}" for t in path.read_text(encoding="utf-8").splitlines()]
        elif d == "@reboots":
            return [f"reboots={s.reboots}"]
        elif d == "@motor":
            return [f"motor={s.rig.sim.board.motor.speed:g}"]
        else:
            raise ValueError(f"unknown directive {line!r}")
    return s.take()


def _is_step(line: str) -> bool:
    return line.startswith((">", "@"))


def _matches(expected: str, actual: str) -> bool:
    if expected.startswith("~ "):
        return re.fullmatch(expected[2:], actual) is not None
    return expected == actual


def run_script(path: Path, tmp: Path) -> tuple[list[str], list[str], list[str]]:
    """Run a script: (expected transcript, actual transcript, the script rewritten)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    s = Session(tmp)
    expected: list[str] = []
    actual: list[str] = []
    rewritten: list[str] = []
    started = False
    try:
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if not line.strip() or line.startswith(";"):
                rewritten.append(line)
                continue
            if not _is_step(line):
                raise ValueError(f"{path.name}:{i}: output line with no command before it")
            words = line.split()
            if words[0] in HEADER:
                if started:
                    raise ValueError(f"{path.name}:{i}: {words[0]} belongs before the commands")
                _header(s, words)
                rewritten.append(line)
                continue
            if not started:
                s.start()
                started = True
            want: list[str] = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith(";") \
                    and not _is_step(lines[i]):
                want.append(lines[i])
                i += 1
            got = _step(s, line)
            expected += [line, *want]
            # A regex line that matches is shown as itself, so that the diff shows only misses.
            shown = [want[k] if k < len(want) and _matches(want[k], g) else g
                     for k, g in enumerate(got)]
            actual += [line, *shown]
            rewritten += [line, *shown]
    finally:
        s.close()
    return expected, actual, rewritten


@pytest.mark.parametrize("path", sorted(SCRIPTS.glob("*.txt")), ids=lambda p: p.stem)
def test_script(path: Path, tmp_path: Path) -> None:
    expected, actual, rewritten = run_script(path, tmp_path)
    if UPDATE and expected != actual:
        path.write_text("\n".join(rewritten) + "\n", encoding="utf-8")
    diff = "\n".join(difflib.unified_diff(expected, actual, "expected", "actual", lineterm=""))
    assert expected == actual, f"{path.name} differs:\n{diff}"


def test_there_are_enough_scripts() -> None:
    names = {p.stem for p in SCRIPTS.glob("*.txt")}
    assert len(names) >= 10
    for topic in ("bring_up", "flip", "jam_recovery", "debug_gating", "json_mode", "errors"):
        assert topic in names


def test_a_wrong_expectation_fails(tmp_path: Path) -> None:
    """The runner itself: a script whose expected output is wrong must not pass."""
    script = tmp_path / "wrong.txt"
    script.write_text("> load 5\n# event loaded cards=5\nok inventory=6\n", encoding="utf-8")
    expected, actual, _ = run_script(script, tmp_path)
    assert expected != actual
    assert actual[-1] == "ok inventory=5"


def _sent_and_answered() -> list[tuple[str, list[str]]]:
    """Every ``> `` line of every script, with the output lines that follow it."""
    pairs: list[tuple[str, list[str]]] = []
    for path in SCRIPTS.glob("*.txt"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("> "):
                pairs.append((line[2:], []))
            elif pairs and line and not line.startswith((";", "@", ">")):
                pairs[-1][1].append(line.removeprefix("~ "))
            elif line.startswith(("@", ">>")):
                pairs.append(("", []))
    return pairs


def test_every_command_works_and_fails_in_some_script() -> None:
    """Each command has a script where it answers ok, and one where it answers error."""
    s = Session(Path("."))
    s.start()
    try:
        registry = s.console.commands
        names = {spec.name for spec in registry}
        worked: set[str] = set()
        failed: set[str] = set()
        for sent, out in _sent_and_answered():
            words = sent.split()
            if not words:
                continue
            try:
                spec, _ = registry.find(words)
            except Exception:
                continue
            finals = [x for x in out if x == "ok" or x.startswith(("ok ", "error ", '{"ok"'))]
            if any(x.startswith(("error ", '{"ok":false')) for x in finals):
                failed.add(spec.name)
            elif finals:
                worked.add(spec.name)
    finally:
        s.close()
    assert names - failed == set(), "commands with no error path in the scripts"
    assert names - worked == set(), "commands never answering ok in the scripts"
