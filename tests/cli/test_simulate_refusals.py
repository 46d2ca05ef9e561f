"""The small promises of ``simulate`` and ``tune``: an option that would do nothing is refused
in one line, the header says what drew the cards, and ``-v`` works after the verb."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from launcher.cli.main import build_parser, main


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err  # one line
    return err


@pytest.mark.parametrize("game", ["flip-attack", "gin"])
def test_deal_with_launcher_is_refused_where_it_would_be_ignored(capsys, game):
    err = refused(capsys, "simulate", "--game", game, "--deal-with-launcher", "--games", "1")
    assert err.startswith(f"error: --game = '{game}': --deal-with-launcher is for uno")


def test_tune_names_the_one_game_it_plays(capsys):
    err = refused(capsys, "tune", "--game", "uno", "--config", "missing.toml")
    assert "tune plays UNO Flip Attack only" in err and "simulate --game uno" in err
    assert "whole number" not in err  # no longer read as --games


def test_tune_help_promises_only_flip_attack():
    sub = next(a for a in build_parser("tune")._actions if a.dest == "command")
    text = sub.choices["tune"].format_help()
    assert "random-play" not in text and "UnoOptions" not in text
    assert "Only UNO Flip Attack has luck to tune" in text.replace("\n", " ").replace("  ", " ")
    sim = next(a for a in build_parser("simulate")._actions if a.dest == "command")
    assert "random-play" in sim.choices["simulate"].format_help()  # simulate's own bots


@pytest.mark.parametrize("game", ["uno", "uno-splash", "uno-flip"])
def test_a_table_game_through_the_firmware_says_so_and_counts_its_faults(capsys, game):
    argv = ["simulate", "--game", game, "--games", "2", "--jobs", "1", "--no-progress"]
    assert main(argv) == 0
    direct = capsys.readouterr().out
    assert main([*argv, "--through-firmware"]) == 0
    firmware = capsys.readouterr().out
    assert ", direct dealer, seed 1\n" in direct.splitlines(keepends=True)[0]
    assert "through the firmware (simulated launcher), seed 1" in firmware.splitlines()[0]
    assert firmware.splitlines()[-1] == "firmware faults: 0"
    assert "firmware faults" not in direct


@pytest.mark.parametrize(("argv", "debug"), [
    (["-v", "play", "--lines"], True),
    (["play", "-v", "--lines"], True),
    (["play", "--lines", "-v"], True),
    (["play", "--lines"], False),
])
def test_verbose_before_or_after_the_verb(tmp_path, argv, debug):
    done = subprocess.run([str(Path(sys.executable).with_name("launcher")), *argv,
                           "--state", str(tmp_path / "state.json")], input="status\n",
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("ok ")
    assert ("DEBUG " in done.stderr) == debug
