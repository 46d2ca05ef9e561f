"""Classic UNO, UNO Splash and UNO Flip: one fast rule engine on small-integer cards.

The three games share every rule but their decks, card values and a few defaults, so one
engine plays them all from a ``Game`` (what is printed and how it scores) and ``UnoOptions``
(the rules the texts disagree on or leave open; docs/games.md explains each). Classic UNO is
defined here; ``uno_splash`` and ``uno_flip`` define the other two.

Speed is the design: a card is an index into a ``CardTable``; a hand is a list of ints;
whether a card may be laid is one entry of a precomputed mask (a tuple of bools); the state
is mutated in place (``UnoState.copy`` gives an independent one for tests and search); an
action is an int. What happens next is a stack of ``(kind, player, arg)`` steps,
``state.agenda``, top last: a player's decision (``legal``/``act``) or a draw from the
launcher (``shot``). One function, ``run``, carries every step out, for the table's fast
loop, its checked loop and those step-at-a-time functions alike. The engine never touches the
launcher: what the shell must do to it (load the draw pile, cycle the lid) waits in
``state.todo``. Randomness (the deal, a reshuffle, Shuffle Hands) comes only from the
``random.Random`` passed in.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from launcher.games.base import LauncherFault, Options, RuleViolation, Seats, trusted, whole
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
from launcher.games.engine import NO_COLOUR, CardTable, shuffle
from launcher.games.launchers import DEALER, Launcher, Profile, deal_profile

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
_RETURNED_FIRST = frozenset({B_WILD_DRAW, B_SWAP, B_SHUFFLE, B_FLIP, B_SKIP_ALL})


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
_CHALLENGE_CHOICES = (CHALLENGE_IT, ACCEPT)
_CATCH_CHOICES = (CATCH_THEM, PASS)

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
        self.turn_steps = _steps(TURN, self.n)  # (TURN, p, 0) per player, made once
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


# --- dealing ---------------------------------------------------------------------------------


def choose_dealer(rules: Rules, players: int, rng: random.Random) -> tuple[int, list[list[int]]]:
    """Each player draws a card; the highest (points, or number with symbols as zero)
    deals. Tied players draw again. Returns the dealer and every round of draws."""
    cards = list(range(rules.size))
    shuffle(cards, rng)
    st = rules.table.sides[0]
    by_points = rules.options.dealer_by == "points"
    value = st.points if by_points else tuple(max(n, 0) for n in st.number)
    rounds: list[list[int]] = []
    who = list(range(players))
    while True:
        drawn = [cards.pop() for _ in who]
        rounds.append(drawn)
        best = max(value[c] for c in drawn)
        who = [p for p, c in zip(who, drawn, strict=True) if value[c] == best]
        if len(who) == 1 or len(cards) < len(who):
            return who[0], rounds


def deal(rules: Rules, players: int, dealer: int, rng: random.Random) -> UnoState:
    """Shuffle, deal one card at a time from the dealer's left, turn the first card (with its
    first-card rule), and leave the rest in ``todo`` to load into the launcher."""
    o = rules.options
    why = rules.cannot_deal(players)
    if why:
        raise RuleViolation(why)
    if not 0 <= dealer < players:
        raise RuleViolation(f"dealer {dealer} is not one of the {players} players")
    cards = list(rules.table.ids)
    shuffle(cards, rng)
    # One card at a time from the dealer's left: the k-th player left of the dealer gets
    # every players-th card from the (k-1)-th.
    dealt = players * o.hand_size
    hands: list[list[int]] = [[] for _ in range(players)]
    for k in range(1, players + 1):
        hands[(dealer + k) % players] = cards[k - 1:dealt:players]
    return start(rules, hands, cards[dealt:], dealer, rng)


def start(rules: Rules, hands: list[list[int]], rest: list[int], dealer: int,
          rng: random.Random) -> UnoState:
    """Turn the first card of ``rest`` (the undealt cards, top first) and apply its rule."""
    behaviour = rules.behaviour[0]
    n = len(hands)
    if not rest or (behaviour[rest[0]] in _RETURNED_FIRST and not any(
            behaviour[c] not in _RETURNED_FIRST for c in rest)):
        raise RuleViolation("no card left that can start the discard pile")
    while True:
        first = rest.pop(0)
        if behaviour[first] not in _RETURNED_FIRST:
            break
        rest.insert(rng.randrange(len(rest) + 1), first)  # back into the deck, anywhere
    b = behaviour[first]
    p0 = (dealer + 1) % n
    direction = 1
    agenda: list[tuple[int, int, int]] = []
    if b == B_SKIP:
        agenda = [(TURN, (dealer + 2) % n, 0)]
    elif b == B_REVERSE:
        direction = -1
        right = (dealer - 1) % n if rules.options.first_reverse == "right_of_dealer" else dealer
        agenda = [(TURN, right, 0)]
    elif b == B_DRAW:
        agenda = [(TURN, (dealer + 2) % n, 0), (DRAW, p0, rules.amount[0][first])]
    elif b == B_WILD:
        agenda = [(TURN, p0, 0), (COLOUR, p0, 0)]
    else:
        agenda = [(TURN, p0, 0)]
    state = UnoState(rules, hands, [first], dealer, agenda, len(rest), 0, direction=direction)
    state.todo.append((LOAD, rest, 0))
    return state


# --- the rules, played: what may be done, and what it does -------------------------------------
#
# ``run`` is the one implementation of the rules: from the agenda's top it works out what the
# player to move may do, asks ``choose`` (or presses the launcher), and carries the answer out,
# step after step, until the hand is over. Every way of playing goes through it: the table's
# trusted loop (this package's bots, unchecked), its checked loop (the same run, each answer
# checked against the options and every step verified), and the step-at-a-time interface
# (``legal``, ``act``, ``apply``, ``shot``: a run that stops at the next question).


class _Stop(Exception):  # control flow: a step-at-a-time run stops here
    """Raised by the stand-in ``choose`` or ``press`` of a step-at-a-time run when ``run``
    asks for more than the one step: the state is exactly as the step left it."""

    def __init__(self, options: Sequence[int] = ()) -> None:
        self.options = options


def _stop(*_: Any) -> Any:
    raise _Stop


def _ask(_state: UnoState, _player: int, options: Sequence[int]) -> int:
    raise _Stop(options)


def legal(state: UnoState) -> Sequence[int]:
    """Every legal action of the player to move (empty while a draw is due). Do not mutate."""
    if state.over or not state.agenda or state.agenda[-1][0] >= PRESS_STEPS:
        return ()
    try:
        run(state, [_ask] * state.n, _stop, _NO_RNG)
    except _Stop as asked:
        return asked.options
    raise AssertionError("run did not ask")  # pragma: no cover


def act(state: UnoState, action: int, rng: random.Random) -> None:
    """Apply the decision of the player to move; RuleViolation if it is not legal."""
    if state.over or not state.agenda:
        raise RuleViolation("the hand is over")
    _check(state, state.agenda[-1][1], action, legal(state))
    apply(state, action, rng)


def _check(state: UnoState, player: int, action: int, options: Sequence[int]) -> int:
    """``action`` if it is one of ``options`` (a card's UNO bit aside), else RuleViolation
    naming the move and the legal ones."""
    if (action & CARD_MASK if 0 <= action < CHOOSE else action) in options:
        return action
    kind = state.agenda[-1][0]
    raise RuleViolation(
        f"player {player} may not {describe(state.rules, action, state.side)} at this "
        f"{STEP_NAMES[kind]} step; legal: "
        + ", ".join(describe(state.rules, a, state.side) for a in options))


def apply(state: UnoState, action: int, rng: random.Random) -> None:
    """Apply an action already known to be legal (``act`` checks it against ``legal``)."""
    if state.over or not state.agenda or state.agenda[-1][0] >= PRESS_STEPS:
        raise RuleViolation("no decision is due")
    answers = [action]

    def answer(_state: UnoState, _player: int, _options: Sequence[int]) -> int:
        if not answers:
            raise _Stop
        return answers.pop()

    with contextlib.suppress(_Stop):
        run(state, [answer] * state.n, _stop, rng)


def shot(state: UnoState, cards: Sequence[int], rng: random.Random) -> None:
    """The card one press gave (none: the launcher is empty and nothing can be reloaded)."""
    if state.over or not state.agenda or state.agenda[-1][0] < PRESS_STEPS:
        raise RuleViolation("no draw was due")
    given = [cards]

    def press() -> Sequence[int]:
        if not given:
            raise _Stop
        return given.pop()

    with contextlib.suppress(_Stop):
        run(state, [_stop] * state.n, press, rng)


def _strict_ok(state: UnoState, hand: Sequence[int], card: int) -> bool:
    """The strict rule (``wild_draw = "strict"``): a Wild Draw only while ``hand`` holds no
    card of the colour in play."""
    return (state.rules.behaviour[state.side][card] != B_WILD_DRAW
            or not holds_colour(state, hand, state.colour, card))


def holds_colour(state: UnoState, hand: Sequence[int], colour: int, but: int = -1) -> bool:
    """Whether ``hand`` holds a card of ``colour`` on the side in play (``but`` aside): what
    makes a Wild Draw strict-illegal, or guilty when challenged."""
    col = state.tab.colour
    return any(col[c] == colour for c in hand if c != but)


Choose = Callable[[UnoState, int, Sequence[int]], int]


def run(state: UnoState, choose: Sequence[Choose], press: Callable[[], Sequence[int]],
        rng: random.Random, carry: Callable[[UnoState], None] | None = None,
        done: Callable[[UnoState], None] | None = None) -> None:
    """Play on from the agenda's top until the hand is over (see above).

    ``choose[p](state, p, options)`` answers player ``p``'s decisions with one of
    ``options`` (a card may carry the ``UNO`` bit); ``press()`` gives the cards of one press
    when a draw is due; ``carry(state)`` does ``state.todo`` to the launcher (None: it waits
    there for the caller); ``done(state)``, if given, is called after every step. A turn
    whose card only passes the turn on goes straight on to the next player's turn.
    """
    ag = state.agenda
    hands, discard = state.hands, state.discard  # changed in place only
    rules = state.rules
    strict = rules.strict
    max_turns = state.max_turns
    n = state.n
    turn_of = state.turn_steps
    record = None if state.log is None else state.log.append  # the events, for listeners
    draw_turn_of = _steps(DRAW_TURN, n)
    while not state.over:
        kind, p, arg = ag[-1]
        if COLOUR <= kind < PRESS_STEPS:  # a colour, a target, a challenge or a catch
            if kind == COLOUR:
                a = choose[p](state, p, rules.colour_choices)
                ag.pop()
                state.colour = a - CHOOSE
                if record:
                    record(("colour", p, a - CHOOSE))
            elif kind == CATCH:
                if choose[p](state, p, _CATCH_CHOICES) == CATCH_THEM:
                    while ag and ag[-1][0] == CATCH and ag[-1][2] == arg:
                        ag.pop()
                    state.caught += 1
                    if rules.options.uno_penalty:
                        ag.append((DRAW, arg, rules.options.uno_penalty))
                    if record:
                        record(("caught", arg, p))
                else:
                    ag.pop()
            elif kind == CHALLENGE:
                a = choose[p](state, p, _CHALLENGE_CHOICES)
                ag.pop()
                _challenge(state, p, a == CHALLENGE_IT)
            else:  # TARGET: Swap Hands
                t = choose[p](state, p, rules.targets[n][p]) - CHOOSE
                ag.pop()
                hands[p], hands[t] = hands[t], hands[p]
                if record:
                    record(("swap", p, t))
            if not state.pile or state.winner is not None or state.turns >= max_turns:
                _settle(state, rng)  # (it has nothing to do otherwise: the common case)
            if done:
                done(state)
        else:
            # Turns, draws and drawn cards, one step after another on the same side's
            # tables, until a step leaves another kind of decision, work for the launcher,
            # the end of the hand or a turned deck (a Flip).
            st = state.tab
            masks, stride, behaviour = st.masks, st.stride, st.behaviour
            colour_of, symbol_of = st.colour, st.symbol
            # The mask of the turn being played (a draw instead of a card reads it).
            m = masks[state.colour * stride + state.symbol]
            while True:
                if kind == TURN:
                    hand = hands[p]
                    m = masks[state.colour * stride + state.symbol]
                    out = []
                    for c in hand:  # a plain loop: a comprehension costs a call (3.11)
                        if m[c]:
                            out.append(c)
                    if strict and out:
                        out = [c for c in out if _strict_ok(state, hand, c)]
                    out.append(DRAW_CARD)  # drawing is always allowed
                    a = choose[p](state, p, out)
                    state.turns += 1
                    card = a & CARD_MASK
                    if a == DRAW_CARD:  # the draw is the next step
                        ag[-1] = draw_turn_of[p]
                        kind = DRAW_TURN
                        if not state.pile or state.turns >= max_turns:
                            _settle(state, rng)
                            kind = -1
                        if done:
                            done(state)
                if kind != TURN:  # a draw, the card just drawn, or the agenda's next step
                    if kind >= PRESS_STEPS:  # a draw: one card a press
                        cards = press()
                        if len(cards) != 1 or not state.pile:
                            if cards or state.pile:
                                raise LauncherFault(f"{len(cards)} cards for one draw, from a "
                                                    f"launcher holding {state.pile}")
                            # Nothing to draw, nor any discard to reshuffle: this draw (and
                            # the rest) lapses.
                            ag.pop()
                            if kind == DRAW_TURN:
                                ag.append(turn_of[(p + state.direction) % n])
                            kind = -1
                        else:
                            card = cards[0]
                            state.pile -= 1
                            state.draws += 1
                            hands[p].append(card)
                            if record:
                                record(("draw", p, card))
                            if kind == DRAW_TURN:  # a card that may be laid may be played now
                                if m[card] and (not strict or _strict_ok(state, hands[p], card)):
                                    ag[-1] = (DRAWN, p, card)
                                    kind, arg = DRAWN, card
                                else:
                                    p = (p + state.direction) % n
                                    ag[-1] = turn_of[p]
                                    kind = TURN
                            elif kind == DRAW:
                                if arg > 1:
                                    arg -= 1
                                    ag[-1] = (DRAW, p, arg)
                                else:
                                    ag.pop()
                                    kind = -1
                            elif colour_of[card] == state.colour:  # DRAW_UNTIL: it came
                                if arg:
                                    ag[-1] = (DRAW, p, arg)
                                    kind = DRAW
                                else:
                                    ag.pop()
                                    kind = -1
                        if not state.pile or state.winner is not None or \
                                state.turns >= max_turns:
                            _settle(state, rng)
                            kind = -1
                        if done:
                            done(state)
                    if kind == DRAWN:  # play the card just drawn, or keep it
                        hand = hands[p]
                        a = choose[p](state, p, [arg, KEEP])
                        if a == KEEP:
                            p = (p + state.direction) % n
                            ag[-1] = turn_of[p]
                            kind = TURN
                            if not state.pile or state.turns >= max_turns:
                                _settle(state, rng)
                                kind = -1
                            if done:
                                done(state)
                            continue
                        card = arg
                    elif kind >= 0:  # a turn, or more cards to draw
                        continue
                    else:  # on with the agenda's next step, if it is one of this loop's
                        if state.over or state.todo:
                            break
                        kind, p, arg = ag[-1]
                        if COLOUR <= kind < PRESS_STEPS:
                            break
                        if kind == DRAW_TURN:  # (a turn's draw reads the turn's mask)
                            m = masks[state.colour * stride + state.symbol]
                        continue
                # Lay the card.
                hand.remove(card)
                discard.append(card)
                colour = colour_of[card]
                if colour >= 0:
                    state.colour = colour
                state.symbol = symbol_of[card]
                if record:
                    record(("play", p, card, state.side))
                b = behaviour[card]
                d = state.direction
                if len(hand) > 1:
                    exposed = False
                elif hand:
                    exposed = not a & UNO  # one card left and no UNO called: catch them
                else:
                    ag.pop()
                    _goes_out(state, p, b, card, (p + d) % n)
                    _settle(state, rng)
                    if done:
                        done(state)
                    break
                if b == B_NUMBER:  # the common case first
                    q = (p + d) % n
                elif b == B_SKIP:
                    q = (p + 2 * d) % n
                elif b == B_REVERSE:
                    if n == 2:  # "Reverse acts as a Skip"
                        q = p
                    else:
                        state.direction = -d
                        q = (p - d) % n
                elif b == B_SKIP_ALL:
                    q = p
                elif b == B_DRAW:  # the next player draws and is skipped
                    ag[-1] = turn_of[(p + 2 * d) % n]
                    ag.append((DRAW, (p + d) % n, rules.amount[state.side][card]))
                    if exposed:
                        _expose(ag, p, n, d)
                    if not state.pile or state.turns >= max_turns:
                        _settle(state, rng)
                    if done:
                        done(state)
                    kind = -1
                    continue
                else:  # a Flip, a wild, a hand card: what follows, then p's choices
                    ag.pop()
                    # (A wild leaves the colour in play as it was: the one it was laid on.)
                    _play_wild(state, p, b, card, state.colour, exposed, rng)
                    if not state.pile or state.turns >= max_turns:
                        _settle(state, rng)
                    if done:
                        done(state)
                    break  # a Flip turns the deck over: the side's tables change
                ag[-1] = turn_of[q]  # the step taken gives way to q's turn
                if exposed or not state.pile or state.turns >= max_turns:
                    if exposed:
                        _expose(ag, p, n, d)
                    if not state.pile or state.turns >= max_turns:
                        _settle(state, rng)
                    kind = -1
                else:  # all that follows is q's turn
                    p, kind = q, TURN
                if done:
                    done(state)
        if state.todo and carry is not None:
            carry(state)


_NO_RNG = random.Random(0)  # ``legal``'s: a run that only asks draws nothing


def _play_wild(state: UnoState, p: int, b: int, card: int, in_play: int, expose: bool,
               rng: random.Random) -> None:
    """A Flip, a wild or a hand card laid (not the last), on the colour ``in_play``: what
    follows, then ``p``'s choices (pushed last: after any catch)."""
    rules, side, ag = state.rules, state.side, state.agenda
    n, d = state.n, state.direction
    nxt = (p + d) % n
    top: list[tuple[int, int, int]] = []  # decisions of this player, pushed last
    if b == B_FLIP:
        ag.append((TURN, nxt, 0))
        if _flip(state):
            top.append((COLOUR, p, 0))
    elif b == B_WILD:
        ag.append((TURN, nxt, 0))
        top.append((COLOUR, p, 0))
    elif b == B_WILD_DRAW:
        amount = rules.amount[side][card]
        guilty = holds_colour(state, state.hands[p], in_play)
        if rules.strict:
            ag.append((TURN, (p + 2 * d) % n, 0))
            ag.append(_draw_step(nxt, amount, 0))
        else:
            state.pending = (p, guilty, amount)
            ag.append((CHALLENGE, nxt, 0))
        top.append((COLOUR, p, 0))
    elif b == B_SWAP:
        ag.append((TURN, nxt, 0))
        top += [(TARGET, p, 0), (COLOUR, p, 0)]
        expose = False  # the one card goes to another player with the rest of the hand
    elif b == B_SHUFFLE:
        ag.append((TURN, nxt, 0))
        _shuffle_hands(state, nxt, rng)
        top.append((COLOUR, p, 0))
        expose = False
    if expose:
        _expose(ag, p, n, d)
    ag += top


def _expose(ag: list[tuple[int, int, int]], p: int, n: int, d: int) -> None:
    """``p`` has one card and did not call UNO: the others may catch them before the next
    turn begins, next player first."""
    for i in range(n - 1, 0, -1):
        ag.append((CATCH, (p + i * d) % n, p))


def _draw_step(player: int, amount: int, extra: int) -> tuple[int, int, int]:
    if amount == UNTIL_COLOUR:
        return (DRAW_UNTIL, player, extra)
    return (DRAW, player, amount + extra)


def _goes_out(state: UnoState, p: int, b: int, card: int, nxt: int) -> None:
    """``p`` laid their last card: the hand ends once any last draw is made."""
    state.winner = p
    ag = state.agenda
    ag.clear()
    if b == B_FLIP and state.rules.options.last_flip == "flip":
        _flip(state)  # everything flips, and the hand scores on the side it ended on
        return
    if not state.rules.options.last_card_draws:
        return
    amount = state.rules.amount[state.side][card]
    if b in (B_DRAW, B_WILD_DRAW):
        # No challenge: the hand is over; the draw only settles the score.
        ag.append(_draw_step(nxt, amount, 0))
        if amount == UNTIL_COLOUR:
            ag.append((COLOUR, p, 0))  # the colour to draw to must still be named


def _flip(state: UnoState) -> bool:
    """Turn everything over; True if the new top is a wild (its player names the colour)."""
    state.side ^= 1
    state.flips += 1
    state.discard.reverse()
    top = state.discard[-1]
    st = state.tab = state.rules.table.sides[state.side]
    state.symbol = st.symbol[top]
    wild = st.colour[top] < 0
    state.colour = NO_COLOUR if wild else st.colour[top]
    state.todo.append((FLIP_LID, state.side))
    if state.log is not None:
        state.log.append(("flip", state.side))
    return wild


def _shuffle_hands(state: UnoState, first: int, rng: random.Random) -> None:
    """Every hand together, shuffled, dealt out evenly from ``first``; the rest to the pile."""
    pool = [c for h in state.hands for c in h]
    shuffle(pool, rng)
    n = state.n
    each = len(pool) // n
    hands: list[list[int]] = [[] for _ in range(n)]
    for i in range(each * n):
        hands[(first + i * state.direction) % n].append(pool[i])
    state.hands[:] = hands
    rest = pool[each * n:]
    if rest:
        state.todo.append((LOAD, rest, state.side))  # under the draw pile
        state.pile += len(rest)
    if state.log is not None:
        state.log.append(("shuffle", first))


def _challenge(state: UnoState, v: int, challenged: bool) -> None:
    assert state.pending is not None
    p, guilty, amount = state.pending
    state.pending = None
    ag = state.agenda
    nxt = state.next_player(v)
    if not challenged:
        ag.append((TURN, nxt, 0))
        ag.append(_draw_step(v, amount, 0))
        return
    state.challenges += 1
    if state.log is not None:
        state.log.append(("challenge", v, p, guilty))
    if guilty:
        # The player who laid it draws instead; the challenger is not skipped.
        state.guilty += 1
        ag.append((TURN, v, 0))
        ag.append(_draw_step(p, amount, 0))
    else:
        ag.append((TURN, nxt, 0))
        ag.append(_draw_step(v, amount, 2))


@cache
def _steps(kind: int, n: int) -> tuple[tuple[int, int, int], ...]:
    """Every player's ``kind`` step (a TURN, a DRAW_TURN), made once: most steps push one."""
    return tuple((kind, p, 0) for p in range(n))


def _settle(state: UnoState, rng: random.Random) -> None:
    """After every step: end the hand when it is over; reshuffle into an empty launcher.
    Nothing to do (the common case) while no one has won, turns remain and the launcher
    holds cards."""
    if state.pile and state.winner is None and state.turns < state.max_turns:
        return
    if state.winner is not None:
        if not state.agenda:
            state.over = True
            charges = state.charges()
            state.points = sum(charges) - charges[state.winner]
            if state.log is not None:
                state.log.append(("over", state.winner, state.points))
            return
    elif state.turns >= state.rules.options.max_turns:
        state.over = True
        state.agenda.clear()
        if state.log is not None:
            state.log.append(("over", None, 0))
        return
    if state.pile == 0:
        _reshuffle(state, rng)


def _reshuffle(state: UnoState, rng: random.Random) -> None:
    keep = 1 if state.rules.options.reshuffle_keep_top else 0
    if len(state.discard) <= keep:
        return
    pool = state.discard[:len(state.discard) - keep]
    del state.discard[:len(pool)]
    shuffle(pool, rng)
    state.pile = len(pool)
    state.reloads += 1
    state.todo.append((LOAD, pool, state.side))
    if state.log is not None:
        state.log.append(("reload", len(pool)))


# --- the shell ---------------------------------------------------------------------------------


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


@dataclass
class UnoGameResult:
    """One game: hands played until it was decided."""

    scores: list[int]
    winner: int | None
    hands: list[HandResult] = field(default_factory=list)


class UnoTable:
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

    @property
    def players(self) -> int:
        return len(self.bots)

    def play_game(self, first_dealer: int | None = None, max_hands: int = 1000) -> UnoGameResult:
        """Hands until the game is decided; the deal passes to the left. ``first_dealer``
        None: the players draw for it (highest card deals)."""
        o = self.rules.options
        n = self.players
        if first_dealer is None:
            first_dealer, _ = choose_dealer(self.rules, n, self.rng)
        scores = [0] * n
        result = UnoGameResult(scores, None)
        dealer = first_dealer
        while True:
            if len(result.hands) >= max_hands:
                return result
            hand = self.play_hand(dealer)
            result.hands.append(hand)
            if o.single_round:
                result.winner = hand.winner
                if hand.winner is not None:
                    scores[hand.winner] += hand.points
                return result
            if o.scoring == "winner":
                if hand.winner is not None:
                    scores[hand.winner] += hand.points
                if max(scores) >= o.target_score:
                    result.winner = max(range(n), key=lambda q: scores[q])
                    return result
            else:
                for q in range(n):
                    scores[q] += hand.charges[q]
                if max(scores) >= o.target_score:
                    result.winner = min(range(n), key=lambda q: scores[q])
                    return result
            dealer = (dealer + 1) % n

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
        why = rules.cannot_deal(n)
        if why or not 0 <= dealer < n:
            raise RuleViolation(why or f"dealer {dealer} is not one of the {n} players")
        cards = list(rules.table.ids)
        shuffle(cards, self.rng)
        launcher.load(cards)
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
            run(state, [self._checked(b) for b in bots], press, rng, self._carry, self._done)
        return HandResult(state.winner, state.points, state.charges(), state.turns, state.draws,
                          state.flips, state.reloads, state.caught, state.challenges,
                          state.guilty, state.side)

    @staticmethod
    def _checked(bot: Any) -> Choose:
        """``bot``'s answers, each refused unless it is one of the options."""
        choose = bot.choose

        def checked(state: UnoState, player: int, options: Sequence[int]) -> int:
            return _check(state, player, choose(state, player, options), options)

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
        twice, lost = self.rules.table.where([*state.hands, state.discard, inside])
        if twice or lost:
            raise RuleViolation(f"cards not conserved: twice {twice[:5]}, lost {lost[:5]}")
        if len(inside) != state.pile or self.launcher.cards_left != state.pile:
            raise RuleViolation(f"the launcher holds {len(inside)} cards (says "
                                f"{self.launcher.cards_left}), the rules count {state.pile}")

    def _collect(self) -> None:
        """Gather every card for a new deal: hands, pile and what is left in the launcher."""
        back = self.launcher.unload()
        if self.state is not None and self.check:
            s = self.state
            back += [c for h in s.hands for c in h] + s.discard
            if sorted(back) != list(range(self.rules.size)):
                raise RuleViolation("cards missing when gathering them for the next deal")
        self.state = None


def with_options(game: Game, pairs: Mapping[str, Any]) -> Rules:
    """Rules for ``game`` with option changes; ``OptionError`` names a bad one."""
    return game.rules(game.options(**pairs))

