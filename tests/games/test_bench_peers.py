"""The peer benchmark (``python -m bench.games --peers``): what it runs, what it skips, and
the block it writes into docs/games.md (its timings are not judged here)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _games() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_games", REPO / "bench" / "games.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def no_peers(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("pyspiel", "rlcard.games.uno.game", "rlcard.games.gin_rummy.game"):
        monkeypatch.setitem(sys.modules, name, None)  # the import now raises ImportError


def test_a_missing_peer_is_skipped_with_the_reason(no_peers: None) -> None:
    games = _games()
    pairs = games.peer_pairs(1)
    skipped = {name: why for _, _, runners in pairs for name, why in runners.items()
               if isinstance(why, str)}
    assert set(skipped) == {games.RLCARD_UNO, games.OPENSPIEL_GIN, games.RLCARD_GIN}
    assert "open-spiel not importable" in skipped[games.OPENSPIEL_GIN]
    assert "rlcard not importable" in skipped[games.RLCARD_UNO]
    # Ours still run: a zero budget plays exactly one whole game, on the CPU clock.
    for _, _, runners in pairs:
        ours = next(iter(runners.values()))
        assert not isinstance(ours, str)
        played, steps, spent = ours(0.0)
        assert played == 1 and steps > 10 and spent >= 0


def test_every_engine_has_its_notes_and_the_peers_their_goals() -> None:
    games = _games()
    names = {games.OURS_UNO, games.RLCARD_UNO, games.OURS_GIN, games.OPENSPIEL_GIN,
             games.RLCARD_GIN}
    assert set(games.PEER_NOTES) == names
    assert games.PEER_TARGETS == {games.RLCARD_UNO: 3.0, games.OPENSPIEL_GIN: 5.0}


def test_alternate_gives_each_runner_its_budget_in_slices() -> None:
    games = _games()
    calls: list[tuple[str, float]] = []

    def runner(name: str) -> Callable[[float], tuple[int, int, float]]:
        def run(budget: float) -> tuple[int, int, float]:
            calls.append((name, budget))
            return 2, 10, budget

        return run

    out = games.alternate({"a": runner("a"), "b": runner("b")}, 1.0, 4)
    assert [n for n, _ in calls] == ["a", "b", "b", "a", "a", "b", "b", "a"]  # each leads
    assert all(b == 0.25 for _, b in calls)
    assert out["a"]["games"] == 8 and out["a"]["games_per_s"] == 8.0
    assert out["b"]["steps_per_s"] == 40.0


def test_the_report_names_each_engine_and_the_skipped_peers(no_peers: None) -> None:
    games = _games()
    report = games.peer_report(1, 0.0, 1, command="python -m bench.games --peers 1")
    assert report.startswith("`python -m bench.games --peers 1` on ")
    for name in (games.OURS_UNO, games.OURS_GIN):
        assert f"| {name} | " in report
    assert f"| {games.OPENSPIEL_GIN} | skipped: open-spiel not importable" in report
    assert "deadwood, 10 cards: " in report


def test_write_block_replaces_only_what_lies_between_the_markers(tmp_path: Path) -> None:
    games = _games()
    doc = tmp_path / "doc.md"
    doc.write_text(f"before\n{games.BEGIN}\nold figures\n{games.END}\nafter\n")
    games.write_block(str(doc), "new figures\n")
    assert doc.read_text() == f"before\n{games.BEGIN}\nnew figures\n{games.END}\nafter\n"
    doc.write_text("no markers\n")
    with pytest.raises(SystemExit, match="markers"):
        games.write_block(str(doc), "x\n")


def test_the_docs_quote_a_generated_block() -> None:
    games = _games()
    text = (REPO / "docs" / "games.md").read_text()
    assert text.count(games.BEGIN) == 1 and text.count(games.END) == 1
    block = text.split(games.BEGIN, 1)[1].split(games.END, 1)[0]
    assert block.lstrip().startswith("`python -m bench.games --peers ")
    assert f"| {games.RLCARD_UNO} | " in block and f"| {games.OPENSPIEL_GIN} | " in block
