"""Gin Rummy rules for one hand: a deterministic engine over bitmask hands and int actions.

The engine never shuffles and never holds the stock: the shell deals (``deal_order``), puts
the stock into a dealer (``launcher.games.dealers``), and hands each stock card to
``GinHand.apply(DRAW_STOCK, card)``. So the same engine runs with a list-backed dealer and,
later, with the launcher shooting the stock one card per press.

``GinHand`` is a small mutable object rather than a frozen state because bots and the
benchmark step it hundreds of thousands of times a second; ``copy()`` gives an independent
one. Nothing in it reads a clock or a random generator.

Actions are ints: ``0..51`` discard that card, ``KNOCK + c`` knock (or go gin) discarding
``c``, and ``DRAW_STOCK``, ``DRAW_UPCARD`` (take the top of the discard pile, also the
upcard), ``PASS`` (refuse the upcard) and ``BIG_GIN`` (all 11 cards melded, no discard).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from launcher.games.base import OptionError, Options, RuleViolation, Seats, whole
from launcher.games.gin.cards import (
    DECK_SIZE,
    RANK_VALUE,
    SPADES,
    cards_of,
    name,
    show,
    value,
)
from launcher.games.gin.melds import Solver, solver_for

# --- actions --------------------------------------------------------------------------

KNOCK = 52
DRAW_STOCK = 104
DRAW_UPCARD = 105
PASS = 106
BIG_GIN = 107
NUM_ACTIONS = 108
_STOCK_ONLY = (DRAW_STOCK,)
_EITHER_PILE = (DRAW_STOCK, DRAW_UPCARD)
_UPCARD_CHOICE = (DRAW_UPCARD, PASS)


def describe(action: int) -> str:
    """``discard 7H``, ``knock 2C``, ``draw stock``... for logs and error messages."""
    if 0 <= action < KNOCK:
        return f"discard {name(action)}"
    if KNOCK <= action < KNOCK + DECK_SIZE:
        return f"knock {name(action - KNOCK)}"
    return {DRAW_STOCK: "draw stock", DRAW_UPCARD: "take discard", PASS: "pass",
            BIG_GIN: "big gin"}.get(action, f"action {action}")


# --- phases -----------------------------------------------------------------------------

UPCARD = "upcard"      # take the first upcard or pass (non-dealer, then dealer)
DRAW = "draw"          # draw from the stock or the discard pile
DISCARD = "discard"    # discard, knock or declare big gin
OVER = "over"

# Hand results.
KNOCK_WIN = "knock"
UNDERCUT = "undercut"
GIN = "gin"
BIG_GIN_WIN = "big_gin"
DRAWN = "draw"


# --- options ------------------------------------------------------------------------------


@dataclass(frozen=True)
class GinRules(Options):
    """Every rule of a hand and a game; variants are presets (``variants.py``).

    docs/games.md explains each field, and which ones fill a gap in the rule text.
    """

    hand_size: int = whole(10, at_most=25, note="two hands and an upcard")
    knock_limit: int = whole(10, at_least=0, at_most=200)
    # Oklahoma: the upcard's value (ace 1, J/Q/K 10) replaces knock_limit for the hand.
    upcard_limit: bool = False
    # With upcard_limit, an ace upcard means: "one" (knock with 1 or less) or "gin" (Tedesco).
    ace_upcard: Literal["one", "gin"] = "one"
    # Oklahoma: a spade upcard doubles the hand's score.
    spade_doubles: bool = False
    gin_only: bool = False             # Straight Gin: no knocking, only gin
    aces_high: bool = False            # Mahjong Gin: runs may also end Q-K-A
    big_gin: bool = True               # all 11 cards melded may end the hand without a discard
    gin_bonus: int = whole(25, at_least=0)
    big_gin_bonus: int = whole(31, at_least=0)
    undercut_bonus: int = whole(25, at_least=0)
    stock_floor: int = whole(2, at_least=0)  # the hand is drawn when the stock is down to this
    # The text is silent on throwing back the card just taken from the discard pile;
    # the usual rule forbids it (it would make a take a free look).
    discard_taken: bool = False
    # The knocker lays out a least-deadwood arrangement: "defensive" picks, among those, the
    # one leaving the defender the most deadwood after layoffs; "first" takes the solver's.
    knocker_layout: Literal["defensive", "first"] = "defensive"
    game_target: int = whole(100)
    game_bonus: int = whole(100, at_least=0)
    line_bonus: int = whole(25, at_least=0)  # per hand won, added when a game ends
    shutout_multiplier: int = whole(2, at_least=0)  # the game bonus when the loser won no hand
    # Tedesco: points added to a hand won by the player who also won the previous hand.
    streak_bonus: int = whole(0, at_least=0)
    # A drawn hand is a round, so it ends a streak ("winning multiple consecutive rounds").
    draw_breaks_streak: bool = True
    games: int = whole(1, at_most=3, note="Hollywood plays 3")  # games scored at once
    next_dealer: Literal["alternate", "winner", "loser"] = "alternate"
    max_hands: int = whole(1000)  # not a rule: a game still going after this stops

    def check(self) -> None:
        stock = DECK_SIZE - 2 * self.hand_size - 1
        if stock <= self.stock_floor:
            raise OptionError("stock_floor", self.stock_floor,
                              f"must leave cards to draw after the deal (hand_size "
                              f"{self.hand_size} leaves a stock of {stock})")

    def idle(self, name: str, seats: Seats) -> str | None:
        """Why the field ``name`` cannot change any hand or score under these rules, if so.

        A house rule that does nothing is a mistake worth saying (``--rule knock_limit=7``
        under Oklahoma): the shell refuses the ones named here (and the spec, the ones the
        bots make idle).
        """
        knockless = "there is no knocking, only gin" if self.gin_only else None
        if name == "knock_limit":
            if knockless:
                return knockless
            if self.upcard_limit:
                return "the upcard sets the knock limit (upcard_limit)"
        if name in ("undercut_bonus", "knocker_layout") and knockless:
            return knockless
        if name == "ace_upcard" and (knockless or not self.upcard_limit):
            return knockless or "only the upcard limit (upcard_limit) reads an ace upcard"
        if name == "big_gin_bonus" and not self.big_gin:
            return "big gin is off (big_gin = false)"
        if name == "draw_breaks_streak" and not self.streak_bonus:
            return "there is no streak bonus (streak_bonus = 0)"
        if name == "shutout_multiplier" and not self.game_bonus:
            return "there is no game bonus to multiply (game_bonus = 0)"
        return None

    @property
    def solver(self) -> Solver:
        return solver_for(self.aces_high)

    def hand_limit(self, upcard: int) -> int:
        """The most deadwood a knock may leave in a hand whose first upcard is ``upcard``.

        0 means gin only (Straight, Tedesco's ace).
        """
        if self.gin_only:
            return 0
        if not self.upcard_limit:
            return self.knock_limit
        rank = upcard % 13
        if rank == 0 and self.ace_upcard == "gin":
            return 0
        return RANK_VALUE[rank]

    def hand_multiplier(self, upcard: int) -> int:
        return 2 if self.spade_doubles and upcard // 13 == SPADES else 1


# --- results ---------------------------------------------------------------------------


@dataclass(frozen=True)
class HandResult:
    """How a hand ended and what it scored (``points`` go to ``winner``; 0 on a draw)."""

    kind: str                     # knock, undercut, gin, big_gin, draw
    winner: int | None
    points: int
    knocker: int | None = None
    knocker_deadwood: int = 0
    defender_deadwood: int = 0    # after layoffs (gin: none allowed)
    defender_own_deadwood: int = 0  # before layoffs
    laid_off: int = 0             # mask of the cards the defender laid off
    knocker_melds: tuple[int, ...] = ()
    multiplier: int = 1
    turns: int = 0

    def __str__(self) -> str:
        if self.kind == DRAWN:
            return f"drawn hand after {self.turns} turns"
        text = (f"{self.kind}: player {self.winner} scores {self.points} "
                f"(knocker {self.knocker} deadwood {self.knocker_deadwood}, "
                f"defender {self.defender_deadwood}")
        if self.laid_off:
            text += f" after laying off {show(self.laid_off)}"
        return text + f"; x{self.multiplier})" if self.multiplier != 1 else text + ")"


def deal_order(deck: Sequence[int], hand_size: int) -> tuple[list[int], list[int], int, list[int]]:
    """Split a shuffled deck as the rules deal it: one card at a time, the non-dealer first.

    Returns (non-dealer's cards, dealer's cards, the upcard, the stock in draw order).
    """
    n = 2 * hand_size
    return list(deck[0:n:2]), list(deck[1:n:2]), deck[n], list(deck[n + 1:])


def next_dealer(rules: GinRules, dealer: int, result: HandResult) -> int:
    """Who deals the hand after ``result`` (``rules.next_dealer``; a drawn hand: the same
    dealer unless the deal alternates)."""
    how = rules.next_dealer
    if how == "alternate" or result.winner is None:
        return 1 - dealer if how == "alternate" else dealer
    return result.winner if how == "winner" else 1 - result.winner


class GinHand:
    """One hand in progress: who is to move, the hands, the discard pile, the stock count.

    ``hands[p]`` are bitmasks; ``pile`` is the discard pile, top last. ``public[p]`` is what
    the opponent knows of ``p``'s hand: the cards ``p`` took from the discard pile.
    """

    __slots__ = ("_legal_now", "_passes", "dealer", "discarded", "hands", "limit",
                 "multiplier", "phase", "pile", "player", "public", "result", "rules", "solver",
                 "stock_left", "taken", "turns", "upcard")

    def __init__(self, rules: GinRules, dealer: int, non_dealer_cards: Sequence[int],
                 dealer_cards: Sequence[int], upcard: int, stock_left: int) -> None:
        self.rules = rules
        self.solver = rules.solver
        self.dealer = dealer
        hands = [0, 0]
        for p, cs in ((1 - dealer, non_dealer_cards), (dealer, dealer_cards)):
            if len(cs) != rules.hand_size:
                raise RuleViolation(f"player {p} was dealt {len(cs)} cards, "
                                    f"not {rules.hand_size}")
            for c in cs:
                hands[p] |= 1 << c
        seen = hands[0] | hands[1]
        if hands[0] & hands[1] or seen >> upcard & 1 or seen.bit_count() != 2 * rules.hand_size:
            raise RuleViolation("a card was dealt twice")
        if stock_left + 2 * rules.hand_size + 1 != DECK_SIZE:
            raise RuleViolation(f"stock of {stock_left} does not complete the deck")
        self.hands = hands
        self.pile: tuple[int, ...] = (upcard,)  # a tuple: every view shares it, uncopied
        self.upcard = upcard
        self.stock_left = stock_left
        self.limit = rules.hand_limit(upcard)
        self.multiplier = rules.hand_multiplier(upcard)
        self.phase = UPCARD
        self.player = 1 - dealer
        self.public = [0, 0]
        self.discarded = [0, 0]
        self.taken = -1          # the card taken from the pile this turn, -1 if none
        self.turns = 0
        self.result: HandResult | None = None
        self._passes = 0
        self._legal_now: tuple[int, ...] | None = None

    def copy(self) -> GinHand:
        other = GinHand.__new__(GinHand)
        for slot in GinHand.__slots__:
            setattr(other, slot, getattr(self, slot))
        other.hands = list(self.hands)
        other.public = list(self.public)
        other.discarded = list(self.discarded)
        return other

    @property
    def over(self) -> bool:
        return self.phase == OVER

    @property
    def top(self) -> int:
        """The top card of the discard pile (-1 when empty)."""
        return self.pile[-1] if self.pile else -1

    @property
    def stock_forced(self) -> bool:
        """Both players passed the upcard: the non-dealer must now draw from the stock."""
        return self._passes == 2 and self.turns == 0

    # --- what may be done ---------------------------------------------------------------

    def legal_actions(self) -> list[int]:
        return list(self._legal())

    def _legal(self) -> tuple[int, ...]:
        """The legal actions of the player to move: the one place the rules decide them
        (``is_legal`` and ``apply`` ask here), worked out once per position."""
        legal = self._legal_now
        if legal is not None:
            return legal
        phase = self.phase
        if phase == DISCARD:
            legal = self._discard_actions()
        elif phase == DRAW:
            legal = _STOCK_ONLY if self.stock_forced or not self.pile else _EITHER_PILE
        else:
            legal = _UPCARD_CHOICE if phase == UPCARD else ()
        self._legal_now = legal
        return legal

    def _discard_actions(self) -> tuple[int, ...]:
        hand = self.hands[self.player]
        forbidden = 0 if self.rules.discard_taken or self.taken < 0 else 1 << self.taken
        actions = cards_of(hand & ~forbidden)
        knocks, gin = self.solver.discard_options(hand, self.limit, forbidden)
        if knocks:
            actions += tuple(KNOCK + c for c in knocks)
        if gin and self.rules.big_gin:
            actions += (BIG_GIN,)
        return actions

    def is_legal(self, action: int) -> bool:
        return action in self._legal()

    # --- doing it ---------------------------------------------------------------------------

    def layouts(self, discard: int) -> list[tuple[int, tuple[int, ...]]]:
        """What the player to move may lay out knocking with ``discard``: (deadwood, melds)
        for every arrangement of the ten cards kept whose deadwood is within the limit,
        least deadwood first. "Lay your hand face up on the table, arranging your cards into
        melds": which arrangement is the knocker's choice (``apply(..., melds=)``)."""
        kept = self.hands[self.player] & ~(1 << discard)
        return knock_layouts(self.solver, kept, self.limit)

    def apply(self, action: int, stock_card: int | None = None,
              melds: Sequence[int] | None = None) -> HandResult | None:
        """Play ``action`` for the player to move; ``DRAW_STOCK`` needs the card drawn.

        A knock may say how the knocker lays out (``melds``, one of ``layouts``); without
        it the engine lays out a least-deadwood arrangement (``knocker_layout``).
        Returns the hand's result when this action ended it.
        """
        if not self.is_legal(action):
            raise RuleViolation(f"player {self.player} may not {describe(action)} "
                                f"in the {self.phase} phase")
        self._legal_now = None  # the position changes below
        if melds is not None and not KNOCK <= action < KNOCK + DECK_SIZE:
            raise RuleViolation(f"{describe(action)} lays nothing out")
        p = self.player
        if action == DRAW_STOCK:
            if stock_card is None or not 0 <= stock_card < DECK_SIZE:
                raise RuleViolation("drawing from the stock needs the card the dealer gave")
            if (self.hands[0] | self.hands[1]) >> stock_card & 1 or stock_card in self.pile:
                raise RuleViolation(f"{name(stock_card)} drawn from the stock is already "
                                    "in play")
            if self.stock_left <= 0:
                raise RuleViolation("the stock is empty")
            self.stock_left -= 1
            self.hands[p] |= 1 << stock_card
            self.taken = -1
            self.phase = DISCARD
            return None
        if stock_card is not None:
            raise RuleViolation(f"{describe(action)} takes no stock card")
        if action == DRAW_UPCARD:
            c = self.pile[-1]
            self.pile = self.pile[:-1]
            self.hands[p] |= 1 << c
            self.public[p] |= 1 << c
            self.taken = c
            self.phase = DISCARD
            return None
        if action == PASS:
            self._passes += 1
            self.player = 1 - p
            if self._passes == 2:
                self.phase = DRAW  # back to the non-dealer, who must draw from the stock
            return None
        if action == BIG_GIN:
            return self._end_knock(p, self.hands[p], big=True)
        c = action - KNOCK if action >= KNOCK else action
        bit = 1 << c
        self.hands[p] &= ~bit
        self.public[p] &= ~bit
        self.discarded[p] |= bit
        self.pile += (c,)
        self.turns += 1
        if action >= KNOCK:
            return self._end_knock(p, self.hands[p], big=False, melds=melds)
        if self.stock_left <= self.rules.stock_floor:
            return self._finish(HandResult(DRAWN, None, 0, multiplier=self.multiplier,
                                           turns=self.turns))
        self.player = 1 - p
        self.phase = DRAW
        return None

    def _finish(self, result: HandResult) -> HandResult:
        self.result = result
        self.phase = OVER
        return result

    def _end_knock(self, knocker: int, hand: int, big: bool,
                   melds: Sequence[int] | None = None) -> HandResult:
        rules, solver = self.rules, self.solver
        defender = 1 - knocker
        other = self.hands[defender]
        kdw = solver.deadwood(hand)
        own = solver.deadwood(other)
        m = self.multiplier
        if kdw == 0:
            kind, bonus = (BIG_GIN_WIN, rules.big_gin_bonus) if big else (GIN, rules.gin_bonus)
            self.turns += big  # a big gin ends the turn without a discard
            return self._finish(HandResult(
                kind, knocker, (bonus + own) * m, knocker, 0, own, own, 0,
                tuple(solver.melds_of(hand)), m, self.turns))
        if melds is None:
            melds, ddw, laid = self.layout(hand, other)
        else:
            melds = tuple(melds)
            kdw = self._check_layout(hand, melds)
            ddw, laid, _ = solver.layoff(other, melds)
        if ddw <= kdw:
            return self._finish(HandResult(
                UNDERCUT, defender, (rules.undercut_bonus + kdw - ddw) * m, knocker, kdw, ddw,
                own, laid, melds, m, self.turns))
        return self._finish(HandResult(KNOCK_WIN, knocker, (ddw - kdw) * m, knocker, kdw, ddw,
                                       own, laid, melds, m, self.turns))

    def _check_layout(self, hand: int, melds: tuple[int, ...]) -> int:
        """The deadwood ``melds`` leave in ``hand``; RuleViolation unless a legal layout."""
        used = 0
        for meld in melds:
            if not self.solver.is_meld(meld) or meld & ~hand or meld & used:
                raise RuleViolation(f"{show(meld)} is not a meld of the knocker's own cards, "
                                    "apart from the other melds")
            used |= meld
        dw = value(hand & ~used)
        if dw > self.limit:
            raise RuleViolation(f"that layout leaves {dw} deadwood; the limit is {self.limit}")
        return dw

    def layout(self, knocker_hand: int, defender_hand: int) -> tuple[tuple[int, ...], int, int]:
        """The knocker's melds, the defender's deadwood after laying off, and the cards laid.

        Among the knocker's least-deadwood arrangements, ``knocker_layout = "defensive"``
        takes the one that leaves the defender the most deadwood.
        """
        solver = self.solver
        options = solver.best_arrangements(knocker_hand)
        if self.rules.knocker_layout == "first":
            options = options[:1]
        best: tuple[tuple[int, ...], int, int] | None = None
        for melds in options:
            ddw, laid, _ = solver.layoff(defender_hand, melds)
            if best is None or ddw > best[1]:
                best = (melds, ddw, laid)
        assert best is not None  # every hand has at least one arrangement
        return best

    def __repr__(self) -> str:
        return (f"GinHand(phase={self.phase}, player={self.player}, "
                f"hands=[{show(self.hands[0])} | {show(self.hands[1])}], "
                f"top={name(self.top) if self.pile else '-'}, stock={self.stock_left})")

    # --- what a player may see --------------------------------------------------------------

    def view(self, player: int) -> PlayerView:
        """Everything ``player`` is entitled to know, and nothing more."""
        o = 1 - player
        return PlayerView(player, self.phase, self.hands[player], self.pile,
                          self.stock_left, self.public[o], self.discarded[o],
                          self.discarded[player], self.limit, self.multiplier, self.taken,
                          self.upcard, self.dealer, self.turns, self.rules,
                          self._legal() if self.player == player else ())


@dataclass(slots=True)
class PlayerView:
    """One player's information: their hand, the pile, and what the opponent showed.

    Made afresh for every decision from copies (ints and tuples), so nothing a bot does to
    it reaches the hand; not frozen, because a frozen dataclass costs four times as much to
    make, and it is made at every decision.
    """

    player: int
    phase: str
    hand: int
    pile: tuple[int, ...]
    stock_left: int
    opponent_known: int      # cards the opponent took from the pile and still holds
    opponent_discards: int   # every card the opponent has discarded this hand
    own_discards: int
    limit: int
    multiplier: int
    taken: int
    upcard: int
    dealer: int
    turns: int
    rules: GinRules
    legal: tuple[int, ...]

    @property
    def top(self) -> int:
        return self.pile[-1] if self.pile else -1


def knock_layouts(solver: Solver, kept: int, limit: int) -> list[tuple[int, tuple[int, ...]]]:
    """Every arrangement of ``kept`` (the hand after the knock's discard) with deadwood of
    ``limit`` or less, as (deadwood, melds), least deadwood first, then as the solver meets
    them."""
    out = [(dw, melds) for dw, melds in solver.arrangements(kept) if dw <= limit]
    out.sort(key=lambda item: item[0])
    return out
