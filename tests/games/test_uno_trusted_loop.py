"""The trusted loop (``uno.rules._play_trusted``: this package's bots, nothing checking or
listening) plays the very games the checked loop plays, under any options, any number of
players and any mix of bots (hypothesis). The loop fuses ``legal``, ``apply`` and ``shot``
for the common steps, so a rule changed in one place and not the other shows here."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from launcher.games.launchers import DirectDealer
from launcher.games.uno.bots import make_uno_bot
from launcher.games.uno.flip import UNO_FLIP_GAME
from launcher.games.uno.rules import CLASSIC_UNO, UnoTable
from launcher.games.uno.splash import UNO_SPLASH

GAMES = (CLASSIC_UNO, UNO_SPLASH, UNO_FLIP_GAME)
BOTS = ("heuristic", "random", "random-play")
CHOICES: dict[str, tuple[Any, ...]] = {
    "hand_size": (1, 2, 7),
    "uno_penalty": (2, 4),
    "first_reverse": ("right_of_dealer", "dealer"),
    "wild_draw": ("challenge", "strict"),
    "blank_cards": ("remove", "wild", "swap_hands", "shuffle_hands"),
    "reshuffle_keep_top": (True, False),
    "last_card_draws": (True, False),
    "scoring": ("winner", "penalty"),
    "single_round": (True, False),
    "last_flip": ("flip", "no_flip"),
    "target_score": (50, 500),
    "max_turns": (40, 3000),
}


@st.composite
def setups(draw: st.DrawFn) -> tuple[Any, dict[str, Any], list[str], int]:
    game = draw(st.sampled_from(GAMES))
    changes = {name: draw(st.sampled_from(values)) for name, values in CHOICES.items()
               if name not in game.not_options and draw(st.booleans())}
    bots = draw(st.lists(st.sampled_from(BOTS), min_size=2, max_size=6))
    return game, changes, bots, draw(st.integers(0, 2**16))


def _games(game: Any, changes: dict[str, Any], bots: list[str], seed: int,
           check: bool) -> list[Any]:
    sides = game.sides if len(game.sides) == 2 else game.sides * 2
    table = UnoTable(game.rules(game.options(**changes)), DirectDealer(game.profile, sides),
                     [make_uno_bot(b, random.Random(seed + i)) for i, b in enumerate(bots)],
                     random.Random(seed), check=check)
    return [table.play_game(first_dealer=g % len(bots)) for g in range(2)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(setups())
def test_the_trusted_loop_plays_the_checked_loop_s_games(setup) -> None:
    game, changes, bots, seed = setup
    fast = _games(game, changes, bots, seed, check=False)
    assert fast == _games(game, changes, bots, seed, check=True)
    assert all(r.hands for r in fast)
