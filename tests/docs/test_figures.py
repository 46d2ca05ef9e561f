"""The README's figures are generated, and a test fails when the committed ones are stale."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _figures():
    spec = importlib.util.spec_from_file_location("make_figures", REPO / "docs" / "make_figures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_shows_the_figures_and_names_the_command_that_makes_them():
    assert "](docs/img/play.svg)" in README
    assert "](docs/img/tune-shot-sizes.png)" in README
    assert "make figures" in README
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^figures: .*\n\t.*python docs/make_figures\.py$", makefile, re.M)
    for name in ("play.svg", "play.txt", "tune-shot-sizes.png"):
        assert (REPO / "docs" / "img" / name).stat().st_size > 0


def test_the_committed_screenshot_is_what_the_script_draws_now(tmp_path):
    pytest.importorskip("rich")
    svg, txt = _figures().write_play(tmp_path)
    committed = (REPO / "docs" / "img" / "play.txt").read_text()
    assert txt.read_text() == committed, "stale screenshot: run `make figures`"
    assert "SIMULATED" in svg.read_text()
    lines = committed.splitlines()
    assert len(lines) == 30 and "SIMULATED" in lines[0]


def test_the_docs_agree_with_the_help_and_with_each_other():
    from launcher.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    games = next(a for a in sub.choices["simulate"]._actions if a.dest == "games").default
    text = (REPO / "docs" / "games.md").read_text()
    assert f"default {games})" in text and "shared folder" not in text
    # The console-flood figures: one run, quoted in both places.
    console = (REPO / "docs" / "console.md").read_text()
    rate = re.search(r"(\d+) lines/s answered", README)
    assert rate and f"answered at {rate.group(1)} lines/s" in console.replace("\n  ", " ")
    stall = re.search(r"one (\d+) ms stall", README)
    assert stall and f"for {stall.group(1)} ms" in console.replace("\n  ", " ")
