"""Classic UNO, UNO Splash and UNO Flip as data: the options, a game's deck and card values,
the rules compiled for the engine, the vocabulary of steps and actions, and a hand's state.

The three games share every rule but their decks, card values and a few defaults, so one
engine (``rules``) plays them all from a ``Game`` (what is printed and how it scores) and
``UnoOptions`` (the rules the texts disagree on or leave open; docs/games.md explains each).
Classic UNO is defined here; ``splash`` and ``flip`` define the other two.

Speed is the design: a card is an index into a ``CardTable``; a hand is a list of ints;
whether a card may be laid is one entry of a precomputed mask (a tuple of bools); the state
is mutated in place (``UnoState.copy`` gives an independent one for tests and search); an
action is an int. What happens next is a stack of ``(kind, player, arg)`` steps,
``state.agenda``, top last: a player's decision or a draw from the launcher.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from launcher.games.base import Options, Seats, whole
from launcher.games.cards import (
    CLASSIC,
    DRAW_FIVE,
    DRAW_ONE,
    DRAW_TWO,
    FLIP,
    NUMBER,
    REVERSE,
    SHUFFLE_HANDS,
    SKIP,
    SKIP_EVERYONE,
    SWAP_HANDS,
    WILD_CARD,
    WILD_DRAW_COLOUR,
    WILD_DRAW_FOUR,
    WILD_DRAW_TWO,
    Card,
    Face,
)
from launcher.games.engine import NO_COLOUR, CardTable
from launcher.games.launchers import DEALER, Profile

# --- options --------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnoOptions(Options):
    """Rules the texts disagree on or leave open; each game has its own defaults."""

    hand_size: int = whole(7)
    # Cards for not calling UNO: 4 in uno.txt, 2 in the UNO Splash and UNO Flip texts.
    uno_penalty: int = whole(4, at_least=0)
    # A Reverse turned first: the player to the dealer's right starts (uno.txt), or the
    # dealer starts and play goes right (UNO Flip's Reverse card text).
    first_reverse: Literal["right_of_dealer", "dealer"] = "right_of_dealer"
    # Wild Draw Four / Two / Color held with a card of the colour in play: "challenge" (it
    # may be played; the victim may challenge), or "strict" (the engine refuses it).
    wild_draw: Literal["challenge", "strict"] = "challenge"
    # Classic UNO's four blank cards: "remove" (108 cards), played as plain "wild"s, or
    # replaced by the "swap_hands" or "shuffle_hands" variant cards.
    blank_cards: Literal["remove", "wild", "swap_hands", "shuffle_hands"] = "remove"
    # Reshuffling the discard pile into a new draw pile: all but the top card (uno.txt) or
    # every card, the top one too (UNO Flip's last section); the colour in play stays.
    reshuffle_keep_top: bool = True
    # Going out on a Draw card: the next player still draws, and those cards score.
    last_card_draws: bool = True
    # "winner": the winner scores the others' cards, first to target_score wins.
    # "penalty": each player is charged their own cards; when one reaches target_score the
    # lowest total wins (every text's "Alternative Scoring").
    scoring: Literal["winner", "penalty"] = "winner"
    # UNO Splash: "you can play a single round where the first player to empty their hand wins".
    single_round: bool = False
    # UNO Flip: a Flip laid as the last card. "flip": everything flips before the hand is
    # scored ("When a Flip card is played, everything flips"; "score based on whichever side
    # the game ended on"); "no_flip": the hand ends first and the side before it scores.
    last_flip: Literal["flip", "no_flip"] = "flip"
    # Choosing the first dealer: highest "points" (uno.txt, and the classic section copied
    # into the UNO Flip text) or highest "number", symbols counting zero (UNO Flip's setup).
    dealer_by: Literal["points", "number"] = "points"
    # UNO Flip's Wild (either side): 40 (its scoring table and the Wild card's own text) or 50
    # ("Wild, Wild Draw Four — 50 points each" in the copied classic section).
    wild_points: Literal[40, 50] = 40
    target_score: int = whole(500)
    # Not a rule: a hand still going after this many turns ends with no winner.
    max_turns: int = whole(3000)

    def idle(self, name: str, seats: Seats) -> str | None:
        if name in ("target_score", "scoring") and self.single_round:
            return "a single round has no running score (single_round = true)"
        return None


# --- games ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Game:
    """One member of the family: its deck, card values, defaults and launcher needs."""

    name: str  # as on the command line
    title: str
    sides: tuple[str, ...]  # ("classic",), or the front and back of a double-sided deck
    points: tuple[Mapping[str, int], ...]  # per side: kind -> value (numbers: face value)
    build_deck: Callable[[UnoOptions], tuple[Card, ...]]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    # Options that make no sense for this game (refused by name).
    not_options: frozenset[str] = frozenset()
    profile: Profile = DEALER

    def options(self, **changes: Any) -> UnoOptions:
        """The game's defaults with ``changes`` laid over them; ``OptionError`` names a rule
        the game does not have (``not_options``) or a value the rule does not take."""
        return _defaults(self).changed(self.name, changes, self.rule_names)

    @property
    def rule_names(self) -> tuple[str, ...]:
        """The options this game has."""
        return tuple(n for n in UnoOptions.names() if n not in self.not_options)

    def rules(self, options: UnoOptions | None = None) -> Rules:
        return compile_rules(self, options if options is not None else self.options())


@cache
def _defaults(game: Game) -> UnoOptions:
    return UnoOptions(**game.defaults)


CLASSIC_POINTS = {SKIP: 20, REVERSE: 20, DRAW_TWO: 20, SWAP_HANDS: 40, SHUFFLE_HANDS: 40,
                  WILD_CARD: 50, WILD_DRAW_FOUR: 50}


def classic_deck(options: UnoOptions) -> tuple[Card, ...]:
    """uno.txt's deck: 76 numbers, 8 each of Skip, Reverse, Draw Two, 4 Wild, 4 Wild Draw
    Four (108), plus the 4 blank cards as ``blank_cards`` says."""
    faces: list[Face] = []
    for colour in ("red", "yellow", "green", "blue"):
        faces.append(Face(NUMBER, colour, 0))
        faces += [Face(NUMBER, colour, n) for n in range(1, 10) for _ in range(2)]
        faces += [Face(k, colour) for k in (SKIP, REVERSE, DRAW_TWO) for _ in range(2)]
    faces += [Face(WILD_CARD)] * 4 + [Face(WILD_DRAW_FOUR)] * 4
    blanks = {"remove": None, "wild": WILD_CARD, "swap_hands": SWAP_HANDS,
              "shuffle_hands": SHUFFLE_HANDS}[options.blank_cards]
    if blanks is not None:
        faces += [Face(blanks)] * 4
    return tuple(Card(i, f, f) for i, f in enumerate(faces))


CLASSIC_UNO = Game(
    name="uno", title="UNO", sides=(CLASSIC,), points=(CLASSIC_POINTS,),
    build_deck=classic_deck, defaults={"uno_penalty": 4, "first_reverse": "right_of_dealer"},
    not_options=frozenset({"last_flip", "wild_points"}),
)


# --- the compiled rules ----------------------------------------------------------------------

# What a face does (its behaviour code).
B_NUMBER, B_SKIP, B_REVERSE, B_DRAW, B_SKIP_ALL, B_FLIP = 0, 1, 2, 3, 4, 5
B_WILD, B_WILD_DRAW, B_SWAP, B_SHUFFLE = 6, 7, 8, 9
_BEHAVIOUR = {NUMBER: B_NUMBER, SKIP: B_SKIP, REVERSE: B_REVERSE, DRAW_ONE: B_DRAW,
              DRAW_TWO: B_DRAW, DRAW_FIVE: B_DRAW, SKIP_EVERYONE: B_SKIP_ALL, FLIP: B_FLIP,
              WILD_CARD: B_WILD, WILD_DRAW_TWO: B_WILD_DRAW, WILD_DRAW_FOUR: B_WILD_DRAW,
              WILD_DRAW_COLOUR: B_WILD_DRAW, SWAP_HANDS: B_SWAP, SHUFFLE_HANDS: B_SHUFFLE}
UNTIL_COLOUR = -1  # a Wild Draw Color's amount: draw until the chosen colour
_AMOUNT = {DRAW_ONE: 1, DRAW_TWO: 2, DRAW_FIVE: 5, WILD_DRAW_TWO: 2, WILD_DRAW_FOUR: 4,
           WILD_DRAW_COLOUR: UNTIL_COLOUR}
# Turned up to start the discard pile, these go back into the deck and another is turned
# (uno.txt and UNO Splash: Wild Draw Four; UNO Flip: Wild Draw Two; the rest: see docs).
RETURNED_FIRST = frozenset({B_WILD_DRAW, B_SWAP, B_SHUFFLE, B_FLIP, B_SKIP_ALL})


@dataclass(frozen=True, eq=False)
class Rules:
    """A game and its options compiled for the engine: the card table and per-side codes."""

    game: Game
    options: UnoOptions
    table: CardTable
    behaviour: tuple[tuple[int, ...], ...]  # [side][card]
    amount: tuple[tuple[int, ...], ...]  # [side][card]: cards a draw card gives
    colour_choices: tuple[int, ...]
    targets: tuple[tuple[tuple[int, ...], ...], ...]  # [players][player]: TARGET choices
    strict: bool

    @property
    def size(self) -> int:
        return self.table.size

    @property
    def deck(self) -> tuple[Card, ...]:
        return self.table.cards

    def cannot_deal(self, players: int) -> str | None:
        """Why the deck cannot be dealt to ``players`` (their hands and a first card), or
        None."""
        if players < 2:
            return f"{self.game.title} needs at least 2 players"
        if players * self.options.hand_size + 1 > self.size:
            return f"{self.size} cards cannot deal {self.options.hand_size} to {players}"
        return None

    def card(self, name: str, side: int = 0, skip: Sequence[int] = ()) -> int:
        """The first card whose face on ``side`` reads ``name`` (``"red 7"``), not in ``skip``."""
        for i in range(self.size):
            if i not in skip and self.table.name(i, side) == name:
                return i
        raise KeyError(f"no {name!r} card left on side {side}")


@cache
def compile_rules(game: Game, options: UnoOptions) -> Rules:
    """Build (once per game and options) the tables the engine reads."""
    cards = game.build_deck(options)
    points = game.points
    if "wild_points" not in game.not_options:
        points = tuple({**pts, WILD_CARD: options.wild_points} if WILD_CARD in pts else pts
                       for pts in points)
    table = CardTable(cards, game.sides, points).with_codes(_BEHAVIOUR)
    behaviour = tuple(s.behaviour for s in table.sides)
    amount = tuple(tuple(_AMOUNT.get(k, 0) for k in s.kind) for s in table.sides)
    targets = tuple(tuple(tuple(CHOOSE + t for t in range(n) if t != p) for p in range(n))
                    for n in range(12))
    return Rules(game, options, table, behaviour, amount, tuple(CHOOSE + k for k in range(4)),
                 targets, options.wild_draw == "strict")


# --- steps and actions ---------------------------------------------------------------------

# Decisions (below PRESS_STEPS) and draws from the launcher.
TURN = 0  # play a card or draw
DRAWN = 1  # arg = the card just drawn, which may be played: play it or keep it
COLOUR = 2  # name the colour (a wild, or a Flip that turned a wild face up)
TARGET = 3  # Swap Hands: whose hand to take
CHALLENGE = 4  # the victim of a Wild Draw card: challenge or accept
CATCH = 5  # arg = a player who did not call UNO: catch them or not
PRESS_STEPS = 8
DRAW = 8  # arg = cards still to draw
DRAW_TURN = 9  # the one card a player draws instead of playing
DRAW_UNTIL = 10  # draw until a card of the colour in play; arg = cards to draw after it
STEP_NAMES = {TURN: "turn", DRAWN: "drawn", COLOUR: "colour", TARGET: "target",
              CHALLENGE: "challenge", CATCH: "catch", DRAW: "draw", DRAW_TURN: "draw_turn",
              DRAW_UNTIL: "draw_until"}

# Actions are ints: a card number (optionally | UNO: "UNO!" called with it), a choice, or
# one of the words below.
UNO = 1 << 10
CARD_MASK = UNO - 1
CHOOSE = 2048  # CHOOSE + k: colour k (COLOUR step), or player k (TARGET step)
DRAW_CARD = -1  # draw instead of playing
KEEP = -2  # keep the card just drawn
CHALLENGE_IT = -3
ACCEPT = -4
CATCH_THEM = -5
PASS = -6
_WORDS = {DRAW_CARD: "draw", KEEP: "keep", CHALLENGE_IT: "challenge", ACCEPT: "accept",
          CATCH_THEM: "catch", PASS: "pass"}
CHALLENGE_CHOICES = (CHALLENGE_IT, ACCEPT)
CATCH_CHOICES = (CATCH_THEM, PASS)

# What the shell must do to the launcher (``state.todo``).
LOAD = "load"  # ("load", cards front first, side index)
FLIP_LID = "flip"  # ("flip", side index now in play)


def describe(rules: Rules, action: int, side: int = 0) -> str:
    """An action as text, for logs and error messages."""
    if action in _WORDS:
        return _WORDS[action]
    if action >= CHOOSE:
        return f"choose {action - CHOOSE}"
    text = f"play {rules.table.name(action & CARD_MASK, side)}"
    return text + " (UNO!)" if action & UNO else text


# --- state -------------------------------------------------------------------------------------


class UnoState:
    """One hand, mutated in place by ``act`` and ``shot``. ``side`` is 0 (front) or 1."""

    __slots__ = ("agenda", "caught", "challenges", "colour", "dealer", "direction", "discard",
                 "draws", "flips", "guilty", "hands", "log", "max_turns", "n", "over", "pending",
                 "pile", "points", "reloads", "rules", "side", "symbol", "tab", "todo",
                 "turn_steps", "turns", "winner")

    def __init__(self, rules: Rules, hands: list[list[int]], discard: list[int], dealer: int,
                 agenda: list[tuple[int, int, int]], pile: int, side: int = 0,
                 colour: int | None = None, direction: int = 1) -> None:
        self.rules = rules
        self.n = len(hands)
        self.hands = hands
        self.discard = discard  # bottom first
        self.dealer = dealer
        self.side = side
        top = discard[-1] if discard else None
        st = rules.table.sides[side]
        self.tab = st  # the side in play's lookup tables
        if colour is None:
            colour = NO_COLOUR if top is None or st.colour[top] < 0 else st.colour[top]
        self.colour = colour
        self.symbol = st.stride - 1 if top is None else st.symbol[top]
        self.max_turns = rules.options.max_turns
        self.turn_steps = player_steps(TURN, self.n)  # (TURN, p, 0) per player, made once
        self.direction = direction
        self.agenda = agenda  # top (next) last
        self.pile = pile  # cards in the launcher
        self.pending: tuple[int, bool, int] | None = None  # a Wild Draw: player, guilty, amount
        self.winner: int | None = None
        self.over = False
        self.points = 0  # what the winner scores (or the penalty charged, see ``charges``)
        self.turns = self.draws = self.flips = self.reloads = 0
        self.caught = self.challenges = self.guilty = 0
        self.todo: list[tuple[Any, ...]] = []
        self.log: list[tuple[Any, ...]] | None = None

    def copy(self) -> UnoState:
        """An independent copy (hands, piles and agenda copied; the rules shared)."""
        new = object.__new__(UnoState)
        for name in UnoState.__slots__:
            setattr(new, name, getattr(self, name))
        new.hands = [list(h) for h in self.hands]
        new.discard = list(self.discard)
        new.agenda = list(self.agenda)
        new.todo = list(self.todo)
        new.log = None if self.log is None else list(self.log)
        return new

    @property
    def step(self) -> tuple[int, int, int] | None:
        return self.agenda[-1] if self.agenda else None

    @property
    def to_move(self) -> int | None:
        return self.agenda[-1][1] if self.agenda else None

    @property
    def side_name(self) -> str:
        return self.rules.game.sides[self.side]

    def next_player(self, player: int, steps: int = 1) -> int:
        return (player + steps * self.direction) % self.n

    def hand_points(self, player: int) -> int:
        return sum(map(self.tab.points.__getitem__, self.hands[player]))

    def charges(self) -> list[int]:
        """Each player's own cards in points (the alternative scoring's charge)."""
        points = self.tab.points.__getitem__
        return [sum(map(points, hand)) for hand in self.hands]

    def names(self, cards: Sequence[int]) -> list[str]:
        return [self.rules.table.name(c, self.side) for c in cards]

    def __repr__(self) -> str:
        step = self.step
        what = "over" if step is None else f"{STEP_NAMES[step[0]]} p{step[1]} {step[2]}"
        return (f"<UnoState {self.rules.game.name} side {self.side} {what} top "
                f"{self.names(self.discard[-1:])} colour {self.colour} hands "
                f"{[len(h) for h in self.hands]} pile {self.pile}>")


@cache
def player_steps(kind: int, n: int) -> tuple[tuple[int, int, int], ...]:
    """Every player's ``kind`` step (a TURN, a DRAW_TURN), made once: most steps push one."""
    return tuple((kind, p, 0) for p in range(n))


def with_options(game: Game, pairs: Mapping[str, Any]) -> Rules:
    """Rules for ``game`` with option changes; ``OptionError`` names a bad one."""
    return game.rules(game.options(**pairs))

