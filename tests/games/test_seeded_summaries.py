"""Seeded summaries stay as they were: a change of engine (Flip Attack's in-place table, the
per-game packages, the shared summary module) must play the same games from the same seeds.

The figures are those of the code before those changes (commit a9d4af4), except UNO Flip
and Gin with the heuristic bot, which rule items changed on purpose (a last Flip flips; the
knocker chooses the layout), and the UNO family's, which shuffle with the one shuffle of
every game since (``draws.shuffle_as_random``, random.shuffle's very swaps; the family had a
sort by random keys of its own): their figures are the new ones. A deliberate change of the
games regenerates them with the command in each case.
"""

from __future__ import annotations

import pytest

from launcher.cli.main import main

CASES = [
    (["--games", "20", "--seed", "11"],
     ["20 games, 76 hands, 4 players",
      "turns per hand:    mean 53.4, median 39, p10 20.5, p90 97.5, max 207"]),
    (["--game", "uno", "--games", "20", "--seed", "11"],
     ["20 games, 90 hands, 4 players",
      "turns per hand:    mean 50.7, median 41, p10 24, p90 80.5, max 224"]),
    (["--game", "uno-splash", "--games", "20", "--seed", "11"],
     ["20 games, 92 hands, 4 players",
      "turns per hand:    mean 49.7, median 43, p10 24, p90 79.9, max 224"]),
    (["--game", "gin", "--games", "20", "--seed", "11", "--bots", "random"],
     ["20 games, 2897 hands (144.8 per game)",
      "turns per hand: mean 57.7, median 58, max 100"]),
    (["--game", "uno-flip", "--games", "20", "--seed", "11"],
     ["20 games, 73 hands, 4 players",
      "turns per hand:    mean 59.5, median 54, p10 24, p90 112.6, max 170"]),
    (["--game", "gin", "--games", "20", "--seed", "11", "--bots", "heuristic"],
     ["20 games, 203 hands (10.2 per game)",
      "turns per hand: mean 10.9, median 11, max 22"]),
]


@pytest.mark.parametrize(("args", "lines"), CASES, ids=lambda x: " ".join(x)[:40])
def test_a_seeded_summary_is_what_it_was(args, lines, capsys):
    assert main(["simulate", "--no-progress", "--jobs", "1", *args]) == 0
    out = capsys.readouterr().out.splitlines()
    for line in lines:
        assert line in out


@pytest.mark.parametrize("game", ["flip-attack", "uno", "uno-splash", "uno-flip", "gin"])
def test_every_game_s_win_rates_read_games_then_hands(game, capsys):
    assert main(["simulate", "--no-progress", "--jobs", "1", "--game", game, "--games",
                 "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "win rates            games    hands" in out
