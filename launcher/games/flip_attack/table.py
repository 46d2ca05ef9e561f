"""The UNO Flip Attack table: bots, a launcher, and a check of every card after every step.

``FlipAttackTable`` plays hands and games on one ``Core`` stepped in place; this package's bots
(``trusted``) are handed the core and its legal moves (``rules.legal_moves``) and choose one;
any other bot is asked with a ``rules.View`` and the legal actions.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from launcher.games import base
from launcher.games.base import LauncherFault, RuleViolation, check_places, trusted, where
from launcher.games.cards import Card, load_deck
from launcher.games.flip_attack.core import (
    PRESS_STEPS,
    SIDE_NAMES,
    Core,
    Hooks,
    Move,
    compile_deck,
    step_move,
    step_shot,
)
from launcher.games.flip_attack.rules import (
    View,
    as_action,
    book_hand,
    deal,
    freeze,
    legal_moves,
    recording,
    to_core,
    to_move,
)
from launcher.games.flip_attack.state import (
    Action,
    Effect,
    FlipLid,
    GameOptions,
    HandState,
    Load,
)

if TYPE_CHECKING:
    from launcher.games.launchers import Launcher



class Bot(Protocol):
    """A player: picks one of the legal actions, and may watch everything that happens."""

    name: str

    def choose(self, state: HandState, player: int, legal: Sequence[Action]) -> Action: ...
    def observe(self, effect: Effect) -> None: ...


GameResult = base.GameResult["FinishedHand"]  # one game: hands played to ``target_score``


class FlipAttackTable(base.HandsTable["FinishedHand"]):
    """Plays hands and games with bots and a launcher; checks every step.

    After every action and every shot it checks (unless ``check=False``) that each card
    of the deck is in exactly one place (a hand, the discard pile, a Wild Press Your Luck
    run, or the launcher) and that the launcher holds as many cards as the rules think it
    does.
    """

    def __init__(self, launcher: Launcher, bots: Sequence[Bot], rng: random.Random,
                 options: GameOptions | None = None, deck: Sequence[Card] | None = None,
                 observers: Sequence[Callable[[Effect], None]] = (), check: bool = True) -> None:
        if len(bots) < 2:
            raise ValueError("a table needs at least 2 bots")
        self.launcher = launcher
        self.bots = list(bots)
        self.rng = rng
        self.options = options or GameOptions()
        self.deck = tuple(deck) if deck is not None else load_deck()
        self.ids = frozenset(c.id for c in self.deck)
        self._pos = {c.id: i for i, c in enumerate(self.deck)}  # a card's place in the deck
        if len(self.ids) != len(self.deck):
            raise ValueError("card ids in the deck are not unique")
        self._deck = compile_deck(self.deck)
        self.observers = list(observers)
        self._hand: Core | None = None
        self._bound: tuple[Core | None, list[Callable[[Effect], None]]] = (None, [])
        self._fast_bots: bool | None = None  # the last hand's bots decided on the core
        self.checks = 0
        # The conservation check after every step costs about as much as the step: on for
        # tests and ``simulate --check``, off for long simulations and benchmarks.
        self.check_steps = check

    def play_game(self, first_dealer: int = 0, max_hands: int = 1000) -> GameResult:
        """Hands until a player reaches ``target_score``; the deal passes to the left."""
        return self.hands_until_decided(first_dealer, max_hands)

    def book(self, scores: list[int], hand: FinishedHand) -> tuple[bool, int | None]:
        return book_hand(scores, hand.winner, hand.points_won, self.options.target_score)

    def play_hand(self, dealer: int) -> FinishedHand:
        """Gather the cards, deal, and play the hand out."""
        self._collect()
        state, effects = deal(self.deck, self.players, dealer, self.options, self.rng)
        return self.play(state, effects)

    @property
    def state(self) -> HandState | None:
        """The hand as it stands (a snapshot; the table steps its own copy in place)."""
        return None if self._hand is None else freeze(self._hand)

    def play(self, state: HandState, effects: Sequence[Effect] = ()) -> FinishedHand:
        """Play on from ``state`` (after carrying out ``effects``) until the hand is over.

        The hand is stepped in place on the core (one ``Core`` made from ``state``,
        which is not changed). This package's bots choose on the core itself among its legal
        moves (``decide``); any other bot is asked ``choose`` with a ``View`` of it and the
        legal actions.
        """
        w = self._hand = to_core(state, self._deck, self.launcher.contents())
        # ``trusted`` on the bot's own class: a subclass may decide otherwise.
        fast = self._fast_bots = trusted(self.bots)
        self._apply(w, list(effects))
        launcher, rng = self.launcher, self.rng
        hooks = self._hooks(w, fast)
        decide = [b.decide for b in self.bots] if fast else None  # type: ignore[attr-defined]
        view = View(w)
        shoot, move, legal = step_shot, step_move, legal_moves  # locals: the fastest names
        index = w.deck.index.__getitem__
        check = self.check if self.check_steps else None
        while not w.over:
            step = w.agenda[0]
            if step.kind in PRESS_STEPS:
                got = launcher.press()
                if len(got) > w.launcher_count:
                    raise LauncherFault(f"{len(got)} cards shot from a launcher holding "
                                        f"{w.launcher_count}")
                shoot(w, list(map(index, got)) if got else got, rng, hooks)
            elif decide is not None:
                move(w, decide[step.player](w, step.player, legal(w)), rng, hooks)
            else:
                move(w, self._ask(w, view, step.player), rng, hooks)
            if check is not None:
                check(w)
        return FinishedHand(freeze(w), w.hand_points())

    def _ask(self, w: Core, view: View, player: int) -> Move:
        """A bot that is not this package's decides from the legal actions."""
        moves = legal_moves(w)
        actions = [as_action(w, m) for m in moves]
        action = self.bots[player].choose(view, player, actions)
        for a, m in zip(actions, moves, strict=True):
            if a is action:
                return m  # offered by the rules: legal as made
        return to_move(w, action)

    def _hooks(self, w: Core, fast: bool) -> Hooks:
        """What the core's steps do at this table: the launcher flips and reloads, and
        every effect goes to the listeners. This package's bots count the dry streak on
        the core (``watchers``) and hear only loads and flips; without observers, the
        other effects are not made at all."""
        launcher, observers, cards = self.launcher, self.observers, w.cards
        names = SIDE_NAMES
        watchers = [b for b in self.bots if hasattr(b, "dry_streak")] if fast else []
        listeners = observers if fast else self._listeners

        def tell(e: Effect) -> None:
            for listen in listeners:
                listen(e)

        def flip(side: int) -> None:
            got = launcher.flip()
            if got != names[side]:
                raise LauncherFault(f"the lid cycle left {got} at the back, not {names[side]}")
            for b in watchers:
                b.dry_streak = 0
            if listeners:
                tell(FlipLid(got))

        def load(pool: list[int], side: int) -> None:
            self._apply(w, [Load(tuple(cards[c] for c in pool), names[side], "reload")],
                        check=False)

        if not listeners:
            return Hooks(flip, load, None, None, None, None, None, watchers)
        told = recording(w, tell)
        return Hooks(flip, load, told.pressed, told.played, told.caught,
                          told.luck_ended, told.over, watchers)

    def _apply(self, state: HandState | Core, effects: list[Effect],
               check: bool = True) -> None:
        launcher = self.launcher
        for e in effects:
            if isinstance(e, Load):
                launcher.load(list(e.cards))
                # "If it is not [the side in play at the back], close and open the lid."
                for _ in range(2):
                    if launcher.side == e.side:
                        break
                    self._tell(FlipLid(launcher.flip()))
                if launcher.side != e.side:
                    raise LauncherFault(f"cannot turn the cartridge to {e.side}")
            elif isinstance(e, FlipLid):
                got = launcher.flip()
                if got != e.side:
                    raise LauncherFault(f"the lid cycle left {got} at the back, not {e.side}")
            self._tell(e)
        if check and self.check_steps:
            self.check(state)

    def _tell(self, e: Effect) -> None:
        for listen in self._listeners:
            listen(e)

    @property
    def _listeners(self) -> list[Callable[[Effect], None]]:
        # The bots' ``observe`` and the observers, bound once per hand.
        hand = self._hand
        if hand is not None and self._bound[0] is hand:
            return self._bound[1]
        listeners = [b.observe for b in self.bots] + list(self.observers)
        self._bound = (hand, listeners)
        return listeners

    def check(self, state: HandState | Core) -> None:
        """Card conservation, and the launcher's count against the rules' count."""
        self.checks += 1
        if isinstance(state, Core):  # cards are indexes into the deck
            ids = [c for h in state.hands for c in h]
            ids += state.discard
            ids += state.held()
            if not state.deck.plain:
                of = state.deck.ids
                ids = [of[c] for c in ids]
        else:
            ids = [c.id for h in state.hands for c in h]
            ids += [c.id for c in state.discard]
            ids += [c.id for c in state.held]
        inside = self.launcher.contents()
        pos = self._pos
        check_places([[pos.get(i, -1) for i in ids], [pos.get(c.id, -1) for c in inside]],
                     len(self.deck), state.launcher_count)
        if self.launcher.cards_left != len(inside):
            raise RuleViolation(f"the launcher holds {len(inside)} cards "
                                f"(says {self.launcher.cards_left}), the rules count "
                                f"{state.launcher_count}")

    def _collect(self) -> None:
        """Gather every card for a new deal: hands, pile and what is left in the launcher."""
        back = self.launcher.unload()
        w = self._hand
        if w is not None:
            card = w.cards.__getitem__
            for h in w.hands:
                back += map(card, h)
            back += map(card, w.discard)
            back += map(card, w.held())
            pos = self._pos
            if any(where([[pos.get(c.id, -1) for c in back]], len(self.deck))):
                raise RuleViolation("cards missing when gathering them for the next deal")
        self._hand = None


@dataclass(frozen=True)
class FinishedHand:
    """The last state of a hand and the points its winner scored."""

    state: HandState
    points_won: int

    @property
    def winner(self) -> int | None:
        return self.state.winner
