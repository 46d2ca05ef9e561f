"""`simulate`/`tune` options: each bad value gets one line naming it; percentiles stay in data."""

from __future__ import annotations

import dataclasses
import io
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from launcher.cli.main import main
from launcher.cli.simulate import RULE_MINIMUM, check_rule, parse_options
from launcher.core.errors import ConfigError
from launcher.games.flip_attack import GameOptions
from launcher.games.stats import deciles


@pytest.mark.parametrize(("args", "line"), [
    (["--rule", "stack_hits=maybe"], "error: --rule stack_hits = 'maybe': must be true or false"),
    (["--rule", "uno_penalty_presses=2.5"],
     "error: --rule uno_penalty_presses = '2.5': must be a whole number, at least 0"),
    (["--rule", "hand_size=abc"],
     "error: --rule hand_size = 'abc': must be a whole number, at least 1"),
    (["--rule", "pyl_discard=sometimes"],
     "error: --rule pyl_discard = 'sometimes': must be one of any, colour, match"),
    (["--rule", "max_turns=true"],
     "error: --rule max_turns = 'true': must be a whole number, at least 1"),
])
def test_a_bad_rule_value_is_one_line_naming_the_rule_and_what_it_takes(capsys, args, line):
    assert main(["simulate", "--games", "1", "--no-progress", *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [line]
    assert captured.out == ""


@pytest.mark.parametrize(("game", "rule"), [("flip-attack", "stack_hits"), ("uno", "wild_draw"),
                                          ("gin", "knock_limit")])
def test_an_unknown_rule_lists_the_rules_in_the_same_words_for_every_game(capsys, game, rule):
    assert main(["simulate", "--game", game, "--games", "1", "--rule", "speed=3"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: --rule speed = '3': no such rule in {game}; NAME is one of ")
    assert rule in line and "hand_size" in line
    assert main(["simulate", "--game", game, "--games", "1", "--rule", "speed"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: --rule speed = (missing): must be NAME=VALUE; NAME is one of ")


@pytest.mark.parametrize(("game", "line"), [
    ("flip-attack", "error: --rule hand_size = 'x': must be a whole number, at least 1"),
    ("uno", "error: --rule hand_size = 'x': must be a whole number >= 1"),
    ("uno-flip", "error: --rule hand_size = 'x': must be a whole number >= 1"),
    ("gin", "error: --rule hand_size = 'x': must be int (like the default 10)"),
])
def test_a_bad_value_names_its_rule_once_in_every_game(capsys, game, line):
    """It was `--rule = 'hand_size=x': hand_size = 'x': must be int` (gin) and
    `--rule = 'hand_size=x': hand_size must be ... not 'x'` (uno); an unknown rule was
    `--rule foo = 'foo=1'` (flip-attack) or `--rule foo = None` (no `=`, uno and gin)."""
    argv = ["simulate", "--game", game, "--games", "1", "--rule", "max_turns=100"]
    if game == "gin":
        argv[-1] = "max_hands=50"
    assert main([*argv, "--rule", "hand_size=x"]) == 2
    assert capsys.readouterr().err.splitlines() == [line]


@pytest.mark.parametrize("option", ["--seed", "--jobs", "--games", "--players"])
def test_a_number_that_is_not_one_is_worded_alike_for_every_option(capsys, option):
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", option, "x"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"launcher simulate: error: argument {option}: not a whole number: 'x'")


@pytest.mark.parametrize("verb", ["simulate", "tune"])
def test_more_players_than_the_deck_deals_is_a_bad_value_not_a_failure(capsys, verb):
    """`simulate --players 16` exited 1 ("112 cards cannot deal 7 to 16") after starting."""
    argv = [verb, "--players", "16", "--games", "1", "--no-progress"]
    if verb == "tune":
        argv += ["--config", "docs/examples/wild-party.toml"]
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: --players = 16: 112 cards cannot deal 7 to each and turn a first discard"]


def test_target_zero_names_target(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", "--games", "1", "--target", "0"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "launcher simulate: error: argument --target: must be at least 1, not 0"


def test_good_rules_are_read_with_their_types():
    opts = parse_options(["stack_hits=true", "hand_size=5", "pyl_discard=match",
                          "uno_penalty_presses=0"], target=200)
    assert (opts.stack_hits, opts.hand_size, opts.pyl_discard) == (True, 5, "match")
    assert (opts.uno_penalty_presses, opts.target_score) == (0, 200)


def test_the_minimums_agree_with_game_options():
    ints = [f.name for f in dataclasses.fields(GameOptions) if f.type in ("int", int)]
    assert ints, "GameOptions has whole-number rules"
    for name in ints:
        lo = RULE_MINIMUM.get(name, 1)
        GameOptions(**{name: lo})
        with pytest.raises(ValueError):
            GameOptions(**{name: lo - 1})
        with pytest.raises(ConfigError):
            check_rule(f"{name}={lo - 1}")


@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=12))
def test_deciles_never_leave_the_data(values):
    q = deciles(values)
    assert len(q) == 9
    assert min(values) <= q[0] <= q[-1] <= max(values)
    assert q == sorted(q)


def test_one_game_prints_percentiles_within_the_data(capsys):
    assert main(["simulate", "--games", "1", "--seed", "1", "--no-progress"]) == 0
    rows = [x for x in capsys.readouterr().out.splitlines() if "p90" in x]
    assert rows
    for row in rows:
        fields = dict(part.strip().split(" ", 1) for part in row.split(":", 1)[1].split(","))
        assert float(fields["p10"]) <= float(fields["median"]) <= float(fields["p90"])
        assert float(fields["p90"]) <= float(fields["max"])


def test_deciles_of_two_values_interpolate_between_them():
    rng = random.Random(3)
    a, b = sorted(rng.sample(range(100), 2))
    q = deciles([a, b])
    assert q[0] == pytest.approx(a + (b - a) * 0.1)
    assert q[-1] == pytest.approx(a + (b - a) * 0.9)


def test_the_progress_bar_is_rich_on_a_terminal_plain_when_forced_elsewhere():
    from launcher.cli.simulate import Progress, RichBar, progress_bar

    assert progress_bar(10, "x", forced=False, disabled=False, terminal=False) is None
    assert progress_bar(10, "x", forced=True, disabled=True, terminal=True) is None
    plain = progress_bar(10, "x", forced=True, disabled=False, terminal=False)
    assert isinstance(plain, Progress)
    pytest.importorskip("rich")
    bar = progress_bar(10, "x", forced=False, disabled=False, terminal=True)
    try:
        assert isinstance(bar, RichBar)
    finally:
        assert bar is not None
        bar.close()


def test_the_rich_bar_shows_count_rate_and_times():
    pytest.importorskip("rich")
    from rich.console import Console

    from launcher.cli.simulate import RichBar

    out = io.StringIO()
    bar = RichBar(40, "simulate", console=Console(file=out, width=100, force_terminal=True))
    for _ in range(40):
        bar.update()
    bar.close()
    last = out.getvalue().rstrip().rsplit("\r", 1)[-1]
    assert "simulate" in last and "40/40" in last and "games/s" in last and "eta" in last
