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
    M_PLAY,
    M_PRESS_LUCK,
    M_STOP_LUCK,
    SIDE_NAMES,
    Core,
    Move,
)
from launcher.games.flip_attack.rules import as_action, as_core, legal_moves, may_call_uno
from launcher.games.flip_attack.state import Action, Effect, FlipLid, HandState, Pressed
from launcher.games.roster import Roster

_HURTS = frozenset({K_HIT2, K_HIT5, K_ATTACK, K_SKIP, K_SKIPE})


def _uno_move(move: Move, w: Core, rng: random.Random, forget: float) -> Move:
    """``move`` with "UNO!" called where the rules let it be (``rules.may_call_uno``: a
    call there is the one that counts, for a move that leaves one card), unless this
    player forgets: one draw from ``rng`` for every play and every stop of a luck run."""
    what = move[0]
    if (what != M_PLAY and what != M_STOP_LUCK) or rng.random() < forget:
        return move
    if may_call_uno(w, move):
        return (what, move[1], move[2], move[3], True)
    return move


class _OnCore:
    """What both bots share: handed the rules' core and its legal moves (``rules.legal_moves``,
    the one place legality is decided), they choose one (``decide``, which ``FlipAttackTable``
    and the contract's seats call); ``choose`` is that choice read from and back into
    objects."""

    def choose(self, state: HandState, player: int, legal: Sequence[Action]) -> Action:
        """The decision ``decide`` makes in ``state`` (``legal`` is the state's own
        ``legal_actions``, which the decision is one of)."""
        w = as_core(state)
        return as_action(w, self.decide(w, player, legal_moves(w)))

    def decide(self, w: Core, player: int, moves: Sequence[Move]) -> Move:
        """One of ``moves`` (``legal_moves(w)``: the player to move's), maybe with "UNO!"
        called."""
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

    def decide(self, w: Core, player: int, moves: Sequence[Move]) -> Move:
        """Catch or pass at random; else one of the moves, uniformly by card (pressing, or
        taking the hit, counts as one): a card first, then one of its plays (a wild is not
        picked more often for naming four colours)."""
        rng = self.rng
        kind = w.agenda[0].kind
        if kind == CATCH:  # moves: catch, pass
            return moves[0] if rng.random() < self.catch else moves[1]
        below = self._below_of
        choice = below[1] if below[0] is rng else self._below()  # choice(n): an index
        if kind == LUCK:  # moves: press on (if any card may go), stop
            move = moves[choice(len(moves))]
            choice(1)
            if move[0] == M_PRESS_LUCK:
                return move
            return _uno_move(move, w, rng, self.forget_uno)
        if kind == LUCK_DISCARD:
            choice(1)
            return moves[choice(len(moves))]
        # a turn or a hit: moves[0] presses or takes the hit, then each card's plays
        starts = [0]
        last = -2
        i = 0
        for m in moves:  # a plain loop: a comprehension costs a function call (3.11)
            if i and m[1] != last:
                starts.append(i)
                last = m[1]
            i += 1
        starts.append(i)
        g = choice(len(starts) - 1)
        if g == 0:
            choice(1)
            return moves[0]
        lo = starts[g]
        move = moves[lo + choice(starts[g + 1] - lo)]
        return _uno_move(move, w, rng, self.forget_uno)

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

    def decide(self, w: Core, player: int, moves: Sequence[Move]) -> Move:
        """Catch always; pass a hit on if it can; press its luck while one more card away
        is worth the risk; else the best-scoring play (``_turn``)."""
        kind = w.agenda[0].kind
        rng = self.rng
        if kind == CATCH:  # moves: catch, pass
            return moves[0] if rng.random() < self.catch else moves[1]
        hand = w.hands[player]
        if kind == HIT:  # moves: take the hit, then each card that passes it on
            if len(moves) > 1:
                return _uno_move(moves[1], w, rng, self.forget_uno)
            return moves[0]
        side = SIDE_NAMES[w.side]
        if kind == LUCK:  # moves: press on (if any card may go), stop
            run = w.luck
            assert run is not None
            p = self.shot_chance(side)
            shot = min(self._mean[side], w.launcher_count)
            worth = (1.0 - p) > p * (shot + len(run[3])) and len(hand) > 1
            if worth and moves[0][0] == M_PRESS_LUCK:
                return moves[0]
            stop = moves[-1]
            if len(hand) == 1 and rng.random() >= self.forget_uno and may_call_uno(w, stop):
                return (*stop[:4], True)  # type: ignore[return-value]
            return stop
        if kind == LUCK_DISCARD:  # moves: each card that may go
            st = w.sides[w.side]
            best, key = moves[0], (-1, 0)
            for m in moves:
                c = m[1]
                k2 = (0 if st.wild[c] else 1, st.points[c])
                if k2 > key:
                    best, key = m, k2
            return best
        return _uno_move(self._turn(w, player, side, hand, moves), w, rng, self.forget_uno)

    def _turn(self, w: Core, player: int, side: str, hand: list[int],
              moves: Sequence[Move]) -> Move:
        """The first best of ``moves`` by score, or the press (``moves[0]``) when no card
        plays: a card's points, less 45 for a wild; a Discard All's discards (12 each and
        their points); a hit's expected cards times ``hit_weight``; 25 to hurt a next player
        near out; a Wild Press Your Luck's expected discards; a Flip's gain in points per
        card on the other side (15 more when someone is near out); and 2 per kept card of
        the colour named."""
        if len(moves) == 1:
            return moves[0]
        si = w.side
        st = w.sides[si]
        beh, pts, colour_of = st.behaviour, st.points, st.colour
        held: list[list[int] | None] = [None, None]  # per side: cards of each colour held
        nxt_cards = -1
        best: Move = moves[0]
        best_score = 0.0
        first = True
        card = -1
        k = -1
        base = 0.0
        gone: list[float] = []  # a Wild Discard All's: per colour, what discarding it gains
        for i in range(1, len(moves)):
            move = moves[i]
            if move[1] != card:  # the first play of a card: what the card itself is worth
                card = move[1]
                k = beh[card]
                if k == K_NUMBER:  # the common case: its points, nothing else (an int,
                    s = pts[card]  # which compares with the float scores exactly)
                    if first or s > best_score:
                        best, best_score, first = move, s, False
                    continue
                base = self._worth(w, player, side, hand, card, k)
                if k == K_WDA:
                    gone = []
                    for d in range(4):
                        n = total = 0
                        for c in hand:
                            if c != card and colour_of[c] == d:
                                n += 1
                                total += pts[c]
                        gone.append(12.0 * n + total)
                elif k in _HURTS:
                    if nxt_cards < 0:
                        nxt_cards = len(w.hands[w.nxt(player)])
                    if nxt_cards <= 2:
                        base += 25.0
            elif k == K_NUMBER:
                continue
            col, d = move[2], move[3]
            if k == K_WDA:
                sc = base + gone[d] + 2.0 * self._colour_count(w, hand, card, k, col, d, held)
            elif col >= 0:
                sc = base + 2.0 * self._colour_count(w, hand, card, k, col, -1, held)
            else:
                sc = base
            if first or sc > best_score:
                best, best_score, first = move, sc, False
        return best

    def _worth(self, w: Core, player: int, side: str, hand: list[int], card: int,
               k: int) -> float:
        """What playing ``card`` (of behaviour ``k``, not a plain number) is worth before
        the colour it names: see ``_turn``."""
        st = w.sides[w.side]
        pts, colour_of = st.points, st.colour
        base = float(pts[card])
        if st.wild[card]:
            base -= 45.0
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
        elif k == K_PYL:
            base += 10.0 * (len(hand) - 1) * (1.0 - self.shot_chance(side))
        elif k == K_FLIP:
            o = w.sides[1 - w.side].points
            here = sum([pts[c] for c in hand])
            there = sum([o[c] for c in hand])
            gain = (here - there) / max(len(hand), 1)
            threat = min([len(h) for q, h in enumerate(w.hands) if q != player])
            if threat <= 2:
                gain += 15.0
            base += gain
        return base

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
