"""The peer benchmark (``python -m bench.games --peers``): what it runs, what it skips, and
the block it writes into docs/games.md (its timings are not judged here)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def games(bench: Callable[[str], ModuleType]) -> ModuleType:
    """bench/games.py, as ``python -m bench.games`` imports it (its ``bench.keep`` too)."""
    return bench("games")


@pytest.fixture
def no_peers(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("pyspiel", "rlcard.games.uno.game", "rlcard.games.gin_rummy.game"):
        monkeypatch.setitem(sys.modules, name, None)  # the import now raises ImportError


def test_a_missing_peer_is_skipped_with_the_reason(games: ModuleType, no_peers: None) -> None:
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


def test_every_engine_has_its_notes_and_the_peers_their_goals(games: ModuleType) -> None:
    names = {games.OURS_UNO, games.RLCARD_UNO, games.OURS_GIN, games.OPENSPIEL_GIN,
             games.RLCARD_GIN, games.OURS_UNO_CONTRACT, games.OURS_GIN_CONTRACT}
    assert set(games.PEER_NOTES) == names
    assert games.PEER_TARGETS == {games.RLCARD_UNO: 3.0, games.OPENSPIEL_GIN: 5.0}
    assert games.CONTRACT_TARGETS == {games.OURS_UNO_CONTRACT: (games.RLCARD_UNO, 2.0),
                                      games.OURS_GIN_CONTRACT: (games.OPENSPIEL_GIN, 4.0)}


def test_the_contract_runners_play_whole_games_through_the_contract(games: ModuleType) -> None:
    for title, _, runners in games.peer_pairs(1):
        name = games.OURS_UNO_CONTRACT if "UNO" in title else games.OURS_GIN_CONTRACT
        played, steps, spent = runners[name](0.0)
        assert played >= 1 and steps > 10 and spent >= 0


def test_the_contract_goal_is_judged_on_the_median_of_the_rounds(games: ModuleType) -> None:
    ours, peer, contract = games.OURS_UNO, games.RLCARD_UNO, games.OURS_UNO_CONTRACT
    r = {"command": "c", "date": "d", "python": "3", "machine": "m", "cores": 2,
         "load_1min": 0.5, "versions": {"RLCard": "1"}, "rounds": 3, "seconds": 1,
         "slices": 1, "solver": [],
         "comparisons": [{"title": "t", "unit": "games", "engines": [
             {"name": ours, "games_per_s": [30.0, 30.0, 30.0], "steps_per_s": [1, 1, 1]},
             {"name": peer, "games_per_s": [10.0, 10.0, 10.0], "steps_per_s": [1, 1, 1]},
             {"name": contract, "games_per_s": [15.0, 25.0, 30.0],
              "steps_per_s": [1, 1, 1]}]}]}
    text = games.peer_markdown(r)
    assert f"{contract} ÷ {peer}, in each round: 1.50 / 2.50 / 3.00 (goal ≥ 2x: met)" in text
    r["comparisons"][0]["engines"][2]["games_per_s"] = [15.0, 15.0, 30.0]
    assert "(goal ≥ 2x: NOT met)" in games.peer_markdown(r)
    # Steps a game, from each round's steps and games per second: 60 / 15 and 30 / 10.
    r["comparisons"][0]["engines"][2]["steps_per_s"] = [900.0, 900.0, 1800.0]
    r["comparisons"][0]["engines"][1]["steps_per_s"] = [300.0, 300.0, 300.0]
    assert "steps a game (median): 60 through GameState, 30 in the peer" in \
        games.peer_markdown(r)


def test_the_flip_attack_turn_is_judged_on_the_median_of_its_rounds(games: ModuleType) -> None:
    r = {"command": "c", "date": "d", "python": "3", "machine": "m", "cores": 2,
         "load_1min": 0.5, "versions": {}, "rounds": 3, "seconds": 1, "slices": 1,
         "solver": [], "comparisons": [], "flip_attack_per_turn": [1.2, 1.4, 1.9]}
    line = f"Per turn, {games.FLIP_ATTACK} (4 players) takes 1.20 / 1.40 / 1.90x a 4-player"
    assert line in games.peer_markdown(r) and "(goal ≤ 1.5x: met)" in games.peer_markdown(r)
    r["flip_attack_per_turn"] = [1.2, 1.6, 1.7]
    assert "(goal ≤ 1.5x: NOT met)" in games.peer_markdown(r)


def test_alternate_gives_each_runner_its_budget_in_slices(games: ModuleType) -> None:
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


def test_the_report_names_each_engine_and_the_skipped_peers(games: ModuleType,
                                                            no_peers: None) -> None:
    r = games.peer_results(1, 0.0, 1, command="python -m bench.games --peers 1")
    report = games.peer_markdown(json.loads(json.dumps(r)))  # as kept, then read back
    assert report.startswith("`python -m bench.games --peers 1` on ")
    for name in (games.OURS_UNO, games.OURS_GIN):
        assert f"| {name} | " in report
    assert f"| {games.OPENSPIEL_GIN} | skipped: open-spiel not importable" in report
    assert "deadwood, 10 cards: " in report
    assert len(r["flip_attack_per_turn"]) == 1 and r["flip_attack_per_turn"][0] > 0
    assert f"Per turn, {games.FLIP_ATTACK} (4 players) takes " in report
    assert len(r["flip_attack_per_turn_contract"]) == 1
    assert "Through the contract, as `launcher simulate` plays them" in report


def test_the_ratio_is_taken_within_each_round_and_judged_on_its_median(games: ModuleType) -> None:
    ours, peer = games.OURS_UNO, games.RLCARD_UNO
    r = {"command": "c", "date": "d", "python": "3", "machine": "m", "cores": 2,
         "load_1min": 0.5, "versions": {"RLCard": "1"}, "rounds": 3, "seconds": 1,
         "slices": 1, "solver": [],
         "comparisons": [{"title": "t", "unit": "games", "engines": [
             {"name": ours, "games_per_s": [30.0, 10.0, 40.0], "steps_per_s": [1, 1, 1]},
             {"name": peer, "games_per_s": [10.0, 10.0, 10.0], "steps_per_s": [1, 1, 1]}]}]}
    row = next(line for line in games.peer_markdown(r).splitlines()
               if line.startswith(f"| {peer} |"))
    # Round ratios 3, 1, 4: median 3.00, the goal (3x) met; a ratio of medians would be 3 too,
    # but min / max show the rounds: 1.00 / 3.00 / 4.00.
    assert "| 1.00 / 3.00 / 4.00 | ≥ 3x: met |" in row


def test_the_docs_render_the_kept_peer_run(games: ModuleType) -> None:
    kept = json.loads((REPO / "docs" / "results" / "peers.json").read_text())
    text = (REPO / "docs" / "games.md").read_text()
    block = "<!-- generated by: python docs/blocks.py --print peers -->\n"
    assert text.count(block) == 1 and block + games.peer_markdown(kept) in text
    assert kept["command"].startswith("python -m bench.games --peers ")
    assert kept["command"].endswith(" --out docs/results/peers.json")
    names = {e["name"] for c in kept["comparisons"] for e in c["engines"] if "skipped" not in e}
    assert {games.OURS_UNO, games.RLCARD_UNO, games.OURS_GIN, games.OPENSPIEL_GIN} <= names
