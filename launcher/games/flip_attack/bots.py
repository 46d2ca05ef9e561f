"""Players for the Flip Attack engine: a random one and one that weighs its luck."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from launcher.core import config
from launcher.core import luck as luck_model
from launcher.core.config import Luck
from launcher.games.draws import draw_below
from launcher.games.flip_attack.core import (
    CATCH,
    HIT,
    K_ATTACK,
    K_DA,
    K_FLIP,
    K_HIT2,
    K_HIT5,
    K_NUMBER,
    K_PYL,
    K_SKIP,
    K_SKIPE,
    K_WDA,
    LUCK,
    LUCK_DISCARD,
    M_CATCH,
    M_DISCARD,
    M_PASS,
    M_PLAY,
    M_PRESS_LUCK,
    M_STOP_LUCK,
    M_TAKE_HIT,
    PRESS_MOVE,
    SIDE_NAMES,
    Core,
    Move,
    variant,
)
from launcher.games.flip_attack.rules import as_action, as_core
from launcher.games.flip_attack.state import Action, Effect, FlipLid, HandState, Pressed
from launcher.games.roster import Roster

_CATCH: Move = (M_CATCH, -1, -1, -1, False)
_PASS: Move = (M_PASS, -1, -1, -1, False)
_TAKE_HIT: Move = (M_TAKE_HIT, -1, -1, -1, False)
_PRESS_LUCK: Move = (M_PRESS_LUCK, -1, -1, -1, False)
_HURTS = frozenset({K_HIT2, K_HIT5, K_ATTACK, K_SKIP, K_SKIPE})


def _uno_move(move: Move, w: Core, player: int, rng: random.Random, forget: float) -> Move:
    """Call UNO on a play that leaves one card (after a Discard All's discards), unless
    this player forgets: one draw from ``rng`` for every play and every stop of a luck run."""
    what = move[0]
    if (what != M_PLAY and what != M_STOP_LUCK) or rng.random() < forget:
        return move
    hand = w.hands[player]
    left = len(hand) - (1 if what == M_PLAY else 0)
    if what == M_PLAY:
        st = w.sides[w.side]
        card = move[1]
        kind = st.behaviour[card]
        if kind in (K_DA, K_WDA):
            col = st.colour[card] if kind == K_DA else move[3]
            colour = st.colour
            left -= sum(1 for c in hand if c != card and colour[c] == col)
    if left == 1:
        return (what, move[1], move[2], move[3], True)
    return move


class _OnCore:
    """What both bots share: they decide on the rules' core (``decide``, which ``FlipAttackTable``
    calls directly); ``choose`` is that decision read from and back into objects."""

    def choose(self, state: HandState, player: int, legal: Sequence[Action]) -> Action:
        """The decision ``decide`` makes in ``state`` (``legal`` is the state's own
        ``legal_actions``, which the decision is one of)."""
        w = as_core(state)
        return as_action(w, self.decide(w, player))

    def decide(self, w: Core, player: int) -> Move:
        raise NotImplementedError


class RandomBot(_OnCore):
    """Picks uniformly among pressing and the playable cards, then any legal colour."""

    name = "random"
    # ``base.trusted``: ``FlipAttackTable`` asks ``decide`` of this class exactly (a subclass
    # may have its own ``choose``).
    trusted = True

    def __init__(self, rng: random.Random, forget_uno: float = 0.25, catch: float = 0.5) -> None:
        self.rng = rng
        self.forget_uno = forget_uno
        self.catch = catch
        self._below_of: tuple[object, Callable[[int], int]] = (None, rng.choice)

    def _below(self) -> Callable[[int], int]:
        """``below(n)``: the index ``rng.choice`` of ``n`` things would draw (the same bits),
        made again when ``rng`` is another generator."""
        rng = self.rng
        if self._below_of[0] is not rng:
            self._below_of = (rng, draw_below(rng))
        return self._below_of[1]

    def decide(self, w: Core, player: int) -> Move:
        """Catch or pass at random; else press or a playable card, uniformly (a card first,
        then one of its colours: a wild is not picked more often for naming four)."""
        rng = self.rng
        step = w.agenda[0]
        kind = step.kind
        if kind == CATCH:
            return _CATCH if rng.random() < self.catch else _PASS
        below = self._below_of
        choice = below[1] if below[0] is rng else self._below()  # choice(n): an index
        hand = w.hands[player]
        if kind == LUCK:
            can = any(w.luck_can_discard(c) for c in hand)
            g = choice(2 if can else 1)
            choice(1)
            if can and g == 0:
                return _PRESS_LUCK
            return _uno_move((M_STOP_LUCK, -1, -1, -1, False), w, player, rng, self.forget_uno)
        if kind == LUCK_DISCARD:
            cards = [c for c in hand if w.luck_can_discard(c)]
            choice(1)
            return (M_DISCARD, cards[choice(len(cards))], -1, -1, False)
        if kind == HIT:
            cards = w.hit_passers(hand)
        else:
            mask = w.mask
            cards = []
            for c in hand:  # a plain loop: a comprehension costs a function call (3.11)
                if mask[c]:
                    cards.append(c)
        g = choice(len(cards) + 1)
        if g == 0:
            choice(1)
            return _TAKE_HIT if kind == HIT else PRESS_MOVE
        card = cards[g - 1]
        st = w.sides[w.side]
        if kind == HIT or not (st.wild[card] or st.behaviour[card] == K_FLIP):
            choice(1)  # one play of this card: no colour to name
            move: Move = (M_PLAY, card, -1, -1, False)
        else:
            move = variant(w, card, choice(w.variants(card)))
        return _uno_move(move, w, player, rng, self.forget_uno)

    def observe(self, effect: Effect) -> None:
        pass


class HeuristicBot(_OnCore):
    """A greedy player that presses its luck knowingly.

    It knows the launcher's luck settings (the hazard curve and the shot sizes, as a
    player would learn them) and watches every press, so it knows the dry streak. From
    them it prices presses: the cards that the next k presses are expected to shoot. It
    dumps high-value cards first and keeps its wilds for when nothing else plays; it
    plays a Hit 2x, Hit 5x or All-Out Attack when those presses are likely to hurt; in
    a Wild Press Your Luck run it presses on while one more card away is worth more than
    the chance of taking back the shot and every discard.
    """

    name = "heuristic"
    trusted = True

    def __init__(self, rng: random.Random, luck_settings: Luck | None = None,
                 forget_uno: float = 0.0, catch: float = 1.0, hit_weight: float = 6.0) -> None:
        self.rng = rng
        self.luck = luck_settings if luck_settings is not None else config.load().luck
        self.forget_uno = forget_uno
        self.catch = catch
        self.hit_weight = hit_weight  # points of score per card a hit is expected to give
        self.dry_streak = 0
        self._mean = {s: luck_model.mean_shot(self.luck.side(s)) for s in ("mild", "wild")}
        self._expected: dict[tuple[str, int, int], float] = {}

    # -- what it has seen --

    def observe(self, effect: Effect) -> None:
        if isinstance(effect, Pressed):
            if effect.cards:
                self.dry_streak = 0
            elif not effect.empty:
                self.dry_streak += 1
        elif isinstance(effect, FlipLid):
            self.dry_streak = 0  # the firmware starts a new streak after a flip

    def shot_chance(self, side: str) -> float:
        """The chance that the next press shoots, given the dry streak seen so far."""
        s = self.luck.side(side)
        return s.hazard[min(self.dry_streak, s.max_dry)]

    def expected_cards(self, side: str, presses: int, streak: int | None = None) -> float:
        """Cards that ``presses`` presses in a row are expected to shoot, from ``streak``."""
        start = self.dry_streak if streak is None else streak
        key = (side, presses, start)
        if key not in self._expected:
            self._expected[key] = self._expect(side, presses, start)
        return self._expected[key]

    def _expect(self, side: str, presses: int, start: int) -> float:
        s = self.luck.side(side)
        mean = self._mean[side]
        dist = {start: 1.0}  # dry streak -> chance
        total = 0.0
        for _ in range(presses):
            nxt: dict[int, float] = {}
            for k, w in dist.items():
                p = s.hazard[min(k, s.max_dry)]
                total += w * p * mean
                nxt[0] = nxt.get(0, 0.0) + w * p
                nxt[k + 1] = nxt.get(k + 1, 0.0) + w * (1.0 - p)
            dist = nxt
        return total

    # -- decisions --

    def decide(self, w: Core, player: int) -> Move:
        """Catch always; pass a hit on if it can; press its luck while one more card away
        is worth the risk; else the best-scoring play (``_turn``)."""
        kind = w.agenda[0].kind
        rng = self.rng
        if kind == CATCH:
            return _CATCH if rng.random() < self.catch else _PASS
        hand = w.hands[player]
        if kind == HIT:
            passers = w.hit_passers(hand)
            if passers:
                return _uno_move((M_PLAY, passers[0], -1, -1, False), w, player, rng,
                                 self.forget_uno)
            return _TAKE_HIT
        side = SIDE_NAMES[w.side]
        if kind == LUCK:
            run = w.luck
            assert run is not None
            p = self.shot_chance(side)
            shot = min(self._mean[side], w.launcher_count)
            worth = (1.0 - p) > p * (shot + len(run[3])) and len(hand) > 1
            if worth and any(w.luck_can_discard(c) for c in hand):
                return _PRESS_LUCK
            return (M_STOP_LUCK, -1, -1, -1,
                    len(hand) == 1 and rng.random() >= self.forget_uno)
        if kind == LUCK_DISCARD:
            st = w.sides[w.side]
            best, key = -1, (-1, 0)
            for c in hand:
                if w.luck_can_discard(c):
                    k2 = (0 if st.wild[c] else 1, st.points[c])
                    if k2 > key:
                        best, key = c, k2
            return (M_DISCARD, best, -1, -1, False)
        return _uno_move(self._turn(w, player, side, hand), w, player, rng,
                         self.forget_uno)

    def _turn(self, w: Core, player: int, side: str, hand: list[int]) -> Move:
        """The first best play by score, or a press when nothing plays: a card's points,
        less 45 for a wild; a Discard All's discards (12 each and their points); a hit's
        expected cards times ``hit_weight``; 25 to hurt a next player near out; a Wild Press
        Your Luck's expected discards; a Flip's gain in points per card on the other side
        (15 more when someone is near out); and 2 per kept card of the colour named."""
        mask = w.mask
        cards = []
        for c in hand:  # a plain loop, as in ``RandomBot.decide``
            if mask[c]:
                cards.append(c)
        if not cards:
            return PRESS_MOVE
        si = w.side
        st = w.sides[si]
        beh, pts, colour_of, wild = st.behaviour, st.points, st.colour, st.wild
        held: list[list[int] | None] = [None, None]  # per side: cards of each colour held
        nxt_cards = -1
        best: Move = PRESS_MOVE
        best_score = 0.0
        first = True
        for card in cards:
            k = beh[card]
            if k == K_NUMBER:  # the common case: its points, nothing else (an int, which
                s = pts[card]  # compares with the float scores exactly)
                if first or s > best_score:
                    best, best_score, first = (M_PLAY, card, -1, -1, False), s, False
                continue
            base = float(pts[card])
            if wild[card]:
                base -= 45.0
            if k == K_WDA:
                for d in range(4):
                    n = total = 0
                    for c in hand:
                        if c != card and colour_of[c] == d:
                            n += 1
                            total += pts[c]
                    gone = base + (12.0 * n + total)
                    for col in range(4):
                        sc = gone + 2.0 * self._colour_count(w, hand, card, k, col, d, held)
                        if first or sc > best_score:
                            best, best_score, first = (M_PLAY, card, col, d, False), sc, False
                continue
            if k == K_DA:
                dc = colour_of[card]
                n = total = 0
                for c in hand:
                    if c != card and colour_of[c] == dc:
                        n += 1
                        total += pts[c]
                base += 12.0 * n + total
            elif k in _HURTS:
                if k in _PRESSES:
                    base += self.hit_weight * self.expected_cards(
                        side, w.players if k == K_ATTACK else _PRESSES[k])
                if nxt_cards < 0:
                    nxt_cards = len(w.hands[w.nxt(player)])
                if nxt_cards <= 2:
                    base += 25.0
            elif k == K_PYL:
                base += 10.0 * (len(hand) - 1) * (1.0 - self.shot_chance(side))
            elif k == K_FLIP:
                o = w.sides[1 - si].points
                here = sum([pts[c] for c in hand])
                there = sum([o[c] for c in hand])
                gain = (here - there) / max(len(hand), 1)
                threat = min([len(h) for q, h in enumerate(w.hands) if q != player])
                if threat <= 2:
                    gain += 15.0
                base += gain
            if wild[card] or (k == K_FLIP and w.flip_needs_colour(card)):
                for col in range(4):
                    sc = base + 2.0 * self._colour_count(w, hand, card, k, col, -1, held)
                    if first or sc > best_score:
                        best, best_score, first = (M_PLAY, card, col, -1, False), sc, False
            elif first or base > best_score:
                best, best_score, first = (M_PLAY, card, -1, -1, False), base, False
        return best

    def _colour_count(self, w: Core, hand: list[int], card: int, k: int, col: int,
                           dcol: int, held: list[list[int] | None]) -> int:
        si = 1 - w.side if k == K_FLIP else w.side
        if col == dcol:
            return 0
        counts = held[si]
        if counts is None:
            colour_of = w.sides[si].colour
            counts = held[si] = [0, 0, 0, 0, 0]
            for c in hand:
                counts[colour_of[c]] += 1  # a wild's -1 counts in the last slot
        return counts[col] - (w.sides[si].colour[card] == col)


_PRESSES = {K_HIT2: 2, K_HIT5: 5, K_ATTACK: 0}  # the attack's: the players at the table



BOTS: Roster[RandomBot | HeuristicBot] = Roster({
    "random": lambda rng, luck_settings=None: RandomBot(rng),
    "heuristic": HeuristicBot,
})


def make_bot(name: str, rng: random.Random,
             luck_settings: Luck | None = None) -> RandomBot | HeuristicBot:
    """A bot by name (``random`` or ``heuristic``)."""
    return BOTS.make(name, rng, luck_settings)
