"""Gin Rummy players: a random legal one and a heuristic that counts cards and plays safe."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from launcher.games.gin.cards import FULL_DECK, SUIT_BITS, VALUE, mask_of
from launcher.games.gin.rules import (
    BIG_GIN,
    DRAW_STOCK,
    DRAW_UPCARD,
    KNOCK,
    PASS,
    PlayerView,
)

_SPREAD = 1 | 1 << 13 | 1 << 26 | 1 << 39


class GinBot(Protocol):
    """A player: given what it may see (its legal actions included), pick one of them."""

    name: str

    def choose(self, view: PlayerView) -> int: ...


class RandomBot:
    """Uniform over the legal actions (each discard, each knock, big gin alike)."""

    name = "random"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choose(self, view: PlayerView) -> int:
        legal = view.legal
        return legal[int(self.rng.random() * len(legal))]


def _rank_neighbours(c: int, reach: int) -> int:
    """Cards of the same suit within ``reach`` ranks of ``c`` (aces low), ``c`` excluded."""
    s, r = divmod(c, 13)
    lo, hi = max(0, r - reach), min(12, r + reach)
    return (((1 << (hi - lo + 1)) - 1) << (s * 13 + lo)) & ~(1 << c)


def _same_rank(c: int) -> int:
    return (_SPREAD << (c % 13)) & ~(1 << c)


_NEAR = tuple(_rank_neighbours(c, 2) for c in range(52))
_ADJ = tuple(_rank_neighbours(c, 1) for c in range(52))
_RANKMATES = tuple(_same_rank(c) for c in range(52))


def outs(deadwood: int, unseen: int) -> int:
    """Unseen cards that would make a new meld with two cards of ``deadwood``.

    Two of a rank wait for the rank's other cards; two in sequence for either end; two a
    rank apart for the middle. Aces low only: a little pessimistic for Mahjong's Q-K-A.
    """
    a = deadwood & SUIT_BITS
    b = deadwood >> 13 & SUIT_BITS
    c = deadwood >> 26 & SUIT_BITS
    d = deadwood >> 39 & SUIT_BITS
    pairs = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d)
    want = pairs * _SPREAD
    for base in (0, 13, 26, 39):
        s = deadwood >> base & SUIT_BITS
        adj = s & (s >> 1)           # r and r+1 held: want r-1 and r+2
        gap = s & (s >> 2)           # r and r+2 held: want r+1
        w = (adj >> 1) | (adj << 2) | (gap << 1)
        want |= (w & SUIT_BITS) << base
    return (want & unseen).bit_count()


class HeuristicBot:
    """Knocks (or goes gin) as soon as it may, keeps live combinations, avoids feeding.

    - Draw: take the upcard when it ends up melded in the best hand it allows (or lets
      the bot knock at once); otherwise draw blind.
    - Discard: the least of ``deadwood - outs_weight * outs + danger_weight * danger``,
      where outs are the unseen cards that would pair a deadwood card into a new meld and
      danger is how useful the card looks to the opponent: cards it took from the pile
      that meld with it weigh ``known_weight``, unseen ones that could meld with it a
      little, and cards of that rank or run it threw away earlier take some back.
    - Knock: whenever a knock is legal, with the least deadwood (gin first, big gin first
      of all). The discard pile and the opponent's takes are its memory.
    """

    name = "heuristic"

    def __init__(self, rng: random.Random, outs_weight: float = 1.0,
                 danger_weight: float = 0.6, known_weight: float = 4.0,
                 avoid_feeding: bool = True) -> None:
        self.rng = rng
        self.outs_weight = outs_weight
        self.danger_weight = danger_weight if avoid_feeding else 0.0
        self.known_weight = known_weight

    # --- drawing ---------------------------------------------------------------------------

    def choose(self, view: PlayerView) -> int:
        legal = view.legal
        if len(legal) == 1:
            return legal[0]
        if DRAW_UPCARD in legal:
            if self._wants(view):
                return DRAW_UPCARD
            return PASS if PASS in legal else DRAW_STOCK
        return self._discard(view)

    def _wants(self, view: PlayerView) -> bool:
        solver = view.rules.solver
        top = view.top
        bit = 1 << top
        hand = view.hand | bit
        forbidden = 0 if view.rules.discard_taken else bit
        dw, c = solver.best_discard(hand, forbidden)
        if dw <= view.limit:
            return True
        dead = solver.solve(hand & ~(1 << c))[1]
        # Melded in the best hand it makes, and better than what we hold.
        return not dead & bit and dw < solver.deadwood(view.hand)

    # --- discarding --------------------------------------------------------------------------

    def _discard(self, view: PlayerView) -> int:
        legal = view.legal
        if BIG_GIN in legal:
            return BIG_GIN
        solver = view.rules.solver
        hand = view.hand
        knocks = [a - KNOCK for a in legal if KNOCK <= a < KNOCK + 52]
        if knocks:
            scored = [(solver.deadwood(hand & ~(1 << c)), self._danger(view, c), c)
                      for c in knocks]
            return KNOCK + min(scored)[2]
        unseen = FULL_DECK & ~(hand | mask_of(view.pile) | view.opponent_known)
        best_score, best_c = float("inf"), -1
        for c in legal:
            if c >= KNOCK:
                continue
            dw, dead = solver.solve(hand & ~(1 << c))
            score = (dw - self.outs_weight * outs(dead, unseen)
                     + self.danger_weight * self._danger(view, c, unseen))
            # Ties: throw the higher card.
            score -= VALUE[c] * 1e-3
            if score < best_score:
                best_score, best_c = score, c
        return best_c

    def _danger(self, view: PlayerView, c: int, unseen: int | None = None) -> float:
        """How much the opponent could want ``c``: what it showed, and what is still out."""
        if unseen is None:
            unseen = FULL_DECK & ~(view.hand | mask_of(view.pile) | view.opponent_known)
        known = view.opponent_known
        threw = view.opponent_discards
        shown = ((known & _RANKMATES[c]).bit_count() + (known & _ADJ[c]).bit_count())
        live = (unseen & _RANKMATES[c]).bit_count() + (unseen & _NEAR[c]).bit_count()
        refused = (threw & _RANKMATES[c]).bit_count() + (threw & _ADJ[c]).bit_count()
        return self.known_weight * shown + 0.5 * live - 1.0 * refused


BOTS: dict[str, Callable[[random.Random], GinBot]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
}


def make_bot(name: str, rng: random.Random) -> GinBot:
    return BOTS[name](rng)
