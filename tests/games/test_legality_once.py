"""Each game decides legality in one place. Flip Attack: ``rules.legal_moves`` (and, for
"UNO!" called, ``rules.may_call_uno``); the bots choose among the moves they are handed, the
table's ``to_move`` and the contract's ``legal_actions`` ask the same functions. The UNO
family: ``rules.legal`` (and ``rules.may_call_uno``), asked by the table's ``check_action``
and the contract alike."""

from __future__ import annotations

import random

import pytest

from launcher.core import config
from launcher.games.base import RuleViolation, sample_chance
from launcher.games.flip_attack.bots import HeuristicBot, RandomBot
from launcher.games.flip_attack.contract import FlipAttackGameState, decode, encode
from launcher.games.flip_attack.core import CATCH, LUCK, Move
from launcher.games.flip_attack.rules import as_action, legal_moves, to_move
from launcher.games.registry import GAMES

LUCK_SETTINGS = config.load().luck


def positions(seed: int, steps: int = 1500):
    """The player decisions of one random game through the contract."""
    state = GAMES["flip-attack"].new_game(seed=seed)
    assert isinstance(state, FlipAttackGameState)
    rng = random.Random(seed)
    for _ in range(steps):
        if state.is_terminal():
            return
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        yield state
        state.apply_action(rng.choice(state.legal_actions()))


def narrowed(w, moves: list[Move]) -> list[Move]:
    """Fewer moves than the rules allow, of the same kinds: the first (press, take the hit)
    and the last card's plays; at a catch or a luck run's choice, all of them."""
    if w.agenda[0].kind in (CATCH, LUCK) or len(moves) == 1:
        return moves
    last = moves[-1][1]
    return [moves[0], *(m for m in moves[1:] if m[1] == last)] if moves[0][1] < 0 else \
        [moves[-1]]


@pytest.mark.parametrize("make", [lambda rng: RandomBot(rng, forget_uno=0.0),
                                  lambda rng: HeuristicBot(rng, LUCK_SETTINGS)],
                         ids=["random", "heuristic"])
def test_a_bot_chooses_among_the_moves_it_is_handed(make) -> None:
    """Handed fewer moves than the rules allow, a bot still answers one of those: it works
    out no legality of its own (a bot that read the playable cards off the hand fails)."""
    bot = make(random.Random(1))
    narrower = 0
    for seed in range(4):
        for state in positions(seed):
            w = state.w
            player = w.agenda[0].player
            moves = legal_moves(w)
            handed = narrowed(w, moves)
            narrower += len(handed) < len(moves)
            move = bot.decide(w, player, handed)
            assert (*move[:4], False) in handed, (move, handed)
    assert narrower > 100


def test_the_table_takes_an_uno_call_where_the_contract_offers_one() -> None:
    """``to_move`` (the table's reading of an action) and ``legal_actions`` (the contract's)
    agree on every move, called and not: one decision of where "UNO!" may be called."""
    offered = refused = 0
    for state in positions(7):
        w = state.w
        legal = set(state.legal_actions())
        for move in legal_moves(w):
            called: Move = (*move[:4], True)  # type: ignore[assignment]
            action = as_action(w, called)
            if encode(called) in legal:
                assert to_move(w, action) == called
                offered += 1
            elif hasattr(action, "uno"):
                with pytest.raises(RuleViolation, match="may not"):
                    to_move(w, action)
                refused += 1
            assert decode(encode(move)) == move
    assert offered > 20 and refused > 200


@pytest.mark.parametrize("name", ["uno", "uno-flip"])
def test_the_uno_table_takes_a_call_where_the_contract_offers_one(name: str) -> None:
    """``check_action`` (the table's check of a bot's answer) and ``legal_actions`` (the
    contract's) agree on every card play, "UNO!" called and not."""
    from launcher.games.uno.game import CHOOSE, UNO
    from launcher.games.uno.rules import check_action

    state = GAMES[name].new_game(seed=4)
    rng = random.Random(4)
    offered = refused = 0
    for _ in range(4000):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng))
            continue
        hand, p = state.hand, state.current_player()
        options, legal = state.options(), set(state.legal_actions())
        for a in options:
            if not 0 <= a < CHOOSE:
                continue
            assert check_action(hand, p, a, options) == a and a in legal
            if a | UNO in legal:
                assert check_action(hand, p, a | UNO, options) == a | UNO
                offered += 1
            else:
                with pytest.raises(RuleViolation, match="may not"):
                    check_action(hand, p, a | UNO, options)
                refused += 1
        state.apply_action(rng.choice(state.legal_actions()))
    assert offered > 10 and refused > 100
