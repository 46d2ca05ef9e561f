"""``launcher play --game NAME``: a person's seat at every game, driven in line mode."""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys

import pytest

from launcher.cli import main
from launcher.cli.play_game import run_seat
from launcher.core import config
from launcher.core.errors import ConfigError
from launcher.games.registry import GAMES

SHORT = {"flip-attack": ["target_score=60"], "uno": ["target_score=60"],
         "uno-splash": ["target_score=60"], "uno-flip": ["target_score=60"],
         "gin": ["game_target=20"]}


def test_the_verb_offers_every_registered_game() -> None:
    assert sorted(main.GAME_NAMES) == sorted(GAMES)


def _play(name: str, lines: str, direct: bool = False, seed: int = 1) -> tuple[int, str]:
    out = io.StringIO()
    status = run_seat(name, None, 0, None, SHORT[name], seed, config.load(), direct,
                      io.StringIO(lines), out, scripted=True)
    return status, out.getvalue()


@pytest.mark.parametrize("name", sorted(GAMES))
def test_a_person_plays_a_whole_game_on_the_simulated_launcher(name: str) -> None:
    status, text = _play(name, "1\n" * 100_000)
    assert status == 0, text[-2000:]
    assert text.splitlines()[-1].startswith("game over: seat 0 ")
    chosen = re.findall(r"^seat 0> you: (.+)$", text, re.M)
    assert chosen, text[:2000]
    # the others' moves and the launcher's shots as they come, the seat's numbered actions
    assert re.search(r"^seat 1: \S", text, re.M)
    assert re.search(r"^the launcher shoots 1 card", text, re.M)
    assert re.search(r"^  1 \S", text, re.M) and "your hand (" in text
    # what was chosen is the first action offered, each time
    offered = re.findall(r"^  1 (.+)$", text, re.M)
    assert chosen == offered[:len(chosen)]


@pytest.mark.parametrize("name", sorted(GAMES))
def test_the_luck_model_can_shoot_instead(name: str) -> None:
    status, text = _play(name, "1\n" * 100_000, direct=True)
    assert status == 0 and "luck model" in text.splitlines()[0]
    assert text.splitlines()[-1].startswith("game over")


def test_a_wrong_line_is_an_error_and_the_seat_asks_again() -> None:
    status, text = _play("uno", "9999\nred\n1\nq\n")
    assert text.count("error choose a number from 1 to") == 2
    assert "seat 0> you: " in text and text.rstrip().endswith("ok bye")
    assert status == 1  # a script whose line was refused


def test_the_end_of_the_input_stops_the_game_quietly() -> None:
    status, text = _play("gin", "1\n")
    assert status == 0 and "game over" not in text


def test_one_seed_one_game() -> None:
    assert _play("flip-attack", "1\n" * 50 + "q\n") == _play("flip-attack", "1\n" * 50 + "q\n")
    assert _play("flip-attack", "q\n", seed=1)[1] != _play("flip-attack", "q\n", seed=2)[1]


def test_a_bad_seat_names_the_option() -> None:
    with pytest.raises(ConfigError, match="--seat"):
        run_seat("uno", 3, 3, None, [], 1, config.load(), True, io.StringIO(""),
                 io.StringIO(), scripted=True)
    with pytest.raises(ConfigError, match="--players"):
        run_seat("gin", 3, 0, None, [], 1, config.load(), True, io.StringIO(""),
                 io.StringIO(), scripted=True)


def test_help_tells_of_the_seat() -> None:
    text = subprocess.run([sys.executable, "-m", "launcher.cli.main", "play", "--help"],
                          capture_output=True, text=True, check=True).stdout
    assert "--game" in text and "--seat" in text and "--direct" in text
    for name in GAMES:
        assert name in text


def test_the_command_line_plays_a_game_from_a_script() -> None:
    done = subprocess.run([sys.executable, "-m", "launcher.cli.main", "play", "--game", "gin",
                           "--rule", "game_target=20", "--seed", "3"],
                          input="1\n" * 20000, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("game over: seat 0 ")


def _firmware_chance(name: str) -> tuple[object, object]:
    from launcher.games.launchers import LauncherChance
    from launcher.sim.games import FirmwareLauncher

    spec = GAMES[name]
    state = spec.new_game(seed=2)
    chance = LauncherChance(FirmwareLauncher(seed=2, sides=spec.sides), spec.profile,
                            spec.sides)
    rng = random.Random(2)
    players = [spec.player("random", rng, config.load())
               for _ in range(state.num_players())]
    while not state.is_chance_node():
        state.apply_action(players[state.current_player()].act(state))
    return state, chance


@pytest.mark.parametrize("name", ["uno", "flip-attack"])
def test_the_firmware_answers_a_shot_with_the_cards_that_crossed_the_beam(name: str) -> None:
    state, chance = _firmware_chance(name)
    try:
        want = state.stack[::-1]
        n = chance.answer(state)
        cards = chance.shot
        assert cards == want[:n] and n in dict(state.chance_outcomes())
    finally:
        chance.launcher.close()


def test_a_shot_the_game_does_not_know_is_a_launcher_fault() -> None:
    from launcher.games.base import LauncherFault

    state, chance = _firmware_chance("uno")
    try:
        launcher = chance.launcher
        real = launcher.press
        launcher.press = lambda: [*real()[::-1], state.stack[0]]  # another card with it
        with pytest.raises(LauncherFault, match="not one of the game's outcomes"):
            chance.answer(state)
    finally:
        chance.launcher.close()
