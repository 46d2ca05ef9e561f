"""Exact Gin Rummy positions for the rule tests: named hands, a chosen upcard and stock order."""

from __future__ import annotations

from launcher.games.dealers import DirectDealer
from launcher.games.gin.cards import DECK_SIZE, cards_of, parse_card, parse_hand, show
from launcher.games.gin.rules import DRAW_STOCK, GinHand, GinRules, HandResult


def position(non_dealer: str, dealer: str, upcard: str, stock_first: str = "",
             rules: GinRules | None = None, dealer_seat: int = 0
             ) -> tuple[GinHand, DirectDealer[int]]:
    """A freshly dealt hand: ``stock_first`` are the first stock cards, in draw order, and the
    rest of the deck follows in card order."""
    rules = rules or GinRules()
    nd, d = parse_hand(non_dealer), parse_hand(dealer)
    up = parse_card(upcard)
    first = [parse_card(c) for c in stock_first.split()]
    used = nd | d | 1 << up
    twice = (nd & d) | ((nd | d) & 1 << up) | (used & sum(1 << c for c in first))
    assert not twice, f"placed twice: {show(twice)}"
    stock = first + [c for c in range(DECK_SIZE) if not used >> c & 1 and c not in first]
    dealer_ = DirectDealer[int]()
    dealer_.load(stock)
    hand = GinHand(rules, dealer_seat, list(cards_of(nd)), list(cards_of(d)), up, len(stock))
    return hand, dealer_


def draw(hand: GinHand, dealer: DirectDealer[int]) -> int:
    """The player to move draws from the stock; returns the card."""
    c = dealer.dispense()
    hand.apply(DRAW_STOCK, c)
    return c


def play(hand: GinHand, dealer: DirectDealer[int], *moves: int | str) -> HandResult | None:
    """Apply moves in turn: an int action, or ``"stock"`` for a draw from the dealer."""
    result = None
    for m in moves:
        if m == "stock":
            draw(hand, dealer)
        else:
            assert isinstance(m, int)
            result = hand.apply(m)
    return result
