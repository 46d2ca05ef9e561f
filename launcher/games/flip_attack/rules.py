"""UNO Flip Attack rules: a pure, seeded interface (actions and shots in, new state out).

The engine never touches the launcher. A hand is a ``HandState`` whose ``agenda`` says
what happens next: a player's decision (``act``) or a press of the launcher, whose
cards come back through ``shot``. Both return the new state and the effects the shell
must carry out on the launcher (``Load``, ``FlipLid``) or may show (the rest). ``Table``
is that shell: it asks bots, presses the launcher, and checks after every step that no
card was made or lost.

The rules themselves are ``core``'s, on small integers; this module reads its objects
into the core and back (``as_core``, ``View``, ``as_action``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Literal, Protocol

from launcher.games.base import LauncherFault, Options, RuleViolation, Seats, trusted, whole
from launcher.games.cards import (
    COLOURS,
    MILD,
    NUMBER,
    WILD,
    WILD_CARD,
    Card,
    Face,
    load_deck,
)
from launcher.games.draws import shuffle_as_random
from launcher.games.engine import NO_COLOUR
from launcher.games.flip_attack import core
from launcher.games.flip_attack.core import (
    CATCH,
    HIT,
    K_FLIP,
    K_WDA,
    LUCK,
    LUCK_DISCARD,
    M_CATCH,
    M_DISCARD,
    M_PASS,
    M_PLAY,
    M_PRESS,
    M_PRESS_LUCK,
    M_STOP_LUCK,
    M_TAKE_HIT,
    PRESS_MOVE,
    PRESS_STEPS,
    SIDE_COLOURS,
    SIDE_NAMES,
    TURN,
    Core,
    Move,
    Step,
    variant,
)

if TYPE_CHECKING:
    from launcher.games.launchers import Launcher


# --- options: every point the rule text leaves open ----------------------------------


@dataclass(frozen=True)
class GameOptions(Options):
    """House rules for what the rule text leaves open; docs/games.md explains each one."""

    hand_size: int = whole(7)
    # Two players: "skip" (a Reverse gives its player another turn, as in UNO Flip's
    # two-player rules) or "reverse" (the direction turns, which changes nothing).
    two_player_reverse: Literal["skip", "reverse"] = "skip"
    # An action card turned to start the discard pile is ignored: "cover" leaves it
    # under the next card turned, "return" puts it back among the cards to be loaded.
    first_card_action: Literal["cover", "return"] = "cover"
    # A Wild turned first: "ignore" (the rule text lists Wild among the action cards) or
    # "play" (it stays; the first player may lay any card, as in UNO Flip).
    first_card_wild: Literal["ignore", "play"] = "ignore"
    # What each Wild Press Your Luck discard must be: "any" card, a card of the "colour"
    # chosen with the Wild Press Your Luck, or a card that "match"es the pile as it grows.
    pyl_discard: Literal["any", "colour", "match"] = "any"
    # When a Wild Press Your Luck run shoots, the card itself stays played (False) or goes
    # back into the hand with the discards (True).
    pyl_card_returns: bool = False
    # A player hit by a Hit 2x (Hit 5x) may pass it on, adding their own Hit 2x (Hit 5x).
    stack_hits: bool = False
    uno_penalty_presses: int = whole(2, at_least=0)
    # Going out on a Hit 2x / Hit 5x / Wild All-Out Attack: the presses still happen and
    # the cards they shoot are scored.
    last_card_penalties: bool = True
    # Wild All-Out Attack: "everybody takes one turn pressing", the attacker included.
    attack_includes_attacker: bool = True
    # A Flip that turns a wild face to the top of the pile: the player who flipped picks
    # the colour ("flipper_chooses"), or any card may follow ("open").
    flip_wild_top: Literal["flipper_chooses", "open"] = "flipper_chooses"
    # A reload leaves the top card on the pile (True), or takes the whole pile and players
    # keep matching the face that was on top (False).
    reload_keep_top: bool = True
    # Not a rule: a hand still going after this many turns ends with no winner.
    max_turns: int = whole(2000)
    target_score: int = whole(500)

    def idle(self, name: str, seats: Seats) -> str | None:
        if name == "two_player_reverse" and seats.players != 2:
            return f"it only acts with 2 players, not {seats.players}"
        return None


# --- the agenda (what happens next: ``Step``, ``TURN``...) lives in ``core``, shared ---


# --- actions ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Play:
    """Lay a card. ``colour``: a wild's colour, or the new side's colour after a Flip that
    turns a wild face up; ``discard_colour``: the colour a Wild Discard All clears."""

    card: Card
    colour: str | None = None
    discard_colour: str | None = None
    uno: bool = False


@dataclass(frozen=True, slots=True)
class Press:
    """Press the launcher instead of playing (allowed even with a playable card)."""


@dataclass(frozen=True, slots=True)
class PressLuck:
    """Wild Press Your Luck: press once more."""


@dataclass(frozen=True, slots=True)
class StopLuck:
    """Wild Press Your Luck: stop; the card goes on top of the discards."""

    uno: bool = False


@dataclass(frozen=True, slots=True)
class Discard:
    """Wild Press Your Luck: the card given up for a press that shot nothing."""

    card: Card


@dataclass(frozen=True, slots=True)
class Catch:
    """Catch the player who did not call UNO."""


@dataclass(frozen=True, slots=True)
class Pass:
    """Do not catch."""


@dataclass(frozen=True, slots=True)
class TakeHit:
    """(stack_hits) Take the presses instead of passing them on."""


Action = Play | Press | PressLuck | StopLuck | Discard | Catch | Pass | TakeHit
_PRESS = Press()

# --- effects ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Load:
    """Put these cards into the empty launcher, ``side`` facing the back (front first)."""

    cards: tuple[Card, ...]
    side: str
    reason: str  # "deal" or "reload"


@dataclass(frozen=True, slots=True)
class FlipLid:
    """Cycle the lid: the cartridge must turn so that ``side`` faces the back."""

    side: str


@dataclass(frozen=True, slots=True)
class Played:
    """A card was laid (with ``discarded`` more under a Discard All)."""

    player: int
    card: Card
    side: str
    discarded: int = 0  # cards a Discard All took with it


@dataclass(frozen=True, slots=True)
class Pressed:
    """One press of the launcher and what it shot (the cards went to ``recipient``)."""

    player: int
    recipient: int
    cards: tuple[Card, ...]
    side: str
    why: str
    empty: bool = False  # the launcher held no card (the firmware draws no luck then)


@dataclass(frozen=True, slots=True)
class Caught:
    """``player`` was caught without UNO by ``by``."""

    player: int
    by: int


@dataclass(frozen=True, slots=True)
class LuckEnded:
    """A Wild Press Your Luck run is over: stopped, or ``busted`` by a shot."""

    player: int
    discarded: int
    busted: bool


@dataclass(frozen=True, slots=True)
class HandOver:
    """The hand is over; ``points`` is what the winner scores."""

    winner: int | None  # None: stopped at max_turns
    side: str
    points: int


Effect = Load | FlipLid | Played | Pressed | Caught | LuckEnded | HandOver


# --- state --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LuckRun:
    """A Wild Press Your Luck in progress: the card and the discards are held aside."""

    player: int
    card: Card
    colour: str
    discards: tuple[Card, ...] = ()


@dataclass(frozen=True, slots=True)
class HandState:
    """One hand, between two steps. Hands hold cards; which face shows depends on ``side``."""

    options: GameOptions
    players: int
    dealer: int
    side: str
    hands: tuple[tuple[Card, ...], ...]
    discard: tuple[Card, ...]  # bottom first
    top: Face | None  # the face to match (normally the top card's face on this side)
    colour: str | None  # the colour in play; None: any card may follow
    direction: int  # +1 clockwise (to the left), -1 counterclockwise
    agenda: tuple[Step, ...]
    launcher_count: int
    luck: LuckRun | None = None
    winner: int | None = None
    over: bool = False
    turns: int = 0
    presses: int = 0
    flips: int = 0
    reloads: int = 0

    @property
    def step(self) -> Step | None:
        return self.agenda[0] if self.agenda else None

    @property
    def awaiting_press(self) -> bool:
        return bool(self.agenda) and self.agenda[0].kind in PRESS_STEPS

    @property
    def held(self) -> tuple[Card, ...]:
        """Cards in flight: a Wild Press Your Luck and the discards under it."""
        if self.luck is None:
            return ()
        return (self.luck.card, *self.luck.discards)

    def next_player(self, player: int, steps: int = 1) -> int:
        return (player + steps * self.direction) % self.players

    def visible(self, player: int) -> list[Face]:
        """The faces ``player`` sees in their hand."""
        return [c.face(self.side) for c in self.hands[player]]


def hand_points(state: HandState) -> int:
    """What the winner of a finished hand scores: the other hands, on the side in play."""
    return as_core(state).hand_points()


# --- dealing -----------------------------------------------------------------------


def deal(deck: Sequence[Card], players: int, dealer: int, options: GameOptions,
         rng: random.Random) -> tuple[HandState, list[Effect]]:
    """Shuffle, deal, turn the first discard, and load the rest (Mild facing the back)."""
    why = cannot_deal(len(deck), players, options)
    if why:
        raise RuleViolation(why)
    cards = list(deck)
    core.deck_holding(cards)  # compiled once, all of it: the launcher's cards come back later
    shuffle_as_random(cards, rng)
    hands: list[list[Card]] = [[] for _ in range(players)]
    i = 0
    for _ in range(options.hand_size):
        for k in range(1, players + 1):  # one at a time, starting left of the dealer
            hands[(dealer + k) % players].append(cards[i])
            i += 1
    rest = cards[i:]
    discard: list[Card] = []
    colour: str | None
    while True:
        if not any(_starts_pile(c.mild, options) for c in rest):
            raise RuleViolation("no card left that can start the discard pile")
        card = rest.pop(0)
        face = card.mild
        if _starts_pile(face, options):
            discard.append(card)
            colour = face.colour  # None for a Wild: the first player may lay anything
            break
        if options.first_card_action == "cover":
            discard.append(card)
        else:
            rest.insert(rng.randrange(len(rest) + 1), card)
    state = HandState(
        options=options, players=players, dealer=dealer, side=MILD,
        hands=tuple(tuple(h) for h in hands), discard=tuple(discard), top=discard[-1].mild,
        colour=colour, direction=1, agenda=(Step(TURN, (dealer + 1) % players),),
        launcher_count=len(rest),
    )
    return state, [Load(tuple(rest), MILD, "deal")]


def cannot_deal(cards: int, players: int, options: GameOptions) -> str | None:
    """Why a deck of ``cards`` cannot be dealt to ``players`` (their hands, the first discard
    and a card to draw), or None."""
    if players < 2:
        return "UNO Flip Attack needs at least 2 players"
    if players * options.hand_size + 2 > cards:
        return f"{cards} cards cannot deal {options.hand_size} to {players}"
    return None


def _starts_pile(face: Face, options: GameOptions) -> bool:
    return not face.is_action or (face.kind == WILD_CARD and options.first_card_wild == "play")


# --- the pure interface, over the core ---------------------------------------------
#
# The rules live once, in ``core`` (integers, stepped in place). ``act``, ``shot`` and
# ``legal_actions`` read a HandState into a ``core.Core``, step it, and read it back; a
# ``Table`` keeps one Core for the whole hand and shows other bots a ``View`` of it.


def as_core(state: HandState | View, extra: Sequence[Card] = ()) -> Core:
    """The core's hand for ``state``, to read, not to step (a View's own core; a
    HandState's, kept for the next call on the same state: a HandState never changes).

    ``extra``: cards that are not in the state but may join it (the cards of a shot)."""
    if isinstance(state, View):
        return state.core
    last = _LAST[0]
    if last is not None and last[0] is state:
        index = last[1].deck.index
        if all(map(index.__contains__, extra)):
            return last[1]
    w = _to_core(state, None, extra)
    _LAST[0] = (state, w)
    return w


# The last HandState read into a core (a bot's ``choose``, then ``legal_actions`` and
# ``act`` on the same state read it once).
_LAST: list[tuple[HandState, Core] | None] = [None]


def _to_core(state: HandState, deck: core.Deck | None, extra: Sequence[Card]) -> Core:
    cards = [c for h in state.hands for c in h]
    cards += state.discard
    cards += state.held
    cards += extra
    if deck is None or not all(map(deck.index.__contains__, cards)):
        deck = core.deck_holding(cards)
    side = 1 if state.side == WILD else 0
    top = state.top
    if top is None:
        return Core(deck, state, -1)
    pile = state.discard
    if pile and pile[-1].face(state.side) == top:
        return Core(deck, state, deck.index[pile[-1]])
    found = deck.find(side, top)
    if found < 0:  # no card shows the face to match: a card that does, in no place
        blank = Face(NUMBER, COLOURS[SIDE_NAMES[1 - side]][0], 1)
        stand_in = Card(-1, *((top, blank) if side == 0 else (blank, top)))
        deck = core.compile_deck((*deck.cards, stand_in))
        found = len(deck.cards) - 1
    return Core(deck, state, found)


def _freeze(w: Core, hands: tuple[tuple[Card, ...], ...] | None = None,
            discard: tuple[Card, ...] | None = None) -> HandState:
    """The core's hand as a HandState (cards as objects again; ``hands`` and ``discard``
    when the caller has them already)."""
    v = View(w)
    return HandState(
        options=w.options, players=w.players, dealer=w.dealer, side=v.side,
        hands=v.hands if hands is None else hands,
        discard=v.discard if discard is None else discard, top=v.top, colour=v.colour,
        direction=w.direction,
        agenda=tuple(w.agenda), launcher_count=w.launcher_count, luck=v.luck,
        winner=w.winner, over=w.over, turns=w.turns, presses=w.presses, flips=w.flips,
        reloads=w.reloads)


class View:
    """A ``Core`` read as a HandState, live: what a ``Table`` shows bots that are not this
    package's. It changes as the table steps the hand; ``Table.state`` is a snapshot."""

    __slots__ = ("core",)

    def __init__(self, w: Core) -> None:
        self.core = w

    options = property(attrgetter("core.options"))
    players = property(attrgetter("core.players"))
    dealer = property(attrgetter("core.dealer"))
    direction = property(attrgetter("core.direction"))
    launcher_count = property(attrgetter("core.launcher_count"))
    winner = property(attrgetter("core.winner"))
    over = property(attrgetter("core.over"))
    turns = property(attrgetter("core.turns"))
    presses = property(attrgetter("core.presses"))
    flips = property(attrgetter("core.flips"))
    reloads = property(attrgetter("core.reloads"))

    @property
    def side(self) -> str:
        return SIDE_NAMES[self.core.side]

    @property
    def hands(self) -> tuple[tuple[Card, ...], ...]:
        card = self.core.cards.__getitem__
        return tuple(tuple(map(card, h)) for h in self.core.hands)

    @property
    def discard(self) -> tuple[Card, ...]:
        return tuple(map(self.core.cards.__getitem__, self.core.discard))

    @property
    def top(self) -> Face | None:
        w = self.core
        return None if w.top < 0 else w.cards[w.top].face(SIDE_NAMES[w.side])

    @property
    def colour(self) -> str | None:
        w = self.core
        return None if w.colour == NO_COLOUR else SIDE_COLOURS[w.side][w.colour]

    @property
    def agenda(self) -> tuple[Step, ...]:
        return tuple(self.core.agenda)

    @property
    def luck(self) -> LuckRun | None:
        w = self.core
        if w.luck is None:
            return None
        p, card, col, discards = w.luck
        return LuckRun(p, w.cards[card], SIDE_COLOURS[w.side][col],
                       tuple(w.cards[c] for c in discards))

    step = HandState.step
    awaiting_press = HandState.awaiting_press
    held = HandState.held
    visible = HandState.visible
    next_player = HandState.next_player


# --- what may be done --------------------------------------------------------------

_PRESS_LUCK: Move = (M_PRESS_LUCK, -1, -1, -1, False)
_STOP_LUCK: Move = (M_STOP_LUCK, -1, -1, -1, False)


def legal_actions(state: HandState | View) -> list[Action]:
    """Every legal action for the player to move (empty while a press is awaited)."""
    return _legal(as_core(state))[0]


def _legal(w: Core) -> tuple[list[Action], list[Move]]:
    """The legal actions and, side by side, the core's decisions they stand for."""
    if not w.agenda or w.over:
        return [], []
    step = w.agenda[0]
    p, kind = step.player, step.kind
    hand = w.hands[p]
    cards = w.cards
    if kind == TURN:
        actions: list[Action] = [_PRESS]
        moves: list[Move] = [PRESS_MOVE]
        mask = w.mask
        for c in hand:
            if mask[c]:
                a, m = _plays(w, c)
                actions += a
                moves += m
        return actions, moves
    if kind == LUCK:
        if any(w.luck_can_discard(c) for c in hand):
            return [PressLuck(), StopLuck()], [_PRESS_LUCK, _STOP_LUCK]
        return [StopLuck()], [_STOP_LUCK]
    if kind == LUCK_DISCARD:
        can = [c for c in hand if w.luck_can_discard(c)]
        return [Discard(cards[c]) for c in can], [(M_DISCARD, c, -1, -1, False) for c in can]
    if kind == CATCH:
        return [Catch(), Pass()], [(M_CATCH, -1, -1, -1, False), (M_PASS, -1, -1, -1, False)]
    if kind == HIT:
        b = w.sides[w.side].behaviour
        same = [c for c in hand if b[c] == b[w.top]]
        return ([TakeHit(), *(Play(cards[c]) for c in same)],
                [(M_TAKE_HIT, -1, -1, -1, False), *((M_PLAY, c, -1, -1, False) for c in same)])
    return [], []


def _plays(w: Core, c: int) -> tuple[list[Action], list[Move]]:
    """A playable card's plays (one per colour it may name), made once per deck: a Play is
    immutable."""
    flip_colour = w.sides[w.side].behaviour[c] == K_FLIP and w.flip_needs_colour(c)
    key = (c, w.side, flip_colour)
    made = w.deck.plays.get(key)
    if made is None:
        card = w.cards[c]
        n = w.variants(c)
        names = SIDE_COLOURS[1 - w.side] if flip_colour else SIDE_COLOURS[w.side]
        moves = [variant(w, c, v) for v in range(n)]
        actions: list[Action] = [
            Play(card, None if m[2] < 0 else names[m[2]],
                 None if m[3] < 0 else SIDE_COLOURS[w.side][m[3]]) for m in moves]
        made = w.deck.plays[key] = (actions, moves)
    return made


def as_action(w: Core, move: Move) -> Action:
    """The action a core decision stands for."""
    what = move[0]
    if what == M_PRESS:
        return _PRESS
    if what == M_PLAY:
        c = move[1]
        names = SIDE_COLOURS[w.side]
        flip = w.sides[w.side].behaviour[c] == K_FLIP
        colour = None if move[2] < 0 else SIDE_COLOURS[1 - w.side if flip else w.side][move[2]]
        return Play(w.cards[c], colour, None if move[3] < 0 else names[move[3]], move[4])
    if what == M_STOP_LUCK:
        return StopLuck(move[4])
    if what == M_DISCARD:
        return Discard(w.cards[move[1]])
    return _SIMPLE[what]


_SIMPLE: dict[int, Action] = {M_PRESS_LUCK: PressLuck(), M_CATCH: Catch(), M_PASS: Pass(),
                              M_TAKE_HIT: TakeHit()}


def _to_move(w: Core, a: Action) -> Move:
    """The core's decision for ``a``; raises RuleViolation if the rules forbid it now."""
    if not w.agenda or w.over:
        raise RuleViolation("the hand is over")
    step = w.agenda[0]
    p, kind = step.player, step.kind
    if kind == TURN:
        if isinstance(a, Press):
            return PRESS_MOVE
        if isinstance(a, Play):
            return _play_move(w, p, a)
        raise RuleViolation(f"player {p} must play or press, not {a}")
    if kind == LUCK:
        if isinstance(a, PressLuck):
            if not any(w.luck_can_discard(c) for c in w.hands[p]):
                raise RuleViolation("no card to discard for another press: stop")
            return _PRESS_LUCK
        if isinstance(a, StopLuck):
            return (M_STOP_LUCK, -1, -1, -1, a.uno)
        raise RuleViolation(f"player {p} is pressing their luck: press or stop, not {a}")
    if kind == LUCK_DISCARD:
        if not isinstance(a, Discard):
            raise RuleViolation(f"player {p} must discard a card for that press")
        c = _held_card(w, p, a.card)
        if not w.luck_can_discard(c):
            raise RuleViolation(f"{a.card.face(SIDE_NAMES[w.side])} may not be discarded "
                                f"(pyl_discard = {w.options.pyl_discard})")
        return (M_DISCARD, c, -1, -1, False)
    if kind == CATCH:
        if isinstance(a, Catch):
            return (M_CATCH, -1, -1, -1, False)
        if isinstance(a, Pass):
            return (M_PASS, -1, -1, -1, False)
        raise RuleViolation(f"player {p} may catch player {step.arg} or pass, not {a}")
    if kind == HIT:
        if isinstance(a, TakeHit):
            return (M_TAKE_HIT, -1, -1, -1, False)
        if isinstance(a, Play):
            b = w.sides[w.side].behaviour
            if b[_held_card(w, p, a.card)] != b[w.top]:
                top = w.cards[w.top].face(SIDE_NAMES[w.side]).kind
                raise RuleViolation(f"only a {top} passes a {top} on")
            return _play_move(w, p, a)
        raise RuleViolation(f"player {p} must take the hit or pass it on, not {a}")
    raise RuleViolation(f"waiting for player {p} to press the launcher, not {a}")


def _held_card(w: Core, p: int, card: Card) -> int:
    c = w.deck.index.get(card, -1)
    if c < 0 or c not in w.hands[p]:
        raise RuleViolation(f"player {p} does not hold {card}")
    return c


def _play_move(w: Core, p: int, a: Play) -> Move:
    c = _held_card(w, p, a.card)
    side = SIDE_NAMES[w.side]
    st = w.sides[w.side]
    face = a.card.face(side)
    if not w.mask[c]:
        top = None if w.top < 0 else w.cards[w.top].face(side)
        colour = None if w.colour == NO_COLOUR else SIDE_COLOURS[w.side][w.colour]
        raise RuleViolation(f"{face} cannot be played on {top} (colour {colour})")
    colours = SIDE_COLOURS[w.side]
    if st.wild[c]:
        if a.colour not in colours:
            raise RuleViolation(f"{face} needs a colour out of {', '.join(colours)}")
        if (st.behaviour[c] == K_WDA) != (a.discard_colour is not None):
            raise RuleViolation("only a Wild Discard All names a colour to discard")
        if a.discard_colour is not None and a.discard_colour not in colours:
            raise RuleViolation(f"{a.discard_colour} is not a {side} colour")
        discard = -1 if a.discard_colour is None else colours.index(a.discard_colour)
        return (M_PLAY, c, colours.index(a.colour), discard, a.uno)
    if a.discard_colour is not None:
        raise RuleViolation("only a Wild Discard All names a colour to discard")
    if st.behaviour[c] == K_FLIP and w.flip_needs_colour(c):
        turned = SIDE_COLOURS[1 - w.side]
        if a.colour not in turned:
            raise RuleViolation("the Flip turns a wild face up: name the new colour")
        return (M_PLAY, c, turned.index(a.colour), -1, a.uno)
    if a.colour is not None:
        raise RuleViolation(f"{face} does not take a colour")
    return (M_PLAY, c, -1, -1, a.uno)


# --- actions and shots in ----------------------------------------------------------


def act(state: HandState | View, action: Action,
        rng: random.Random) -> tuple[HandState, list[Effect]]:
    """Apply the decision of the player to move; raises RuleViolation if it is not legal."""
    before = as_core(state)
    move = _to_move(before, action)  # every check before any change
    w = before.copy()
    out: list[Effect] = []
    core.step_move(w, move, rng, _recording(w, out.append))
    return _stepped(state, before, w), out


def shot(state: HandState | View, cards: Sequence[Card],
         rng: random.Random) -> tuple[HandState, list[Effect]]:
    """The cards one press shot (maybe none), for the press the agenda was waiting on."""
    w = as_core(state, cards)
    if not w.agenda or w.agenda[0].kind not in PRESS_STEPS:
        raise RuleViolation("no press was due")
    if len(cards) > w.launcher_count:
        raise LauncherFault(f"{len(cards)} cards shot from a launcher holding "
                            f"{w.launcher_count}")
    before = w
    if not all(c in w.deck.index for c in cards):  # a View's deck may lack them
        before = _to_core(_freeze(w), None, cards)
    w = before.copy()
    out: list[Effect] = []
    index = w.deck.index
    core.step_shot(w, [index[c] for c in cards], rng, _recording(w, out.append))
    return _stepped(state, before, w), out


def _stepped(state: HandState | View, before: Core, w: Core) -> HandState:
    """The next state: ``w`` (``before`` stepped) frozen, reusing what ``state`` holds of
    it (a hand or pile unchanged, or only grown); kept for ``as_core``, as the next call
    usually reads it."""
    if isinstance(state, HandState) and w.deck is before.deck:
        cards = w.cards
        hands = tuple(_objects(cards, h, b, old) for h, b, old in
                      zip(w.hands, before.hands, state.hands, strict=True))
        new = _freeze(w, hands, _objects(cards, w.discard, before.discard, state.discard))
    else:
        new = _freeze(w)
    _LAST[0] = (new, w)
    return new


def _objects(cards: tuple[Card, ...], now: list[int], was: list[int],
             objects: tuple[Card, ...]) -> tuple[Card, ...]:
    """``now`` as cards, given that ``was`` was ``objects``."""
    n = len(was)
    if len(now) >= n and now[:n] == was:
        return objects + tuple(cards[c] for c in now[n:]) if len(now) > n else objects
    return tuple(cards[c] for c in now)


def _recording(w: Core, emit: Callable[[Effect], None]) -> core.Hooks:
    """Hooks that hand each of the core's effects to ``emit`` as an effect object."""
    cards = w.cards
    names = SIDE_NAMES
    return core.Hooks(
        flip=lambda side: emit(FlipLid(names[side])),
        load=lambda pool, side: emit(Load(tuple(cards[c] for c in pool), names[side],
                                          "reload")),
        pressed=lambda player, recipient, got, side, why, empty: emit(
            Pressed(player, recipient, tuple(cards[c] for c in got), names[side], why, empty)),
        played=lambda player, card, side, gone: emit(
            Played(player, cards[card], names[side], gone)),
        caught=lambda player, by: emit(Caught(player, by)),
        luck_ended=lambda player, gone, busted: emit(LuckEnded(player, gone, busted)),
        over=lambda winner, side, points: emit(HandOver(winner, names[side], points)))


# --- the shell: bots, a launcher, and the checks -------------------------------------


class Bot(Protocol):
    """A player: picks one of the legal actions, and may watch everything that happens."""

    name: str

    def choose(self, state: HandState, player: int, legal: Sequence[Action]) -> Action: ...
    def observe(self, effect: Effect) -> None: ...


@dataclass
class GameResult:
    """One game: hands played to ``target_score``."""

    scores: list[int]
    winner: int | None
    hands: list[FinishedHand] = field(default_factory=list)




class Table:
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
        if len(self.ids) != len(self.deck):
            raise ValueError("card ids in the deck are not unique")
        self._deck = core.compile_deck(self.deck)
        self.observers = list(observers)
        self._hand: Core | None = None
        self._bound: tuple[Core | None, list[Callable[[Effect], None]]] = (None, [])
        self._fast_bots: bool | None = None  # the last hand's bots decided on the core
        self.checks = 0
        # The conservation check after every step costs about as much as the step: on for
        # tests and ``simulate --check``, off for long simulations and benchmarks.
        self.check_steps = check

    @property
    def players(self) -> int:
        return len(self.bots)

    def play_game(self, first_dealer: int = 0, max_hands: int = 1000) -> GameResult:
        """Hands until a player reaches ``target_score``; the deal passes to the left.

        A game still short of the target after ``max_hands`` hands (only possible when
        hands keep hitting ``max_turns``) ends with no winner.
        """
        scores = [0] * self.players
        result = GameResult(scores, None)
        dealer = first_dealer
        while max(scores) < self.options.target_score:
            if len(result.hands) >= max_hands:
                return result
            end = self.play_hand(dealer)
            result.hands.append(end)
            if end.winner is not None:
                scores[end.winner] += end.points_won
            dealer = (dealer + 1) % self.players
        result.winner = max(range(self.players), key=lambda q: scores[q])
        return result

    def play_hand(self, dealer: int) -> FinishedHand:
        """Gather the cards, deal, and play the hand out."""
        self._collect()
        state, effects = deal(self.deck, self.players, dealer, self.options, self.rng)
        return self.play(state, effects)

    @property
    def state(self) -> HandState | None:
        """The hand as it stands (a snapshot; the table steps its own copy in place)."""
        return None if self._hand is None else _freeze(self._hand)

    def play(self, state: HandState, effects: Sequence[Effect] = ()) -> FinishedHand:
        """Play on from ``state`` (after carrying out ``effects``) until the hand is over.

        The hand is stepped in place on the core (one ``core.Core`` made from ``state``,
        which is not changed). This package's bots decide on the core itself (``decide``);
        any other bot is asked ``choose`` with a ``View`` of it and the legal actions.
        """
        w = self._hand = _to_core(state, self._deck, self.launcher.contents())
        # ``trusted`` on the bot's own class: a subclass may decide otherwise.
        fast = self._fast_bots = trusted(self.bots)
        self._apply(w, list(effects))
        launcher, rng = self.launcher, self.rng
        hooks = self._hooks(w, fast)
        decide = [b.decide for b in self.bots] if fast else None  # type: ignore[attr-defined]
        view = View(w)
        step_shot, step_move = core.step_shot, core.step_move
        index = w.deck.index.__getitem__
        check = self.check if self.check_steps else None
        while not w.over:
            step = w.agenda[0]
            if step.kind in PRESS_STEPS:
                got = launcher.press()
                if len(got) > w.launcher_count:
                    raise LauncherFault(f"{len(got)} cards shot from a launcher holding "
                                        f"{w.launcher_count}")
                step_shot(w, list(map(index, got)) if got else got, rng, hooks)
            elif decide is not None:
                step_move(w, decide[step.player](w, step.player), rng, hooks)
            else:
                step_move(w, self._ask(w, view, step.player), rng, hooks)
            if check is not None:
                check(w)
        return FinishedHand(_freeze(w), w.hand_points())

    def _ask(self, w: Core, view: View, player: int) -> Move:
        """A bot that is not this package's decides from the legal actions."""
        actions, moves = _legal(w)
        action = self.bots[player].choose(view, player, actions)
        for a, m in zip(actions, moves, strict=True):
            if a is action:
                return m  # offered by the rules: legal as made
        return _to_move(w, action)

    def _hooks(self, w: Core, fast: bool) -> core.Hooks:
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
            return core.Hooks(flip, load, None, None, None, None, None, watchers)
        told = _recording(w, tell)
        return core.Hooks(flip, load, told.pressed, told.played, told.caught,
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
        ids += [c.id for c in inside]
        if len(ids) != len(self.ids) or set(ids) != self.ids:
            seen: dict[int, int] = {}
            for i in ids:
                seen[i] = seen.get(i, 0) + 1
            twice = sorted(i for i, k in seen.items() if k > 1)
            lost = sorted(self.ids - set(ids))
            raise RuleViolation(f"cards not conserved: {len(ids)} of {len(self.ids)}; "
                                f"twice {twice[:5]}, lost {lost[:5]}")
        if len(inside) != state.launcher_count or self.launcher.cards_left != len(inside):
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
            if len(back) != len(self.ids) or set(map(_card_id, back)) != self.ids:
                raise RuleViolation("cards missing when gathering them for the next deal")
        self._hand = None


_card_id = attrgetter("id")


@dataclass(frozen=True)
class FinishedHand:
    """The last state of a hand and the points its winner scored."""

    state: HandState
    points_won: int

    @property
    def winner(self) -> int | None:
        return self.state.winner
