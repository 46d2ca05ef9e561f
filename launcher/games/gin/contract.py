"""Gin Rummy on the game-state contract (``base.GameState``).

A ``GinGameState`` is one whole game (or Hollywood session): hands are dealt and played
until the ``Scoreboard`` closes every game (or ``rules.max_hands``). Its engine is
``GinHand``: the legal actions are ``GinHand.legal_actions``, an action is
``GinHand.apply``. The stock is in the launcher (the ``gin`` profile: one card a press), so
``DRAW_STOCK`` leads to a chance node, the launcher's shot, whose one outcome is one card;
the stock's order is fixed by the seed (the shuffle before each deal), so the deal is not a
chance node.
"""

from __future__ import annotations

import random

from launcher.games.base import CHANCE, TERMINAL, GameState, SeatView
from launcher.games.draws import shuffle_as_random
from launcher.games.gin.bots import GinBot
from launcher.games.gin.cards import DECK_SIZE, cards_of, name
from launcher.games.gin.rules import (
    DRAW_STOCK,
    GinHand,
    GinRules,
    HandResult,
    deal_order,
    describe,
    next_dealer,
)
from launcher.games.gin.scoring import Scoreboard


class GinGameState(GameState):
    """A whole game of Gin Rummy for two; see the module docstring."""

    def __init__(self, rules: GinRules, seed: int, first_dealer: int = 0) -> None:
        self.rules = rules
        self.rng = random.Random(seed)
        self.history = []
        self.board = Scoreboard(rules)
        self.results: list[HandResult] = []
        self.dealer = first_dealer
        self.drawing = False  # DRAW_STOCK chosen: the launcher is to shoot the card
        self.over = False
        self.stack: list[int] = []
        self.hand = self._deal()

    def _deal(self) -> GinHand:
        deck = list(range(DECK_SIZE))
        shuffle_as_random(deck, self.rng)
        mine, theirs, upcard, stock = deal_order(deck, self.rules.hand_size)
        self.stack = stock[::-1]  # the next card to shoot last
        return GinHand(self.rules, self.dealer, mine, theirs, upcard, len(stock))

    def num_players(self) -> int:
        return 2

    def current_player(self) -> int:
        if self.over:
            return TERMINAL
        return CHANCE if self.drawing else self.hand.player

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(1, 1.0)] if self.drawing and not self.over else []

    def legal_actions(self) -> list[int]:
        if self.current_player() < 0:
            return []
        return self.hand.legal_actions()

    def _apply(self, action: int) -> None:
        hand = self.hand
        if self.drawing:
            self.drawing = False
            hand.apply(DRAW_STOCK, self.stack.pop())
            return
        if action == DRAW_STOCK:
            self.drawing = True
            return
        result = hand.apply(action)
        if result is None:
            return
        self.results.append(result)
        self.board.record(result)
        if self.board.over or len(self.results) >= self.rules.max_hands:
            self.over = True
            return
        self.dealer = next_dealer(self.rules, self.dealer, result)
        self.hand = self._deal()

    def returns(self) -> list[float]:
        """Each player's points over the games of the session: a closed game's totals
        (bonuses included), an open one's running points."""
        out = [0.0, 0.0]
        for g in self.board.games:
            points = g.totals if g.totals is not None else g.points
            out[0] += points[0]
            out[1] += points[1]
        return out

    def clone(self) -> GinGameState:
        other = self._copy(results=list(self.results), hand=self.hand.copy())
        board = other.board = Scoreboard(self.rules)
        for result in self.results:  # the board again, from the same hands
            board.record(result)
        return other

    def action_to_string(self, action: int) -> str:
        if self.drawing:
            return f"the launcher shoots 1 card at seat {self.hand.player} (the stock's top)"
        return describe(action)

    def view(self, seat: int) -> SeatView:
        v = self.hand.view(seat)
        hand = self.hand
        lines = [f"Gin Rummy, hand {len(self.results) + 1}, {v.phase} phase, seat "
                 f"{hand.player} to move; points " + " ".join(
                     f"{p}:{int(r)}" for p, r in enumerate(self.returns())),
                 "discard pile top " + (name(v.top) if v.pile else "-")
                 + f", stock {v.stock_left}, knock at {v.limit} or less",
                 f"seat {1 - seat} took (still holds): "
                 + (" ".join(map(name, cards_of(v.opponent_known))) or "-"),
                 f"your deadwood: {hand.solver.deadwood(v.hand)}"]
        return SeatView(seat, tuple(map(name, cards_of(v.hand))), tuple(lines))


class GinPlayer:
    """One of this package's bots (``gin.bots``) at a contract's seat: it chooses from its
    view, which carries the engine's legal actions (``GinHand.view``)."""

    def __init__(self, bot: GinBot) -> None:
        self.bot = bot

    def act(self, state: GameState) -> int:
        assert isinstance(state, GinGameState)
        hand = state.hand
        return self.bot.choose(hand.view(hand.player))
