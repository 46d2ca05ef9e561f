"""The game-state contract (``base.GameState``), over every registered game."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.games.base import CHANCE, TERMINAL, GameState, RuleViolation, sample_chance
from launcher.games.registry import GAMES

NAMES = sorted(GAMES)


def test_every_game_is_on_the_contract() -> None:
    assert NAMES == ["flip-attack", "gin", "uno", "uno-flip", "uno-splash"]


def fingerprint(state: GameState) -> tuple[object, ...]:
    """Everything the contract shows of a state."""
    n = state.num_players()
    who = state.current_player()
    return (who, state.legal_actions(), state.chance_outcomes(), state.returns(),
            [str(state.view(s)) for s in range(n)], list(state.history),
            [state.action_to_string(a) for a in state.legal_actions()])


def allowed(state: GameState) -> list[int]:
    """What may be applied now: the chance outcomes, or the seat's legal actions."""
    if state.is_chance_node():
        return [a for a, _ in state.chance_outcomes()]
    return state.legal_actions()


def step(state: GameState, rng: random.Random) -> int:
    """One random legal action, or one chance outcome drawn with its probability."""
    if state.is_chance_node():
        return sample_chance(state, rng)
    return rng.choice(state.legal_actions())


def play_out(state: GameState, rng: random.Random, limit: int = 200_000) -> int:
    steps = 0
    while not state.is_terminal():
        state.apply_action(step(state, rng))
        steps += 1
        assert steps < limit, "the game did not end"
    return steps


@pytest.mark.parametrize("name", NAMES)
def test_a_game_plays_to_the_end_through_the_contract(name: str) -> None:
    state = GAMES[name].new_game(seed=3)
    rng = random.Random(3)
    chances = decisions = 0
    while not state.is_terminal():
        who = state.current_player()
        if who == CHANCE:
            outcomes = state.chance_outcomes()
            assert outcomes and abs(sum(p for _, p in outcomes) - 1.0) < 1e-9
            assert all(p > 0 for _, p in outcomes)
            assert state.legal_actions() == []
            chances += 1
        else:
            assert 0 <= who < state.num_players()
            legal = state.legal_actions()
            assert legal and all(isinstance(a, int) for a in legal)
            assert len(set(legal)) == len(legal)
            assert state.chance_outcomes() == []
            decisions += 1
        state.apply_action(step(state, rng))
    assert state.current_player() == TERMINAL
    assert state.legal_actions() == [] and state.chance_outcomes() == []
    assert chances and decisions
    returns = state.returns()
    assert len(returns) == state.num_players() and any(returns)
    with pytest.raises(RuleViolation, match="over"):
        state.apply_action(0)


@pytest.mark.parametrize("name", NAMES)
def test_an_illegal_action_is_refused_and_changes_nothing(name: str) -> None:
    state = GAMES[name].new_game(seed=5)
    rng = random.Random(5)
    refused = 0
    for _ in range(400):
        if state.is_terminal():
            break
        now = allowed(state)
        before = fingerprint(state)
        for bad in (max(now) + 1, min(now) - 7, 10**6):
            if bad in now:
                continue
            with pytest.raises(RuleViolation, match="not a legal"):
                state.apply_action(bad)
            refused += 1
            assert fingerprint(state) == before
        state.apply_action(step(state, rng))
    assert refused > 400


@pytest.mark.parametrize("name", NAMES)
def test_a_clone_is_independent(name: str) -> None:
    state = GAMES[name].new_game(seed=7)
    rng = random.Random(7)
    for _ in range(150):
        state.apply_action(step(state, rng))
    twin = state.clone()
    before = fingerprint(state)
    assert fingerprint(twin) == before
    play_out(twin, random.Random(1))
    assert twin.is_terminal()
    assert fingerprint(state) == before  # the original did not move
    # ... and the original plays on as if the clone had never been made
    rest = random.Random(2)
    again = state.clone()
    play_out(state, rest)
    for action in state.history[len(again.history):]:
        again.apply_action(action)
    assert fingerprint(again) == fingerprint(state)


def replay(name: str, seed: int, history: list[int]) -> GameState:
    state = GAMES[name].new_game(seed=seed)
    for action in history:
        state.apply_action(action)
    return state


@pytest.mark.parametrize("name", NAMES)
def test_one_seed_and_one_action_list_give_one_game(name: str) -> None:
    state = GAMES[name].new_game(seed=11)
    play_out(state, random.Random(11))
    again = replay(name, 11, state.history)
    assert again.is_terminal() and fingerprint(again) == fingerprint(state)
    other = GAMES[name].new_game(seed=12)
    assert [str(other.view(s)) for s in range(other.num_players())] != \
        [str(GAMES[name].new_game(seed=11).view(s)) for s in range(other.num_players())]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), picks=st.lists(st.integers(0, 10**6), max_size=300))
def test_any_choices_replay(name: str, seed: int, picks: list[int]) -> None:
    """Whatever legal actions are picked, the history alone replays the position."""
    state = GAMES[name].new_game(seed=seed)
    rng = random.Random(seed)
    for pick in picks:
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[pick % len(legal)])
    assert fingerprint(replay(name, seed, state.history)) == fingerprint(state)


@pytest.mark.parametrize("name", NAMES)
def test_every_action_has_words(name: str) -> None:
    state = GAMES[name].new_game(seed=13)
    rng = random.Random(13)
    for _ in range(300):
        if state.is_terminal():
            break
        words = [state.action_to_string(a) for a in allowed(state)]
        # (two copies of one card read the same: they are two actions all the same)
        assert all(words) and not any(w.startswith("action ") for w in words), words
        state.apply_action(step(state, rng))


def test_the_launcher_is_the_chance_player_with_its_luck() -> None:
    """Flip Attack's presses: outcomes from the luck model, a dry press among them."""
    state = GAMES["flip-attack"].new_game(seed=1)
    rng = random.Random(1)
    seen = set()
    for _ in range(3000):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes = dict(state.chance_outcomes())
            seen.update(outcomes)
        state.apply_action(step(state, rng))
    assert 0 in seen and max(seen) >= 3


def _places(state: GameState) -> tuple[list[list[int]], int, int]:
    """Where each card is (hands, pile, launcher), the deck's size, the rules' launcher
    count: read from each game's own engine, for the conservation check."""
    from launcher.games.flip_attack.contract import FlipAttackGameState
    from launcher.games.gin.cards import cards_of
    from launcher.games.gin.contract import GinGameState
    from launcher.games.uno.contract import UnoGameState

    if isinstance(state, UnoGameState):
        h = state.hand
        return [*h.hands, h.discard, state.stack], state.rules.size, h.pile
    if isinstance(state, GinGameState):
        g = state.hand
        return ([list(cards_of(g.hands[0])), list(cards_of(g.hands[1])), list(g.pile),
                 state.stack], 52, g.stock_left)
    assert isinstance(state, FlipAttackGameState)
    w = state.w
    return [*w.hands, w.discard, w.held(), state.stack], len(state.deck), w.launcher_count


@pytest.mark.parametrize("name", NAMES)
def test_every_card_is_in_one_place_after_every_step(name: str) -> None:
    state = GAMES[name].new_game(seed=17)
    rng = random.Random(17)
    for _ in range(3000):
        if state.is_terminal():
            break
        places, size, count = _places(state)
        cards = sorted(c for place in places for c in place)
        assert cards == list(range(size))
        assert len(places[-1]) == count  # the launcher holds what the rules count
        state.apply_action(step(state, rng))


def test_the_docs_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "games.md").read_text()
    section = text.split("## One game-state contract for every game", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/games.md", "exec"), {})
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("[") and len(printed.strip("[]").split(",")) == 3
