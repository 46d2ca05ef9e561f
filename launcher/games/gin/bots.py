"""Gin Rummy players: a random legal one and a heuristic that counts cards and plays safe."""

from __future__ import annotations

import random
from math import floor
from typing import Protocol

from launcher.games.gin.cards import FULL_DECK, SUIT_BITS, VALUE, cards_of, mask_of
from launcher.games.gin.melds import Solver
from launcher.games.gin.rules import (
    BIG_GIN,
    DRAW_STOCK,
    DRAW_UPCARD,
    KNOCK,
    PASS,
    PlayerView,
    knock_layouts,
)
from launcher.games.roster import Roster

_SPREAD = 1 | 1 << 13 | 1 << 26 | 1 << 39


class GinBot(Protocol):
    """A player: given what it may see (its legal actions included), pick one of them."""

    name: str

    def choose(self, view: PlayerView) -> int: ...

    def arrange(self, view: PlayerView, discard: int) -> tuple[int, ...] | None:
        """Knocking with ``discard``: the melds to lay out (one of ``knock_layouts``), or
        None for the engine's least-deadwood layout (``knocker_layout``)."""
        ...


class RandomBot:
    """Uniform over the legal actions (each discard, each knock, big gin alike).

    It lays out as the engine does (no draw from its generator), so its games are the same
    as before the knocker could choose.
    """

    name = "random"
    lays_out = False  # ``arrange`` leaves the layout to the engine (``knocker_layout``)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._random = rng.random

    def choose(self, view: PlayerView) -> int:
        # ``floor(random() * n)``: uniform like ``choice``, one C call instead of its loop
        # (``math.floor``: the same as ``int`` here, and cheaper).
        legal = view.legal
        return legal[floor(self._random() * len(legal))]

    def arrange(self, view: PlayerView, discard: int) -> tuple[int, ...] | None:
        return None


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
    # ``arrange`` chooses the layout itself whenever there is a choice (with one layout, or
    # gin, every ``knocker_layout`` lays out the same): ``knocker_layout`` does nothing.
    lays_out = True

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

    # --- laying out ------------------------------------------------------------------------

    def arrange(self, view: PlayerView, discard: int) -> tuple[int, ...] | None:
        """The layout that scores best against the layoffs it allows, in expectation.

        For each legal layout: its deadwood plus the value the defender is expected to lay
        off onto it. A card the defender took from the pile counts whole; an unseen card
        by the chance that the defender holds it; a card that only fits after another one
        is laid, by both chances. The least wins (ties: least deadwood, then the solver's
        order). The defender's own deadwood is the same whatever is laid out, so it drops.
        """
        solver = view.rules.solver
        kept = view.hand & ~(1 << discard)
        options = knock_layouts(solver, kept, view.limit)
        if len(options) < 2 or options[0][0] == 0:
            return None
        known = view.opponent_known
        unseen = FULL_DECK & ~(view.hand | mask_of(view.pile) | known)
        unknown_held = max(view.rules.hand_size - known.bit_count(), 0)
        chance = unknown_held / unseen.bit_count() if unseen else 0.0
        pool = known | unseen
        best_cost, best = float("inf"), options[0][1]
        for dw, melds in options:
            cost = dw + sum(self._layoff_value(solver, meld, pool, known, chance)
                            for meld in melds)
            if cost < best_cost - 1e-9:
                best_cost, best = cost, melds
        return best

    @staticmethod
    def _layoff_value(solver: Solver, meld: int, pool: int, known: int,
                      chance: float) -> float:
        """Expected value laid off onto ``meld`` from the cards in ``pool`` (greedy chains)."""
        reach: dict[int, float] = {}
        todo = [(meld, 1.0)]
        while todo:
            m, p = todo.pop()
            for c in cards_of(pool & ~m):
                grown = m | 1 << c
                if not solver.is_meld(grown):
                    continue
                q = p * (1.0 if known >> c & 1 else chance)
                if q > reach.get(c, 0.0) + 1e-12:
                    reach[c] = q
                    todo.append((grown, q))
        return sum(VALUE[c] * q for c, q in reach.items())

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


BOTS: Roster[GinBot] = Roster({
    "random": RandomBot,
    "heuristic": HeuristicBot,
})


def make_bot(name: str, rng: random.Random) -> GinBot:
    return BOTS.make(name, rng)
