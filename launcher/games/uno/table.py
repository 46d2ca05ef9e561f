"""The UNO-family table: plays hands and games with bots and a launcher, and checks them."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from launcher.games.base import (
    GameResult,
    HandsTable,
    LauncherFault,
    RuleViolation,
    check_places,
    trusted,
    where,
)
from launcher.games.launchers import Launcher, deal_profile
from launcher.games.uno.game import LOAD, Rules, UnoState
from launcher.games.uno.rules import (
    Choose,
    check_action,
    choose_dealer,
    deal,
    run,
    score_hand,
    shuffled_deck,
    start,
)


@dataclass
class HandResult:
    """What a finished hand leaves for the statistics."""

    winner: int | None
    points: int  # what the winner scores ("winner" scoring)
    charges: list[int]  # each player's own cards in points
    turns: int
    draws: int
    flips: int
    reloads: int
    caught: int
    challenges: int
    guilty: int
    side: int

    @classmethod
    def of(cls, state: UnoState) -> HandResult:
        """The finished hand ``state``'s result."""
        return cls(state.winner, state.points, state.charges(), state.turns, state.draws,
                   state.flips, state.reloads, state.caught, state.challenges, state.guilty,
                   state.side)


UnoGameResult = GameResult[HandResult]  # one game: hands played until it was decided


class UnoTable(HandsTable[HandResult]):
    """Plays hands and games of one game of the family with bots and a launcher.

    The launcher is the draw pile: ``use(game.profile)`` first (one card a press, and lid
    cycles for UNO Flip). ``check=True`` verifies after every step that each card is in
    exactly one place and that the launcher holds what the rules count: a debugging and
    testing aid, off by default because it costs more than the step itself.
    """

    def __init__(self, rules: Rules, launcher: Launcher, bots: Sequence[Any],
                 rng: random.Random, check: bool = False,
                 observers: Sequence[Callable[[tuple[Any, ...]], None]] = (),
                 deal_with_launcher: bool = False) -> None:
        if len(bots) < 2:
            raise ValueError("a table needs at least 2 bots")
        self.rules = rules
        self.launcher = launcher
        # Dealing with the launcher: the whole shuffled deck goes in, and each player takes
        # one press of ``deal N`` (N = hand size), starting left of the dealer.
        self.deal_with_launcher = deal_with_launcher
        if deal_with_launcher:
            launcher.use(deal_profile(rules.options.hand_size))
        launcher.use(rules.game.profile)
        self.bots = list(bots)
        self.rng = rng
        self.check = check
        self.observers = list(observers)
        self.state: UnoState | None = None
        self.checks = 0

    def play_game(self, first_dealer: int | None = None, max_hands: int = 1000) -> UnoGameResult:
        """Hands until the game is decided; the deal passes to the left. ``first_dealer``
        None: the players draw for it (highest card deals)."""
        if first_dealer is None:
            first_dealer, _ = choose_dealer(self.rules, self.players, self.rng)
        return self.hands_until_decided(first_dealer, max_hands)

    def book(self, scores: list[int], hand: HandResult) -> tuple[bool, int | None]:
        return score_hand(self.rules.options, scores, hand.winner, hand.points, hand.charges)

    def play_hand(self, dealer: int) -> HandResult:
        """Gather the cards, deal, and play the hand out."""
        self._collect()
        if self.deal_with_launcher:
            state = self._deal_by_launcher(dealer)
        else:
            state = deal(self.rules, self.players, dealer, self.rng)
        return self.play(state)

    def _deal_by_launcher(self, dealer: int) -> UnoState:
        """Load the shuffled deck, press ``deal N`` once per player, then turn the first card
        from what is left (``start``) and go on with the game's own profile."""
        rules, n, launcher = self.rules, self.players, self.launcher
        size = rules.options.hand_size
        launcher.load(shuffled_deck(rules, n, dealer, self.rng))
        launcher.use(deal_profile(size))
        hands: list[list[int]] = [[] for _ in range(n)]
        for k in range(1, n + 1):
            got = launcher.press()
            if len(got) != size:
                raise LauncherFault(f"a deal {size} press shot {len(got)} cards")
            hands[(dealer + k) % n] = list(got)
        launcher.use(rules.game.profile)
        return start(rules, hands, launcher.unload(), dealer, self.rng)

    def play(self, state: UnoState) -> HandResult:
        """Play on from ``state`` until the hand is over."""
        self.state = state
        if self.observers:
            state.log = []
        bots, rng = self.bots, self.rng
        press = self.launcher.press
        check = self.check
        self._carry(state)
        if not check and state.log is None and trusted(bots):
            # Bots of this package answer with one of the options they are shown, and nothing
            # listens: their answers go in unchecked.
            run(state, [b.choose for b in bots], press, rng, self._carry)
        else:
            run(state, [self._checked(b) for b in bots], press, rng, self._done)
        return HandResult.of(state)

    @staticmethod
    def _checked(bot: Any) -> Choose:
        """``bot``'s answers, each refused unless it is one of the options."""
        choose = bot.choose

        def checked(state: UnoState, player: int, options: Sequence[int]) -> int:
            return check_action(state, player, choose(state, player, options), options)

        return checked

    def _done(self, state: UnoState) -> None:
        """After every step of a checked or listened-to hand: the launcher, the checks, the
        listeners."""
        if state.todo:
            self._carry(state)
        if self.check:
            self.verify(state)
        if state.log:
            self._tell(state)

    def _tell(self, state: UnoState) -> None:
        assert state.log is not None
        for event in state.log:
            for bot in self.bots:
                bot.observe(event)
            for observer in self.observers:
                observer(event)
        state.log.clear()

    def _carry(self, state: UnoState) -> None:
        """Do to the launcher what the rules asked: load cards, cycle the lid."""
        if not state.todo:
            return
        launcher = self.launcher
        sides = self.rules.game.sides
        for item in state.todo:
            if item[0] == LOAD:
                launcher.load(item[1])
                if self.rules.game.profile.flips and launcher.side != sides[item[2]]:
                    launcher.flip()  # "the side in play faces the back"
                    if launcher.side != sides[item[2]]:
                        raise LauncherFault(f"cannot turn the cartridge to {sides[item[2]]}")
            else:
                got = launcher.flip()
                if got != sides[item[1]]:
                    raise LauncherFault(f"the lid cycle left {got} at the back, "
                                        f"not {sides[item[1]]}")
        state.todo.clear()
        if self.check:
            self.verify(state)

    def verify(self, state: UnoState) -> None:
        """Card conservation, and the launcher's count against the rules' count."""
        self.checks += 1
        inside = self.launcher.contents()
        check_places([*state.hands, state.discard, inside], self.rules.size, state.pile)
        if self.launcher.cards_left != state.pile:
            raise RuleViolation(f"the launcher holds {len(inside)} cards (says "
                                f"{self.launcher.cards_left}), the rules count {state.pile}")

    def _collect(self) -> None:
        """Gather every card for a new deal: hands, pile and what is left in the launcher."""
        back = self.launcher.unload()
        if self.state is not None and self.check:
            s = self.state
            back += [c for h in s.hands for c in h] + s.discard
            if any(where([back], self.rules.size)):
                raise RuleViolation("cards missing when gathering them for the next deal")
        self.state = None
