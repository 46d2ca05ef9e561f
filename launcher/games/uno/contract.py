"""Classic UNO, UNO Splash and UNO Flip on the game-state contract (``base.GameState``).

A ``UnoGameState`` is one whole game: the players draw for the first dealer, hands are dealt
and played until ``score_hand`` says the game is decided. Its engine is ``rules``: the legal
actions are ``rules.legal``'s (each card play that ``rules.may_call_uno`` allows also offered
with "UNO!" called), a decision is ``rules.apply``, a draw is ``rules.shot``. The chance
player is the launcher as a dealer: a draw due is a chance node whose one outcome is one card
a press (none from an empty launcher that nothing can refill). The order of the draw pile is
fixed by the seed (the deal's and every reshuffle's ``random.Random``), so the deal and the
reshuffles are not chance nodes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from launcher.games.base import CHANCE, TERMINAL, GameState, RuleViolation, SeatView
from launcher.games.engine import NO_COLOUR
from launcher.games.uno.game import (
    CHOOSE,
    DRAWN,
    LOAD,
    PRESS_STEPS,
    STEP_NAMES,
    TARGET,
    TURN,
    UNO,
    Rules,
    UnoState,
    describe,
)
from launcher.games.uno.rules import (
    apply,
    choose_dealer,
    deal,
    legal,
    may_call_uno,
    score_hand,
    shot,
)
from launcher.games.uno.table import HandResult

MAX_HANDS = 1000  # as the table's: a game still undecided after this many hands ends


class UnoGameState(GameState):
    """A whole game of the UNO family; see the module docstring."""

    def __init__(self, rules: Rules, players: int, seed: int) -> None:
        why = rules.cannot_deal(players)
        if why:
            raise RuleViolation(why)
        self.rules = rules
        self.n = players
        self.rng = random.Random(seed)
        self.history = []
        self.scores = [0] * players
        self.hands_played = 0
        self.winner: int | None = None
        self.over = False
        self.dealer, _ = choose_dealer(rules, players, self.rng)
        self.stack: list[int] = []  # the launcher's cards, the next to shoot last
        self.cycles = 0  # the lid cycles asked of the launcher (UNO Flip's flips)
        self.finished: list[HandResult] = []  # the hands played, for the statistics
        self._options: Sequence[int] | None = None
        self._legal_now: Sequence[int] | None = None
        self.hand = self._deal()

    def _deal(self) -> UnoState:
        self.stack = []
        hand = deal(self.rules, self.n, self.dealer, self.rng)
        self._carry(hand)
        return hand

    def _carry(self, hand: UnoState) -> None:
        """The launcher's work the engine left (loads; a lid cycle keeps the order)."""
        for item in hand.todo:
            if item[0] == LOAD:
                self.stack[:0] = item[1][::-1]  # behind the cards already there
            else:
                self.cycles += 1
        hand.todo.clear()

    def _after(self) -> None:
        """After a step that left the launcher work, or ended the hand: the work carried, a
        hand over booked, and the next one dealt."""
        hand = self.hand
        if hand.todo:
            self._carry(hand)
        if not hand.over:
            return
        self.hands_played += 1
        self.finished.append(HandResult.of(hand))
        decided, self.winner = score_hand(self.rules.options, self.scores, hand.winner,
                                          hand.points, hand.charges())
        if decided or self.hands_played >= MAX_HANDS:
            self.over = True
            return
        self.dealer = (self.dealer + 1) % self.n
        self.hand = self._deal()

    # -- the contract --

    def num_players(self) -> int:
        return self.n

    def current_player(self) -> int:
        if self.over:
            return TERMINAL
        kind, p, _ = self.hand.agenda[-1]
        return CHANCE if kind >= PRESS_STEPS else p

    def is_terminal(self) -> bool:
        return self.over

    def is_chance_node(self) -> bool:
        return not self.over and self.hand.agenda[-1][0] >= PRESS_STEPS

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if self.over or self.hand.agenda[-1][0] < PRESS_STEPS:
            return []
        return [(1, 1.0)] if self.hand.pile else [(0, 1.0)]

    def legal_actions(self) -> list[int]:
        return list(self._legal())

    def _legal(self) -> Sequence[int]:
        """The legal actions (``options``, each card that leaves one card also with "UNO!"
        called), worked out once per position."""
        now = self._legal_now
        if now is not None:
            return now
        if self.over or self.hand.agenda[-1][0] >= PRESS_STEPS:
            now = ()
        else:
            hand = self.hand
            kind, p, _ = hand.agenda[-1]
            now = self.options()
            if kind in (TURN, DRAWN) and may_call_uno(hand, p):
                out = []
                for a in now:  # a card that leaves one: with "UNO!" called, or without
                    out.append(a)
                    if 0 <= a < CHOOSE:
                        out.append(a | UNO)
                now = out
        self._legal_now = now
        return now

    def options(self) -> Sequence[int]:
        """The engine's legal actions here (``rules.legal``: no "UNO!" forms), worked out
        once per position (a bot reads them, then ``apply_action`` checks its answer)."""
        now = self._options
        if now is None:
            now = self._options = legal(self.hand)
        return now

    def _apply(self, action: int) -> None:
        self._options = self._legal_now = None
        hand = self.hand
        if hand.agenda[-1][0] >= PRESS_STEPS:  # the launcher shoots ``action`` cards (0, 1)
            shot(hand, [self.stack.pop()] if action else [], self.rng)
        else:
            apply(hand, action, self.rng)
        if hand.todo or hand.over:
            self._after()

    def returns(self) -> list[float]:
        sign = -1.0 if self.rules.options.scoring == "penalty" else 1.0
        return [sign * s for s in self.scores]

    def clone(self) -> UnoGameState:
        return self._copy(scores=list(self.scores), hand=self.hand.copy(),
                          finished=list(self.finished))

    def places(self) -> tuple[list[Sequence[int]], int, int]:
        h = self.hand
        return [*h.hands, h.discard, self.stack], self.rules.size, h.pile

    def lid_cycles(self) -> int:
        return self.cycles

    def action_to_string(self, action: int) -> str:
        if self.current_player() == CHANCE:
            return (f"the launcher shoots {action} card" + ("" if action == 1 else "s")
                    + f" at seat {self.hand.agenda[-1][1]}")
        hand = self.hand
        if action >= CHOOSE and hand.agenda and hand.agenda[-1][0] != TARGET:  # a colour
            colours = self.rules.table.sides[hand.side].colours
            k = action - CHOOSE
            return f"name {colours[k]}" if 0 <= k < len(colours) else f"choose {k}"
        if action >= CHOOSE:
            return f"swap hands with seat {action - CHOOSE}"
        return describe(self.rules, action, hand.side)

    def launcher_side(self) -> int:
        return self.hand.side

    def view(self, seat: int) -> SeatView:
        hand = self.hand
        side = hand.side
        other = side ^ 1 if len(self.rules.game.sides) == 2 else None
        colours = self.rules.table.sides[side].colours
        colour = "any" if hand.colour == NO_COLOUR else colours[hand.colour]
        lines = [f"{self.rules.game.title}, hand {self.hands_played + 1}, "
                 f"side {self.rules.game.sides[side]}; scores "
                 + " ".join(f"{q}:{s}" for q, s in enumerate(self.scores)),
                 f"top {' '.join(hand.names(hand.discard[-1:]))}, colour {colour}, "
                 f"the launcher holds {hand.pile}, play goes "
                 + ("left" if hand.direction == 1 else "right")]
        for q in range(self.n):
            if q == seat:
                continue
            text = f"seat {q}: {len(hand.hands[q])} cards"
            if other is not None:  # the backs of a two-sided deck face the others
                text += " (" + ", ".join(self.rules.table.name(c, other)
                                         for c in hand.hands[q]) + ")"
            lines.append(text)
        if hand.agenda:
            kind, p, _ = hand.agenda[-1]
            lines.append(f"now: seat {p}, {STEP_NAMES[kind]}")
        return SeatView(seat, tuple(hand.names(hand.hands[seat])), tuple(lines))


class UnoPlayer:
    """One of this package's bots (``uno.bots``) at a contract's seat: it chooses from the
    engine's legal actions (``rules.legal``), "UNO!" called as the contract offers it."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot

    def act(self, state: GameState) -> int:
        assert isinstance(state, UnoGameState)
        hand = state.hand
        return self.bot.choose(hand, hand.agenda[-1][1], state.options())
