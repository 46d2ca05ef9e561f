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


def test_the_debian_packages_named_are_those_ci_setup_installs():
    setup = (Path(__file__).parents[2] / ".ci" / "setup").read_text()
    installed = re.search(r"^apt_packages=\((.*)\)$", setup, re.M)
    assert installed is not None
    said = re.search(r"installs what the machine lacks \(the Debian packages(.*?), through",
                     README, re.S)
    assert said is not None
    assert re.findall(r"`([\w.+-]+)`", said.group(1)) == installed.group(1).split()


def test_no_sound_says_what_pins_shows_of_the_amplifier():
    """It said `amp_enable=1` while ready; the amplifier is off 0.1 s after each cue."""
    import random
    from dataclasses import replace

    from launcher.core.reactor import ManualReactor
    from launcher.firmware.console import Console
    from launcher.sim.unit import console_extras, simulated_app

    item = " ".join(README.split("- **No sound.**", 1)[1].split("\n- **", 1)[0].split())
    assert "`amp_enable=1` while the unit is ready" not in item
    assert "`amp_enable=0` at rest" in item and "1 only while a cue plays" in item
    settings = config.load()
    settings = replace(settings, state_path=None,
                       audio=replace(settings.audio, backend="recording"))
    reactor = ManualReactor()
    app, sim = simulated_app(settings, reactor, random.Random(1), lambda text: None)
    app.start()
    console = Console(app, **console_extras(sim))

    def amp() -> str:
        return next(w for w in console.handle_line("pins")[-1].split()
                    if w.startswith("amp_enable="))

    try:
        reactor.advance(5)
        assert app.status()["state"] == "ready" and amp() == "amp_enable=0"
        console.handle_line("sounds play startup")
        reactor.advance(0.05)
        assert amp() == "amp_enable=1"
        reactor.advance(3)
        assert amp() == "amp_enable=0"
    finally:
        console.close()
        app.stop()
        app.board.close()
