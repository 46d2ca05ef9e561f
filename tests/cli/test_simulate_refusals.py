"""The small promises of ``simulate`` and ``tune``: an option that would do nothing is refused
in one line, the header says what drew the cards, and ``-v`` works after the verb."""

from __future__ import annotations

import logging

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
    assert "random-play" in sub.choices["simulate"].format_help()  # simulate's own bots


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


@pytest.fixture
def bare_root():
    """A root logger with no handler, as in a fresh process (basicConfig sets it up only
    then); pytest's own handlers and the level are put back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers.clear()
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.parametrize(("argv", "level"), [
    (["-v", "config", "default"], logging.DEBUG),
    (["config", "default", "-v"], logging.DEBUG),
    (["config", "-v", "default"], logging.DEBUG),
    (["config", "default"], logging.INFO),
])
def test_verbose_before_or_after_the_verb(capsys, bare_root, argv, level):
    assert main(argv) == 0
    assert bare_root.level == level
    capsys.readouterr()
