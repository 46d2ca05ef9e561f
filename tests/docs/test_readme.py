"""The README tells the truth: its diagram, pinout and commands match the code."""

from __future__ import annotations

import re
from pathlib import Path

from launcher.cli.main import build_parser
from launcher.core import config, machine

README = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")


def test_state_diagram_is_the_machines_own():
    block = re.search(r"```mermaid\n(.*?)```", README, re.S)
    assert block is not None
    assert block.group(1) == machine.mermaid()


def test_pinout_table_matches_the_default_config():
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \|", README, re.M)
    pins = config.load().pins
    assert {k: int(v) for k, v in rows} == {
        k: v for k, v in vars(pins).items() if v is not None
    }
    # An optional pin that is not wired by default is listed as -1.
    unwired = re.findall(r"^\| `(\w+)` \| -1 ", README, re.M)
    assert sorted(unwired) == sorted(k for k, v in vars(pins).items() if v is None)


def test_the_two_commands_are_there():
    assert "make play" in README and "make test" in README
    makefile = (Path(__file__).parents[2] / "Makefile").read_text()
    assert re.search(r"^play: .*\n\t.*launcher play$", makefile, re.M)
    assert re.search(r"^test: lint\n\t.*pytest$", makefile, re.M)


def test_every_command_the_readme_names_exists():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in re.findall(r"`launcher (\w[\w-]*)", README):
        assert name in sub.choices, name
