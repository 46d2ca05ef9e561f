"""Gin Rummy on the game-state contract (``base.GameState``).

A ``GinGameState`` is one whole game (or Hollywood session): hands are dealt and played
until the ``Scoreboard`` closes every game (or ``rules.max_hands``). Its engine is
``GinHand``: the legal actions are ``GinHand.legal_actions``, an action is
``GinHand.apply``. The stock is in the launcher (the ``gin`` profile: one card a press), so
``DRAW_STOCK`` leads to a chance node, the launcher's shot, whose one outcome is one card;
the stock's order is fixed by the seed (the shuffle before each deal), so the deal is not a
chance node. A knock that may be laid out more than one way is followed by the knocker's
choice of layout (``LAYOUT + i``: the ``i``-th of ``GinHand.layouts``), as at the table,
where the knocker's bot arranges its melds.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from launcher.games.base import CHANCE, TERMINAL, GameState, SeatView
from launcher.games.draws import shuffle_as_random
from launcher.games.gin.bots import GinBot
from launcher.games.gin.cards import DECK_SIZE, cards_of, name
from launcher.games.gin.rules import (
    DRAW_STOCK,
    KNOCK,
    NUM_ACTIONS,
    GinHand,
    GinRules,
    HandResult,
    deal_order,
    describe,
    next_dealer,
)
from launcher.games.gin.scoring import Scoreboard

LAYOUT = NUM_ACTIONS  # ``LAYOUT + i``: lay out the ``i``-th of a knock's layouts


class GinGameState(GameState):
    """A whole game of Gin Rummy for two; see the module docstring."""

    def __init__(self, rules: GinRules, seed: int, first_dealer: int = 0) -> None:
        self.rules = rules
        self.rng = random.Random(seed)
        self.history = []
        self.board = Scoreboard(rules)
        self.results: list[HandResult] = []
        self.dealer = self.first_dealer = first_dealer
        self.drawing = False  # DRAW_STOCK chosen: the launcher is to shoot the card
        self.over = False
        self.stack: list[int] = []
        self.knocking = -1  # a knock's discard, while its layout is to be chosen
        self.layouts: list[tuple[int, tuple[int, ...]]] = []  # that knock's layouts
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
        if self.knocking >= 0:
            return list(range(LAYOUT, LAYOUT + len(self.layouts)))
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
        if self.knocking >= 0:
            melds = self.layouts[action - LAYOUT][1]
            action, self.knocking, self.layouts = KNOCK + self.knocking, -1, []
            result = hand.apply(action, melds=melds)
        elif KNOCK <= action < KNOCK + DECK_SIZE and self._choose_layout(action - KNOCK):
            return
        else:
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

    def _choose_layout(self, discard: int) -> bool:
        """Whether a knock with ``discard`` waits for the knocker's layout: one that may
        be laid out more than one way, and is not gin (gin lays out every card)."""
        layouts = self.hand.layouts(discard)
        if len(layouts) < 2 or layouts[0][0] == 0:
            return False
        self.knocking, self.layouts = discard, layouts
        return True

    def engine_layout(self) -> int:
        """While a layout is chosen: the one the rules lay out for a knocker who leaves it
        to them (``GinRules.knocker_layout``), as an action."""
        hand = self.hand
        p = hand.player
        kept = hand.hands[p] & ~(1 << self.knocking)
        melds = set(hand.layout(kept, hand.hands[1 - p])[0])
        return LAYOUT + next(i for i, (_, m) in enumerate(self.layouts) if set(m) == melds)

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
        if self.knocking >= 0:
            dw, melds = self.layouts[action - LAYOUT]
            return (f"knock {name(self.knocking)}, lay out "
                    + " ".join("-".join(map(name, cards_of(m))) for m in melds)
                    + f" ({dw} deadwood)")
        return describe(action)

    def places(self) -> tuple[list[Sequence[int]], int, int]:
        g = self.hand
        return ([list(cards_of(g.hands[0])), list(cards_of(g.hands[1])), list(g.pile),
                 self.stack], DECK_SIZE, g.stock_left)

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
        if self.knocking >= 0:
            lines.append(f"seat {hand.player} knocks with {name(self.knocking)}: "
                         "how to lay out")
        return SeatView(seat, tuple(map(name, cards_of(v.hand))), tuple(lines))


class GinPlayer:
    """One of this package's bots (``gin.bots``) at a contract's seat: it chooses from its
    view, which carries the engine's legal actions (``GinHand.view``)."""

    def __init__(self, bot: GinBot) -> None:
        self.bot = bot

    def act(self, state: GameState) -> int:
        assert isinstance(state, GinGameState)
        hand = state.hand
        view = hand.view(hand.player)
        if state.knocking < 0:
            return self.bot.choose(view)
        melds = self.bot.arrange(view, state.knocking)  # as the table asks it after a knock
        if melds is None:
            return state.engine_layout()
        chosen = set(melds)
        return LAYOUT + next(i for i, (_, m) in enumerate(state.layouts) if set(m) == chosen)
