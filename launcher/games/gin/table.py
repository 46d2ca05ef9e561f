"""The Gin Rummy shell: shuffle, deal, stock into a dealer, ask the bots, check every card.

``GinTable`` is the imperative part around the pure ``GinHand``: the only randomness is the
``random.Random`` it is given (the shuffle; bots hold their own), the stock lives in a
``StockDealer`` (``launcher.games.dealers``) and each draw from it is one ``dispense()``.
After every step it checks that the dealer holds as many cards as the rules think; at the
end of every hand, that hands, pile and stock are the 52 cards, each once.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from launcher.games.base import HandsTable, check_places
from launcher.games.dealers import DirectDealer, StockDealer
from launcher.games.draws import shuffle_as_random
from launcher.games.gin.bots import GinBot
from launcher.games.gin.cards import DECK_SIZE, cards_of
from launcher.games.gin.rules import (
    DRAW_STOCK,
    KNOCK,
    GinHand,
    GinRules,
    HandResult,
    RuleViolation,
    deal_order,
    next_dealer,
)
from launcher.games.gin.scoring import Scoreboard

Observer = Callable[[GinHand, int, int], None]  # (hand after the action, player, action)


@dataclass(frozen=True)
class GameRecord:
    """A finished game (or Hollywood session): its hands and its scoreboard."""

    hands: tuple[HandResult, ...]
    board: Scoreboard
    first_dealer: int

    @property
    def winners(self) -> list[int | None]:
        """The winner of each game (one, or three for Hollywood)."""
        return [g.winner for g in self.board.games]


class GinTable(HandsTable[HandResult]):
    """Plays hands and games of two bots with a stock dealer (direct by default)."""

    def __init__(self, rules: GinRules, bots: Sequence[GinBot], rng: random.Random,
                 dealer: StockDealer[int] | None = None,
                 observers: Sequence[Observer] = ()) -> None:
        if len(bots) != 2:
            raise ValueError(f"gin rummy is for two players, not {len(bots)}")
        self.rules = rules
        self.bots = list(bots)
        self.rng = rng
        self.dealer: StockDealer[int] = dealer if dealer is not None else DirectDealer()
        self.observers = list(observers)
        self.checks = 0
        self.board = Scoreboard(rules)  # the game under way's (``play_game`` starts one)

    def deal(self, dealer_seat: int) -> GinHand:
        """Gather the stock back, shuffle, deal, turn the upcard and load the stock."""
        self.dealer.unload()  # the cards come back with the rest before the shuffle
        deck = list(range(DECK_SIZE))
        shuffle_as_random(deck, self.rng)
        mine, theirs, upcard, stock = deal_order(deck, self.rules.hand_size)
        self.dealer.load(stock)
        return GinHand(self.rules, dealer_seat, mine, theirs, upcard, len(stock))

    def play_hand(self, dealer_seat: int = 0, hand: GinHand | None = None) -> HandResult:
        """Deal (unless ``hand`` is a dealt one whose stock is loaded) and play to the end."""
        if hand is None:
            hand = self.deal(dealer_seat)
        bots, dealer, observers = self.bots, self.dealer, self.observers
        while hand.result is None:
            p = hand.player
            view = hand.view(p)
            action = bots[p].choose(view)
            if KNOCK <= action < KNOCK + DECK_SIZE and hand.is_legal(action):
                hand.apply(action, melds=bots[p].arrange(view, action - KNOCK))
            elif action == DRAW_STOCK:
                hand.apply(action, dealer.dispense())
                if dealer.cards_left != hand.stock_left:
                    raise RuleViolation(f"the dealer holds {dealer.cards_left} cards, the rules "
                                        f"count {hand.stock_left}")
            else:
                hand.apply(action)
            for obs in observers:
                obs(hand, p, action)
        self._check_cards(hand)
        return hand.result

    def _check_cards(self, hand: GinHand) -> None:
        """Hands, pile and the dealer's stock are the 52 cards, each exactly once."""
        self.checks += 1
        stock = self.dealer.unload()
        check_places([cards_of(hand.hands[0]), cards_of(hand.hands[1]), hand.pile, stock],
                     DECK_SIZE, hand.stock_left)

    def play_game(self, first_dealer: int = 0) -> GameRecord:
        """Hands until every game is over (or ``rules.max_hands``)."""
        self.board = Scoreboard(self.rules)
        result = self.hands_until_decided(first_dealer, self.rules.max_hands)
        return GameRecord(tuple(result.hands), self.board, first_dealer)

    def book(self, scores: list[int], hand: HandResult) -> tuple[bool, int | None]:
        """Into the game's scoreboard (the winners are the board's: one game, or three)."""
        self.board.record(hand)
        return self.board.over, None

    def next_dealer(self, dealer: int, hand: HandResult) -> int:
        return next_dealer(self.rules, dealer, hand)
