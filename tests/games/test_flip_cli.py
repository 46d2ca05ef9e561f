"""``launcher simulate`` and ``launcher tune`` from the command line."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from launcher.cli.main import main
from launcher.cli.progress import Progress
from launcher.cli.simulate import parse_bots, parse_rules
from launcher.games.registry import GAMES


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_simulate_prints_the_summary(capsys):
    rc, out, _ = run(capsys, "simulate", "--games", "4", "--seed", "5", "--no-progress")
    assert rc == 0
    assert "4 games" in out and "4 players" in out
    seats = re.findall(r"seat (\d) (\w+) +([\d.]+)% +([\d.]+)%", out)
    assert [(s, b) for s, b, _, _ in seats] == [("0", "heuristic"), ("1", "random"),
                                                  ("2", "heuristic"), ("3", "random")]
    assert sum(float(g) for _, _, g, _ in seats) == pytest.approx(100.0, abs=0.2)
    for heading in ("turns per hand:", "presses per hand:", "flips per hand:", "reloads:",
                    "cards per press", "dry-streak histogram"):
        assert heading in out
    assert re.search(r"mild +\d+ +[\d.]+% +[\d.]+ +[\d.]+", out)
    assert "firmware faults" not in out


def test_simulate_is_replayable_by_seed(capsys):
    _, a, _ = run(capsys, "simulate", "--games", "2", "--seed", "9", "--no-progress")
    _, b, _ = run(capsys, "simulate", "--games", "2", "--seed", "9", "--no-progress")
    _, c, _ = run(capsys, "simulate", "--games", "2", "--seed", "10", "--no-progress")
    assert a == b and a.replace("seed 9", "seed 10") != c


def test_simulate_through_the_firmware_counts_faults(capsys):
    rc, out, _ = run(capsys, "simulate", "--games", "2", "--players", "3", "--through-firmware",
                     "--bots", "heuristic", "--no-progress")
    assert rc == 0
    assert "through the firmware" in out and "firmware faults: 0" in out
    assert out.count("heuristic") >= 3


def test_simulate_takes_house_rules_and_refuses_bad_ones(capsys):
    rc, out, _ = run(capsys, "simulate", "--games", "1", "--players", "2", "--rule",
                     "stack_hits=true", "--rule", "two_player_reverse=\"reverse\"",
                     "--no-progress")
    assert rc == 0 and "1 games" in out
    rc, _, err = run(capsys, "simulate", "--games", "1", "--rule", "stack=true")
    assert rc == 2 and "--rule stack" in err
    rc, _, err = run(capsys, "simulate", "--games", "1", "--bots", "genius")
    assert rc == 2 and "--bots" in err


def test_parse_helpers():
    assert parse_bots("heuristic,random", 5) == ["heuristic", "random", "heuristic", "random",
                                                 "heuristic"]
    opts = parse_rules(GAMES["flip-attack"], ["pyl_discard=\"colour\"", "max_turns=50"],
                       target=200)
    assert (opts.pyl_discard, opts.max_turns, opts.target_score) == ("colour", 50, 200)


def test_progress_bar_redraws_only_when_it_moves():
    stream = io.StringIO()
    bar = Progress(200, "simulate", stream, width=10)
    for _ in range(200):
        bar.update()
    bar.close()
    text = stream.getvalue()
    assert text.count("\r") == 11  # 0..10 tenths filled
    assert text.endswith("[##########] 200/200\n")


LUCKY = """
[luck.wild]
hazard = [0.5, 1.0]
sizes = [1, 2]
weights = [1, 1]
"""


def test_tune_writes_a_report_and_plots(capsys, tmp_path):
    cfg = tmp_path / "lucky.toml"
    cfg.write_text(LUCKY, encoding="utf-8")
    out_dir = tmp_path / "report"
    rc, out, _ = run(capsys, "tune", "--config", str(cfg), "--games", "3", "--out",
                     str(out_dir), "--no-progress")
    assert rc == 0 and "wrote" in out
    report = (out_dir / "report.md").read_text(encoding="utf-8")
    assert report.startswith(f"# Luck tuning report: {cfg}")
    assert "| wild: shot rate, configured | 25.8% | 66.7% |" in report
    assert "| wild: cards per shot, configured | 6.26 | 1.50 |" in report
    pngs = sorted(p.name for p in out_dir.glob("*.png"))
    assert pngs == ["dry_streaks.png", "hand_length.png", "hazard.png", "shot_sizes.png"]
    assert all((out_dir / p).read_bytes().startswith(b"\x89PNG") for p in pngs)
    for p in pngs:
        assert f"]({p})" in report


WILD_PARTY = Path(__file__).resolve().parents[2] / "docs" / "examples" / "wild-party.toml"


def _rows(report: str) -> dict[str, list[str]]:
    """The report's table: measure -> [defaults, this config, difference]."""
    return {cells[0]: cells[1:] for cells in
            ([c.strip() for c in line.strip("|").split("|")] for line in report.splitlines()
             if line.startswith("| ") and not line.startswith("| measure"))}


def test_tune_counts_the_shots_the_empty_launcher_cut_short_apart(capsys, tmp_path):
    """The README's wild-party.toml runs the launcher empty: a shot there takes what is
    left (1 to 3 cards though its smallest shot is 4). Such shots are counted apart, the
    chi-square test compares only the whole shots with the weights (and finds them true to
    the table), and a note says so; the cards per whole shot match the configured mean."""
    rc, _, _ = run(capsys, "tune", "--config", str(WILD_PARTY), "--games", "60", "--seed",
                   "1", "--jobs", "1", "--no-progress", "--out", str(tmp_path / "t"))
    assert rc == 0
    report = (tmp_path / "t" / "report.md").read_text(encoding="utf-8")
    rows = _rows(report)
    ends = rows["wild: shots at the end of the cartridge (took the last cards)"]
    end, last = re.fullmatch(r"(\d+) \((\d+)\)", ends[1]).groups()
    assert int(end) > int(last) > 50
    p = rows["wild: whole shots vs weights, chi-square p"][1]
    assert not p.endswith("!") and float(p) > 0.01, p
    configured = float(rows["wild: cards per shot, configured"][1])
    assert float(rows["wild: cards per whole shot, observed"][1]) == pytest.approx(
        configured, abs=0.15)
    notes = report.split("## Notes", 1)[1].split("##", 1)[0]
    assert f"wild: {ends[0].split()[0]} shots (defaults) and {end} (this config) came at " \
           "the end of the cartridge" in notes
    assert "presses found it empty" in notes and "left out of the chi-square test" in notes


def test_tune_explains_every_flag_it_raises(capsys, tmp_path):
    cfg = tmp_path / "lucky.toml"
    cfg.write_text(LUCKY, encoding="utf-8")
    rc, _, _ = run(capsys, "tune", "--config", str(cfg), "--games", "20", "--seed", "3",
                   "--jobs", "1", "--no-progress", "--out", str(tmp_path / "t"))
    assert rc == 0
    report = (tmp_path / "t" / "report.md").read_text(encoding="utf-8")
    starred = [name for name, cells in _rows(report).items() if cells[2].endswith("*")]
    assert starred
    notes = report.split("## Notes", 1)[1].split("##", 1)[0]
    assert f"- `*` ({', '.join(starred)}):" in notes


def test_tune_without_matplotlib_says_plots_were_skipped(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import raises ImportError
    cfg = tmp_path / "lucky.toml"
    cfg.write_text(LUCKY, encoding="utf-8")
    rc, out, _ = run(capsys, "tune", "--config", str(cfg), "--games", "2", "--out",
                     str(tmp_path), "--no-progress")
    assert rc == 0 and "plots skipped" in out
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "Plots skipped: matplotlib is not installed" in report
    assert not list(tmp_path.glob("*.png"))


def test_tune_names_a_bad_config_key(capsys, tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[luck.mild]\nhazard = [0.5, 0.9]\n", encoding="utf-8")
    rc, _, err = run(capsys, "tune", "--config", str(cfg), "--games", "1", "--out",
                     str(tmp_path))
    assert rc == 2 and "luck.mild.hazard[1]" in err


def test_simulate_refuses_a_house_rule_that_does_nothing_at_the_table(capsys):
    rc, _, err = run(capsys, "simulate", "--games", "1", "--players", "4", "--rule",
                     "two_player_reverse=\"reverse\"", "--no-progress")
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "--rule two_player_reverse = 'reverse': does nothing in flip-attack" in err
    assert "only acts with 2 players, not 4" in err


@pytest.mark.parametrize(("game", "players", "says"), [
    ("flip-attack", "16", "--players = 16: 112 cards cannot deal 7 to 16"),
    ("uno", "16", "--players = 16: 108 cards cannot deal 7 to 16"),
    ("gin", "3", "--players = 3: gin rummy is a game for two players"),
])
def test_a_table_too_big_for_the_deck_is_refused_before_any_game(capsys, game, players, says):
    rc, out, err = run(capsys, "simulate", "--game", game, "--players", players, "--games",
                       "1", "--no-progress")
    assert (rc, out) == (2, "") and err.strip() == f"error: {says}"


@pytest.mark.parametrize("game", ["uno", "uno-splash", "uno-flip", "gin"])
def test_a_game_without_luck_refuses_a_config_whose_luck_it_would_ignore(capsys, game):
    rc, out, err = run(capsys, "simulate", "--game", game, "--config", str(WILD_PARTY),
                       "--games", "1", "--no-progress")
    assert (rc, out) == (2, "")
    assert err.strip().startswith(f"error: --config = '{WILD_PARTY}': ")
    assert err.strip().endswith("has no luck to configure")
