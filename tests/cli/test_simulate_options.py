"""`simulate`/`tune` options: each bad value gets one line naming it; percentiles stay in data."""

from __future__ import annotations

import dataclasses
import io
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from launcher.cli.main import main
from launcher.cli.simulate import parse_rules
from launcher.core.errors import ConfigError
from launcher.games.base import OptionError
from launcher.games.registry import GAMES
from launcher.games.stats import deciles

FLIP_ATTACK = GAMES["flip-attack"]


@pytest.mark.parametrize(("args", "line"), [
    (["--rule", "stack_hits=maybe"], "error: --rule stack_hits = 'maybe': must be true or false"),
    (["--rule", "uno_penalty_presses=2.5"],
     "error: --rule uno_penalty_presses = 2.5: must be a whole number, at least 0"),
    (["--rule", "hand_size=abc"],
     "error: --rule hand_size = 'abc': must be a whole number, at least 1"),
    (["--rule", "pyl_discard=sometimes"],
     "error: --rule pyl_discard = 'sometimes': must be one of any, colour, match"),
    (["--rule", "max_turns=true"],
     "error: --rule max_turns = True: must be a whole number, at least 1"),
])
def test_a_bad_rule_value_is_one_line_naming_the_rule_and_what_it_takes(capsys, args, line):
    assert main(["simulate", "--games", "1", "--no-progress", *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [line]
    assert captured.out == ""


def test_an_unknown_rule_lists_the_rules(capsys):
    assert main(["simulate", "--games", "1", "--rule", "speed=3"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: --rule speed = 3: is not a rule of flip-attack (its rules: ")
    assert "stack_hits" in line and "hand_size" in line


def test_target_zero_names_target(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", "--games", "1", "--target", "0"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == "launcher simulate: error: argument --target: must be at least 1, not 0"


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
        "error: --players = 16: 112 cards cannot deal 7 to 16"]


def test_good_rules_are_read_with_their_types():
    opts = parse_rules(FLIP_ATTACK, ["stack_hits=true", "hand_size=5", "pyl_discard=match",
                                     "uno_penalty_presses=0"], target=200)
    assert (opts.stack_hits, opts.hand_size, opts.pyl_discard) == (True, 5, "match")
    assert (opts.uno_penalty_presses, opts.target_score) == (0, 200)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_whole_number_rule_refuses_one_below_its_least(game):
    """Every game's options check their bounds themselves, the same way (``base.Options``),
    so the command line and a direct call refuse the same values with the same words."""
    spec = GAMES[game]
    ints = [f for f in dataclasses.fields(spec.options({})) if f.type in ("int", int)]
    assert ints, f"{game} has whole-number rules"
    for f in ints:
        name, lo = f.name, f.metadata.get("range", (1, None))[0]
        with pytest.raises(OptionError, match=f"^{name} = {lo - 1}: must be a whole number"):
            spec.options({name: lo - 1})
        with pytest.raises(ConfigError, match=f"^--rule {name} = {lo - 1}: must be"):
            parse_rules(spec, [f"{name}={lo - 1}"])


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
    from launcher.cli.progress import Progress, RichBar, progress_bar

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

    from launcher.cli.progress import RichBar

    out = io.StringIO()
    bar = RichBar(40, "simulate", console=Console(file=out, width=100, force_terminal=True))
    for _ in range(40):
        bar.update()
    bar.close()
    last = out.getvalue().rstrip().rsplit("\r", 1)[-1]
    assert "simulate" in last and "40/40" in last and "games/s" in last and "eta" in last
