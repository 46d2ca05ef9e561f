"""UNO Flip Attack on the game-state contract (``base.GameState``).

A ``FlipAttackGameState`` is one whole game: hands dealt and played until a player reaches
``target_score``. Its engine is ``core``: the legal actions are ``rules.legal_moves``'
decisions (each play that leaves one card, and a stop that does, also offered with "UNO!"
called), encoded as ints; a decision is ``core.step_move``, a shot ``core.step_shot``. The
chance player is the launcher pressing its luck: every press due is a chance node whose
outcomes are the numbers of cards it may shoot, with the probabilities of the luck model
(``launchers.shot_outcomes``: the hazard at the dry streak, the shot sizes' weights), the
cards themselves the next ones in the cartridge. The deal and each reload's order are fixed
by the seed, not chance nodes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence

from launcher.core import config
from launcher.core.config import Luck
from launcher.games.base import CHANCE, TERMINAL, GameState, SeatView
from launcher.games.cards import Card, load_deck
from launcher.games.engine import NO_COLOUR
from launcher.games.flip_attack.bots import HeuristicBot, RandomBot
from launcher.games.flip_attack.core import (
    K_FLIP,
    M_CATCH,
    M_DISCARD,
    M_PASS,
    M_PLAY,
    M_PRESS,
    M_PRESS_LUCK,
    M_STOP_LUCK,
    PRESS_STEPS,
    SIDE_COLOURS,
    SIDE_NAMES,
    Core,
    Hooks,
    Move,
    compile_deck,
    step_move,
    step_shot,
)
from launcher.games.flip_attack.rules import (
    book_hand,
    deal,
    freeze,
    legal_moves,
    may_call_uno,
    recording,
    to_core,
)
from launcher.games.flip_attack.state import Effect, FlipLid, GameOptions
from launcher.games.flip_attack.table import FinishedHand
from launcher.games.launchers import shot_outcomes

MAX_HANDS = 1000  # as the table's: a game still short of the target after this many ends


def encode(move: Move) -> int:
    """A core decision as one int (``decode`` reads it back)."""
    what, card, colour, discard, uno = move
    return (((what * 1024 + card + 1) * 5 + colour + 1) * 5 + discard + 1) * 2 + uno


def decode(action: int) -> Move:
    action, uno = divmod(action, 2)
    action, discard = divmod(action, 5)
    action, colour = divmod(action, 5)
    what, card = divmod(action, 1024)
    return (what, card - 1, colour - 1, discard - 1, bool(uno))


class FlipAttackGameState(GameState):
    """A whole game of UNO Flip Attack; see the module docstring."""

    def __init__(self, options: GameOptions, players: int, seed: int,
                 deck: Sequence[Card] | None = None, luck: Luck | None = None,
                 first_dealer: int = 0) -> None:
        self.options = options
        self.n = players
        self.deck = tuple(deck) if deck is not None else load_deck()
        self._deck = compile_deck(self.deck)
        self.luck = luck if luck is not None else config.load().luck
        self.rng = random.Random(seed)
        self.history = []
        self.scores = [0] * players
        self.hands_played = 0
        self.dealer = first_dealer
        self.over = False
        self.side = 0  # the cartridge half at the back (0: Mild)
        self.streak = 0  # the launcher's dry presses since its last shot
        self.stack: list[int] = []  # the launcher's cards, the next to shoot last
        self.cycles = 0  # the lid cycles asked of the launcher
        self.winner: int | None = None
        self.finished: list[FinishedHand] = []  # the hands played, for the statistics
        self.observers: list[Callable[[Effect], None]] = []
        self._moves_now: list[Move] | None = None
        self._outcomes_now: list[tuple[int, float]] | None = None
        self.w = self._deal()

    def listen(self, observer: Callable[[Effect], None]) -> None:
        """Tell ``observer`` every effect from now on (presses, plays, catches, flips:
        ``state``'s effects), as a table tells its observers."""
        self.observers.append(observer)
        self.hooks = self._hooks(self.w)

    def _hooks(self, w: Core) -> Hooks:
        if not self.observers:
            return Hooks(self._flip, self._load, None, None, None, None, None)
        told = recording(w, self._tell)
        return Hooks(self._flip, self._load, told.pressed, told.played, told.caught,
                     told.luck_ended, told.over)

    def _tell(self, effect: Effect) -> None:
        for observe in self.observers:
            observe(effect)

    def _flip(self, side: int) -> None:
        self.side = side
        self.streak = 0  # a flip starts the new side's streak afresh
        self.cycles += 1
        if self.observers:
            self._tell(FlipLid(SIDE_NAMES[side]))

    def _load(self, pool: list[int], side: int) -> None:
        self.stack[:0] = pool[::-1]
        if self.side != side:  # "close and then open the lid to rotate the cartridge"
            self._flip(side)

    def _deal(self) -> Core:
        state, effects = deal(self.deck, self.n, self.dealer, self.options, self.rng)
        rest = [c for e in effects for c in getattr(e, "cards", ())]
        w = to_core(state, self._deck, rest)
        self.hooks = self._hooks(w)
        self.stack = []
        self._load([w.deck.index[c] for c in rest], 0)
        return w

    # -- the contract --

    def num_players(self) -> int:
        return self.n

    def current_player(self) -> int:
        if self.over:
            return TERMINAL
        step = self.w.agenda[0]
        return CHANCE if step.kind in PRESS_STEPS else step.player

    def is_terminal(self) -> bool:
        return self.over

    def is_chance_node(self) -> bool:
        return not self.over and self.w.agenda[0].kind in PRESS_STEPS

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self.is_chance_node():
            return []
        now = self._outcomes_now  # worked out once per press
        if now is None:
            now = self._outcomes_now = shot_outcomes(self.luck.side(SIDE_NAMES[self.side]),
                                                     self.streak, len(self.stack))
        return list(now)

    def legal_moves(self) -> list[Move]:
        """The engine's legal moves here (``rules.legal_moves``, which ``legal_actions``
        encodes), worked out once per position: what this package's bots are handed."""
        now = self._moves_now
        if now is None:
            now = self._moves_now = legal_moves(self.w) if self.current_player() >= 0 \
                else []
        return now

    def legal_actions(self) -> list[int]:
        return list(self._legal())

    def _legal(self) -> Sequence[int]:
        return _Legal(self.w, self.legal_moves())

    def _apply(self, action: int) -> None:
        w = self.w
        self._moves_now = self._outcomes_now = None  # the position changes below
        if w.agenda[0].kind in PRESS_STEPS:
            stack = self.stack
            if stack:
                self.streak = self.streak + 1 if action == 0 else 0
            step_shot(w, [stack.pop() for _ in range(action)], self.rng, self.hooks)
        else:
            step_move(w, decode(action), self.rng, self.hooks)
        if not w.over:
            return
        self.hands_played += 1
        points = w.hand_points()
        self.finished.append(FinishedHand(freeze(w), points))
        decided, self.winner = book_hand(self.scores, w.winner, points,
                                         self.options.target_score)
        if decided or self.hands_played >= MAX_HANDS:
            self.over = True
            return
        self.dealer = (self.dealer + 1) % self.n
        self.w = self._deal()

    def returns(self) -> list[float]:
        return [float(s) for s in self.scores]

    def clone(self) -> FlipAttackGameState:
        """(The clone tells no observer.)"""
        other = self._copy(scores=list(self.scores), w=self.w.copy(),
                           finished=list(self.finished), observers=[])
        other.hooks = other._hooks(other.w)
        return other

    def places(self) -> tuple[list[Sequence[int]], int, int]:
        w = self.w
        return [*w.hands, w.discard, w.held(), self.stack], len(self.deck), w.launcher_count

    def lid_cycles(self) -> int:
        return self.cycles

    def _face(self, card: int) -> str:
        return str(self.w.cards[card].face(SIDE_NAMES[self.w.side]))

    def action_to_string(self, action: int) -> str:
        if self.current_player() == CHANCE:
            step = self.w.agenda[0]
            if action == 0:
                return f"the launcher: a dry press (seat {step.player} pressed)"
            return (f"the launcher shoots {action} card" + ("" if action == 1 else "s")
                    + f" at seat {step.arg if step.arg >= 0 else step.player}")
        what, card, colour, discard, uno = decode(action)
        w = self.w
        call = " (UNO!)" if uno else ""
        if what == M_PLAY:
            text = f"play {self._face(card)}"
            if colour >= 0:
                flip = w.sides[w.side].behaviour[card] == K_FLIP  # the new side's colour
                names = SIDE_COLOURS[1 - w.side if flip else w.side]
                text += f", name {names[colour]}"
            if discard >= 0:
                text += f", discard every {SIDE_COLOURS[w.side][discard]}"
            return text + call
        if what == M_DISCARD:
            return f"discard {self._face(card)}"
        return {M_PRESS: "press the launcher", M_PRESS_LUCK: "press your luck again",
                M_STOP_LUCK: "stop pressing", M_CATCH: "catch them",
                M_PASS: "pass"}.get(what, "take the hit") + call

    def launcher_side(self) -> int:
        return self.side

    def view(self, seat: int) -> SeatView:
        w = self.w
        colour = "any" if w.colour == NO_COLOUR else SIDE_COLOURS[w.side][w.colour]
        top = "-" if w.top < 0 else self._face(w.top)
        lines = [f"UNO Flip Attack, hand {self.hands_played + 1}, side {SIDE_NAMES[w.side]};"
                 " scores " + " ".join(f"{q}:{s}" for q, s in enumerate(self.scores)),
                 f"top {top}, colour {colour}, the launcher holds {w.launcher_count} "
                 f"(dry presses {self.streak}), play goes "
                 + ("left" if w.direction == 1 else "right")]
        lines += [f"seat {q}: {len(w.hands[q])} cards" for q in range(self.n) if q != seat]
        if w.luck is not None:
            lines.append(f"seat {w.luck[0]} is pressing their luck, "
                         f"{len(w.luck[3])} discarded")
        if w.agenda:
            step = w.agenda[0]
            lines.append(f"now: seat {step.player}, {step.kind}")
        return SeatView(seat, tuple(map(self._face, w.hands[seat])), tuple(lines))


class _Legal(Sequence[int]):
    """A position's legal actions (``moves`` encoded, each that ``may_call_uno`` allows also
    with "UNO!" called), asked ``in`` without encoding them all: an action is legal when its
    move, uncalled, is one of ``moves``, and its call is allowed."""

    __slots__ = ("_all", "moves", "w")

    def __init__(self, w: Core, moves: list[Move]) -> None:
        self.w = w
        self.moves = moves
        self._all: list[int] | None = None

    def __contains__(self, action: object) -> bool:
        if not isinstance(action, int):
            return False
        move = decode(action)
        if not move[4]:
            return move in self.moves
        return (*move[:4], False) in self.moves and may_call_uno(self.w, move)

    def _list(self) -> list[int]:
        out = self._all
        if out is None:
            w = self.w
            out = self._all = []
            for m in self.moves:
                out.append(encode(m))
                if may_call_uno(w, m):
                    out.append(encode((*m[:4], True)))  # type: ignore[arg-type]
        return out

    def __getitem__(self, i: int) -> int:  # type: ignore[override]
        return self._list()[i]

    def __len__(self) -> int:
        return len(self._list())

    def __iter__(self) -> Iterator[int]:
        return iter(self._list())


class FlipAttackPlayer:
    """One of this package's bots (``flip_attack.bots``) at a contract's seat: handed the
    state's core and its legal moves (those ``legal_actions`` encodes), it chooses one, as
    at the table."""

    def __init__(self, bot: RandomBot | HeuristicBot) -> None:
        self.bot = bot

    def act(self, state: GameState) -> int:
        assert isinstance(state, FlipAttackGameState)
        w = state.w
        bot = self.bot
        if isinstance(bot, HeuristicBot):  # it has watched every press, as at the table
            bot.dry_streak = state.streak
        return encode(bot.decide(w, w.agenda[0].player, state.legal_moves()))
