"""Players for classic UNO, UNO Splash and UNO Flip: a random one and a sensible one.

Both are seeded (``random.Random`` passed in) and answer ``choose(state, player, legal)``
with one of the ``legal`` ints (a card play may carry the UNO bit); ``observe`` sees every
event of the table (``("play", player, card, side)``, ``("draw", player, card)``, ...).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from math import floor
from typing import Any

from launcher.games.roster import Roster
from launcher.games.uno.game import (
    ACCEPT,
    B_DRAW,
    B_FLIP,
    B_REVERSE,
    B_SHUFFLE,
    B_SKIP,
    B_SKIP_ALL,
    B_SWAP,
    B_WILD_DRAW,
    CATCH,
    CATCH_THEM,
    CHALLENGE,
    CHALLENGE_IT,
    CHOOSE,
    COLOUR,
    DRAW_CARD,
    DRAWN,
    KEEP,
    TARGET,
    UNO,
    UNTIL_COLOUR,
    UnoState,
)
from launcher.games.uno.rules import may_call_uno


class UnoRandomBot:
    """Uniform over the legal actions at every decision; calls UNO unless it forgets.

    ``renege=False`` makes the ``random-play`` bot: a random playable card, drawing only
    when nothing plays, and always playing a playable drawn card (the random player of
    RLCard's simplified rules, where drawing is legal only with nothing to play). With
    reneging allowed, a uniform player draws so often that a 2-player hand lasts hundreds
    of turns (docs/games.md).
    """

    name = "random"
    trusted = True  # always one of ``legal`` (``base.trusted``: ``UnoTable.play`` trusts it)

    def __init__(self, rng: random.Random, forget_uno: float = 0.25, renege: bool = True) -> None:
        self.rng = rng
        self.forget_uno = forget_uno
        self.renege = renege
        if not renege:
            self.name = "random-play"
            self.choose = self._choose_play  # type: ignore[method-assign]
        self._random = rng.random

    # ``floor(random() * n)``: uniform like ``choice``, without its Python-level loop (and
    # ``math.floor`` is the same as ``int`` here, at two thirds of its cost). A play
    # from a hand of two leaves one card: say "UNO!" with it (or forget).

    def choose(self, state: UnoState, player: int, legal: Sequence[int]) -> int:
        a = legal[floor(self._random() * len(legal))]
        if 0 <= a < CHOOSE and may_call_uno(state, player) and \
                self._random() >= self.forget_uno:
            a |= UNO
        return a

    def _choose_play(self, state: UnoState, player: int, legal: Sequence[int]) -> int:
        """``choose`` of the ``random-play`` bot. The step shows in the last legal action."""
        last = legal[-1]
        if last == DRAW_CARD:  # a turn: a playable card; the draw only when it is all there is
            a = legal[floor(self._random() * (len(legal) - 1))]
            if a < 0:
                return a
        elif last == KEEP:  # the card just drawn plays: play it
            a = legal[0]
        else:  # a colour, a player, a challenge or a catch: never a card
            return legal[floor(self._random() * len(legal))]
        if may_call_uno(state, player) and self._random() >= self.forget_uno:
            a |= UNO
        return a

    def observe(self, event: tuple[Any, ...]) -> None:
        pass


class UnoHeuristicBot:
    """A greedy player: sheds its costliest cards, keeps wilds, never bluffs a Wild Draw,
    names the colour it holds most of, hits a player close to going out, flips (UNO Flip)
    when its hand is worth less on the other side, challenges when a bluff is likely enough
    to pay, always calls UNO and always catches."""

    name = "heuristic"
    trusted = True

    def __init__(self, rng: random.Random, colour_share: float = 0.22) -> None:
        self.rng = rng
        # Share of the deck in any one colour (about 25 of 108): for guessing a bluff.
        self.colour_share = colour_share

    def observe(self, event: tuple[Any, ...]) -> None:
        pass

    def choose(self, state: UnoState, player: int, legal: Sequence[int]) -> int:
        kind = state.agenda[-1][0]
        if kind == CATCH:
            return CATCH_THEM
        if kind == COLOUR:
            return CHOOSE + self._best_colour(state, player)
        if kind == TARGET:
            return min(legal, key=lambda a: (len(state.hands[a - CHOOSE]), a))
        if kind == CHALLENGE:
            return self._challenge(state, player)
        if kind == DRAWN:
            card = legal[0]
            b = state.rules.behaviour[state.side][card]
            if b == B_WILD_DRAW and self._bluff(state, player, card):
                return KEEP
            return self._uno(card, state, player)
        plays = [a for a in legal if a != DRAW_CARD]
        if not plays:
            return DRAW_CARD
        return self._uno(max(plays, key=lambda c: self._score(state, player, c)), state, player)

    def _uno(self, card: int, state: UnoState, player: int) -> int:
        return card | UNO if may_call_uno(state, player) else card

    def _bluff(self, state: UnoState, player: int, card: int) -> bool:
        col = state.rules.table.sides[state.side].colour
        return any(col[c] == state.colour for c in state.hands[player] if c != card)

    def _best_colour(self, state: UnoState, player: int) -> int:
        col = state.rules.table.sides[state.side].colour
        counts = [0, 0, 0, 0]
        for c in state.hands[player]:
            if col[c] >= 0:
                counts[col[c]] += 1
        best = max(counts)
        return counts.index(best) if best else self.rng.randrange(4)

    def _challenge(self, state: UnoState, player: int) -> int:
        assert state.pending is not None
        who, _, amount = state.pending
        held = len(state.hands[who])
        # Chance they held the colour: 1 - (1 - share)^cards. A won challenge saves the
        # draw and gives it to them; a lost one costs 2 more cards.
        guilty = 1.0 - (1.0 - self.colour_share) ** held
        stake = 4.0 if amount == UNTIL_COLOUR else float(amount)
        return CHALLENGE_IT if guilty * 2 * stake > (1.0 - guilty) * 2.0 else ACCEPT

    def _score(self, state: UnoState, player: int, card: int) -> float:
        rules = state.rules
        side = state.side
        st = rules.table.sides[side]
        b = rules.behaviour[side][card]
        hand = state.hands[player]
        nxt = state.hands[state.next_player(player)]
        threat = min(len(h) for q, h in enumerate(state.hands) if q != player)
        s = float(st.points[card])
        if st.wild[card]:
            s -= 60.0  # keep wilds for when nothing else plays
            if b == B_WILD_DRAW and self._bluff(state, player, card):
                s -= 200.0
        if b in (B_DRAW, B_WILD_DRAW, B_SKIP, B_SKIP_ALL) and len(nxt) <= 2:
            s += 40.0
        if b == B_REVERSE and state.n > 2 and len(nxt) <= 2:
            s += 30.0
        if b == B_SWAP:
            s += 5.0 * (len(hand) - 1 - min(len(h) for q, h in enumerate(state.hands)
                                            if q != player))
        if b == B_SHUFFLE:
            s += 3.0 * (len(hand) - sum(len(h) for h in state.hands) / state.n)
        if b == B_FLIP:
            other = rules.table.sides[side ^ 1].points
            here = sum(st.points[c] for c in hand)
            there = sum(other[c] for c in hand)
            s += (here - there) / max(len(hand), 1) + (15.0 if threat <= 2 else 0.0)
        if st.colour[card] >= 0:
            # Keep a colour it can follow.
            s += 2.0 * sum(1 for c in hand if c != card and st.colour[c] == st.colour[card])
        return s


UNO_BOTS: Roster[UnoRandomBot | UnoHeuristicBot] = Roster({
    "random": UnoRandomBot,
    "random-play": lambda rng: UnoRandomBot(rng, renege=False),
    "heuristic": UnoHeuristicBot,
})


def make_uno_bot(name: str, rng: random.Random) -> UnoRandomBot | UnoHeuristicBot:
    """A bot by name: ``random``, ``random-play`` or ``heuristic``."""
    return UNO_BOTS.make(name, rng)
