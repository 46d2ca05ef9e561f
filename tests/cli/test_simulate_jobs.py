"""``launcher simulate --jobs N``: every game has its own seed, so N never changes a summary."""

from __future__ import annotations

import pytest

from launcher.cli.main import main
from launcher.cli.simulate import chunks_of
from launcher.games.base import game_seed


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["simulate", "--no-progress", *argv]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("game", ["flip-attack", "uno-flip", "gin"])
def test_the_summary_is_the_same_for_any_number_of_jobs(
        capsys: pytest.CaptureFixture[str], game: str) -> None:
    argv = ("--game", game, "--games", "7", "--seed", "11")
    one = run(capsys, *argv, "--jobs", "1")
    assert "7 games" in one.replace(",", "")  # the report is about the games asked for
    assert run(capsys, *argv, "--jobs", "2") == one
    assert run(capsys, *argv, "--jobs", "3") == one
    assert run(capsys, "--game", game, "--games", "7", "--seed", "12", "--jobs", "2") != one


def test_through_the_firmware_too(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("--games", "3", "--seed", "5", "--through-firmware")
    assert run(capsys, *argv, "--jobs", "2") == run(capsys, *argv, "--jobs", "1")


def test_game_seeds_depend_on_the_run_seed_and_the_index_only() -> None:
    seeds = {game_seed(s, i) for s in range(20) for i in range(50)}
    assert len(seeds) == 1000
    assert game_seed(3, 4) == game_seed(3, 4)


def test_chunks_cover_every_game_once_in_order() -> None:
    for games in (1, 2, 7, 100, 1001):
        for jobs in (1, 2, 8):
            chunks = chunks_of(games, jobs)
            flat = [g for a, b in chunks for g in range(a, b)]
            assert flat == list(range(games))


def test_jobs_must_be_a_whole_number_above_zero(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--jobs", "0"])
    assert exc.value.code == 2
    assert "--jobs: must be at least 1" in capsys.readouterr().err
