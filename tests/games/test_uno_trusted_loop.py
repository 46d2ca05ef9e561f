"""The table's trusted loop (this package's bots, nothing checking or listening) plays the
very games the checked loop plays, under any options, any number of players and any mix of
bots (hypothesis); both, the step-at-a-time functions and the contract take the engine's
same two steps."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from launcher.games.base import sample_chance
from launcher.games.launchers import DirectDealer
from launcher.games.registry import GAMES as REGISTRY
from launcher.games.uno import rules as uno
from launcher.games.uno.bots import make_uno_bot
from launcher.games.uno.flip import UNO_FLIP_GAME
from launcher.games.uno.game import CLASSIC_UNO, DRAW_CARD
from launcher.games.uno.rules import act, deal, legal, shot
from launcher.games.uno.splash import UNO_SPLASH
from launcher.games.uno.table import UnoTable

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


def test_every_way_of_playing_takes_the_same_steps(monkeypatch) -> None:
    """The trusted loop, the checked loop, ``act``/``shot`` and the game-state contract all
    play a hand with the engine's two steps (a decision, a draw): no second copy of a rule to
    drift (an engine with a fused fast path of its own would not call them from the trusted
    table), and the contract takes one step an action, never replaying the hand to find out
    what is legal."""
    steps: list[str] = []
    decide, draw = uno._decide, uno._draw

    def counted_decide(state, action, rng):
        steps.append("decide")
        return decide(state, action, rng)

    def counted_draw(state, cards, rng):
        steps.append("draw")
        return draw(state, cards, rng)

    monkeypatch.setattr(uno, "_decide", counted_decide)
    monkeypatch.setattr(uno, "_draw", counted_draw)
    for check in (False, True):
        steps.clear()
        results = _games(CLASSIC_UNO, {}, ["heuristic", "random"], 3, check)
        turns = sum(h.turns for r in results for h in r.hands)
        draws = sum(h.draws for r in results for h in r.hands)
        assert steps.count("draw") >= draws > 0 and steps.count("decide") >= turns > 0, check
    steps.clear()
    state = deal(CLASSIC_UNO.rules(), 2, 0, random.Random(1))
    (_, pile, _), = state.todo  # the draw pile, to load into the launcher, front first
    assert legal(state)[-1] == DRAW_CARD and steps == []  # asking what is legal steps nothing
    act(state, DRAW_CARD, random.Random(1))
    shot(state, pile[:1], random.Random(1))
    assert steps == ["decide", "draw"]
    steps.clear()
    game = REGISTRY["uno"].new_game(players=2, seed=5)
    rng = random.Random(5)
    while not game.is_terminal():
        if game.is_chance_node():
            game.apply_action(sample_chance(game, rng))
        else:
            actions = game.legal_actions()
            game.apply_action(actions[rng.randrange(len(actions))])
    assert len(steps) == len(game.history) > 100  # one engine step an action
