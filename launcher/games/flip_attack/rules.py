"""UNO Flip Attack rules: a pure, seeded engine (actions and shots in, new state out).

The engine never touches the launcher. A hand is a ``HandState`` whose ``agenda`` says
what happens next: a player's decision (``act``) or a press of the launcher, whose
cards come back through ``shot``. Both return the new state and the effects the shell
must carry out on the launcher (``Load``, ``FlipLid``) or may show (the rest). ``Table``
is that shell: it asks bots, presses the launcher, and checks after every step that no
card was made or lost.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Literal, Protocol

from launcher.core.errors import LauncherError
from launcher.games.cards import (
    BACK_SIDES,
    COLOURS,
    DISCARD_ALL,
    FLIP,
    HIT_PRESSES,
    MILD,
    REVERSE,
    SKIP,
    SKIP_EVERYONE,
    WILD_ALL_OUT_ATTACK,
    WILD_CARD,
    WILD_DISCARD_ALL,
    WILD_PRESS_YOUR_LUCK,
    Card,
    Face,
    load_deck,
    other_side,
)
from launcher.games.engine import NO_COLOUR
from launcher.games.flip_attack import core
from launcher.games.flip_attack.core import (
    _STEPS,  # noqa: F401  (the agenda's shared Steps)
    CATCH,
    HIT,
    LUCK,
    LUCK_DISCARD,
    LUCK_PRESS,
    PRESS,
    PRESS_STEPS,
    SIDE_COLOURS,
    SIDE_NAMES,
    TURN,
    Core,
    Step,
    _step,
)

if TYPE_CHECKING:
    from launcher.games.engine import CardTable
    from launcher.games.launchers import Launcher


class RuleViolation(LauncherError, ValueError):
    """An action the rules forbid, or a broken invariant (a card made or lost)."""


class LauncherFault(LauncherError, RuntimeError):
    """The launcher did not do what the game asked (wrong side after a flip, a lost card)."""


# --- options: every point the rule text leaves open ----------------------------------


@dataclass(frozen=True)
class GameOptions:
    """House rules for what the rule text leaves open; docs/games.md explains each one."""

    hand_size: int = 7
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
    uno_penalty_presses: int = 2
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
    max_turns: int = 2000
    target_score: int = 500

    def __post_init__(self) -> None:
        allowed = {
            "two_player_reverse": ("skip", "reverse"),
            "first_card_action": ("cover", "return"),
            "first_card_wild": ("ignore", "play"),
            "pyl_discard": ("any", "colour", "match"),
            "flip_wild_top": ("flipper_chooses", "open"),
        }
        for name, values in allowed.items():
            if getattr(self, name) not in values:
                raise ValueError(f"{name} must be one of {', '.join(values)}")
        for name in ("hand_size", "uno_penalty_presses", "max_turns", "target_score"):
            if getattr(self, name) < (0 if name == "uno_penalty_presses" else 1):
                raise ValueError(f"{name} is too small: {getattr(self, name)}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    def idle(self, name: str, players: int) -> str | None:
        """Why the option ``name`` cannot change a game of ``players`` under these options."""
        if name == "two_player_reverse" and players != 2:
            return f"it only acts with 2 players, not {players}"
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

    def points(self, player: int) -> int:
        """The score value of ``player``'s hand on the side in play."""
        side = self.side
        return sum(c.face(side).points for c in self.hands[player])


def hand_points(state: HandState) -> int:
    """What the winner of a finished hand scores: the other hands, on the side in play."""
    if state.winner is None:
        return 0
    return sum(state.points(q) for q in range(state.players) if q != state.winner)


def playable(face: Face, top: Face | None, colour: str | None) -> bool:
    """Whether ``face`` may be laid: wild, same colour, same number, or same action kind."""
    if face.is_wild or colour is None or face.colour == colour:
        return True
    # ``key`` is the number of a number card and the kind of any other: one comparison.
    return top is not None and face.key == top.key


# --- dealing -----------------------------------------------------------------------


def deal(deck: Sequence[Card], players: int, dealer: int, options: GameOptions,
         rng: random.Random) -> tuple[HandState, list[Effect]]:
    """Shuffle, deal, turn the first discard, and load the rest (Mild facing the back)."""
    if players < 2:
        raise RuleViolation("UNO Flip Attack needs at least 2 players")
    if players * options.hand_size + 2 > len(deck):
        raise RuleViolation(f"{len(deck)} cards cannot deal {options.hand_size} to {players}")
    cards = list(deck)
    rng.shuffle(cards)
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


def _starts_pile(face: Face, options: GameOptions) -> bool:
    return not face.is_action or (face.kind == WILD_CARD and options.first_card_wild == "play")


# --- what may be done --------------------------------------------------------------


def _flip_needs_colour(state: HandState, card: Card) -> bool:
    """Whether playing this Flip turns a wild face to the top, so its player names a colour."""
    if state.options.flip_wild_top != "flipper_chooses":
        return False
    # Turning the pile over brings its bottom card to the top (the Flip itself, if alone).
    bottom = state.discard[0] if state.discard else card
    return bottom.face(other_side(state.side)).is_wild


def _luck_can_discard(state: HandState, face: Face) -> bool:
    rule = state.options.pyl_discard
    if rule == "any":
        return True
    run = state.luck
    assert run is not None
    if rule == "colour":
        return face.colour == run.colour
    if run.discards:
        last = run.discards[-1].face(state.side)
        return playable(face, last, last.colour)
    return playable(face, state.top, state.colour)


def legal_actions(state: HandState) -> list[Action]:
    """Every legal action for the player to move (empty while a press is awaited)."""
    step = state.step
    if step is None or state.over:
        return []
    p, side = step.player, state.side
    if step.kind == TURN:
        out: list[Action] = [_PRESS]
        top, colour = state.top, state.colour
        key = None if top is None else top.key
        back = side in BACK_SIDES
        cache = _VARIANTS
        for card in state.hands[p]:
            face = card.wild if back else card.mild
            # ``playable``, inlined: this loop is the engine's hottest.
            if face.is_wild or colour is None or face.colour == colour or face.key == key:
                if face.kind == FLIP:
                    out += _play_variants(state, card, face)
                    continue
                variants = cache.get((card, back))
                if variants is None:
                    variants = cache[(card, back)] = _play_variants(state, card, face)
                out += variants
        if len(cache) > 100_000:  # decks made and dropped (tests): start again
            cache.clear()
        return out
    if step.kind == LUCK:
        hand = state.hands[p]
        can = any(_luck_can_discard(state, c.face(side)) for c in hand)
        return [PressLuck(), StopLuck()] if can else [StopLuck()]
    if step.kind == LUCK_DISCARD:
        return [Discard(c) for c in state.hands[p] if _luck_can_discard(state, c.face(side))]
    if step.kind == CATCH:
        return [Catch(), Pass()]
    if step.kind == HIT:
        assert state.top is not None
        kind = state.top.kind
        return [TakeHit(), *(Play(c) for c in state.hands[p] if c.face(side).kind == kind)]
    return []


# A Play is immutable: each card's plays (one per colour for a wild) are made once and
# reused, instead of every turn. A Flip's depend on the pile, so they are not kept.
_VARIANTS: dict[tuple[Card, bool], list[Action]] = {}


def _play_variants(state: HandState, card: Card, face: Face) -> list[Action]:
    colours = COLOURS[state.side]
    if face.kind == WILD_DISCARD_ALL:
        return [Play(card, c, d) for d in colours for c in colours]
    if face.is_wild:
        return [Play(card, c) for c in colours]
    if face.kind == FLIP and _flip_needs_colour(state, card):
        return [Play(card, c) for c in COLOURS[other_side(state.side)]]
    return [Play(card)]


def _check_play(state: HandState, p: int, a: Play) -> Face:
    hand = state.hands[p]
    if not any(c is a.card for c in hand):
        raise RuleViolation(f"player {p} does not hold {a.card}")
    face = a.card.face(state.side)
    if not playable(face, state.top, state.colour):
        raise RuleViolation(f"{face} cannot be played on {state.top} (colour {state.colour})")
    colours = COLOURS[state.side]
    if face.is_wild:
        if a.colour not in colours:
            raise RuleViolation(f"{face} needs a colour out of {', '.join(colours)}")
        if (face.kind == WILD_DISCARD_ALL) != (a.discard_colour is not None):
            raise RuleViolation("only a Wild Discard All names a colour to discard")
        if a.discard_colour is not None and a.discard_colour not in colours:
            raise RuleViolation(f"{a.discard_colour} is not a {state.side} colour")
        return face
    if a.discard_colour is not None:
        raise RuleViolation("only a Wild Discard All names a colour to discard")
    if face.kind == FLIP and _flip_needs_colour(state, a.card):
        if a.colour not in COLOURS[other_side(state.side)]:
            raise RuleViolation("the Flip turns a wild face up: name the new colour")
    elif a.colour is not None:
        raise RuleViolation(f"{face} does not take a colour")
    return face


# --- the mutable draft of one step ---------------------------------------------------


class _Draft:
    """A HandState being changed in place: the same fields, mutable (lists for the hands,
    the pile and the agenda), and the effects of the current step in ``out``.

    ``act`` and ``shot`` make one from a HandState and ``freeze`` it into the next state,
    as the pure interface promises; a ``Table`` keeps one for the whole hand and steps it
    in place (``_act``, ``_shot``), so playing a hand copies no state per step. Bots read
    it as they read a HandState.
    """

    __slots__ = ("agenda", "colour", "dealer", "direction", "discard", "flips", "hands",
                 "launcher_count", "luck", "options", "out", "over", "players", "presses",
                 "reloads", "side", "top", "turns", "winner")

    def __init__(self, s: HandState) -> None:
        self.options = s.options
        self.players = s.players
        self.dealer = s.dealer
        self.side = s.side
        self.hands = list(s.hands)
        self.discard = list(s.discard)
        self.top = s.top
        self.colour = s.colour
        self.direction = s.direction
        self.agenda = list(s.agenda)
        self.launcher_count = s.launcher_count
        self.luck = s.luck
        self.winner = s.winner
        self.over = s.over
        self.turns = s.turns
        self.presses = s.presses
        self.flips = s.flips
        self.reloads = s.reloads
        self.out: list[Effect] = []

    # HandState's reading interface, for the bots.
    step = HandState.step
    awaiting_press = HandState.awaiting_press
    held = HandState.held
    visible = HandState.visible
    points = HandState.points

    def next_player(self, player: int, steps: int = 1) -> int:
        return (player + steps * self.direction) % self.players

    nxt = next_player

    def freeze(self) -> HandState:
        return HandState(
            options=self.options, players=self.players, dealer=self.dealer, side=self.side,
            hands=tuple(self.hands), discard=tuple(self.discard), top=self.top,
            colour=self.colour, direction=self.direction, agenda=tuple(self.agenda),
            launcher_count=self.launcher_count, luck=self.luck, winner=self.winner,
            over=self.over, turns=self.turns, presses=self.presses, flips=self.flips,
            reloads=self.reloads,
        )


def _freeze_core(w: Core) -> HandState:
    """The fast core's hand as a HandState (cards as objects again)."""
    cards = w.cards
    side = SIDE_NAMES[w.side]
    colours = SIDE_COLOURS[w.side]
    luck = None
    if w.luck is not None:
        p, card, col, discards = w.luck
        luck = LuckRun(p, cards[card], colours[col], tuple(cards[c] for c in discards))
    top = None if w.top < 0 else cards[w.top].face(side)
    return HandState(
        options=w.options, players=w.players, dealer=w.dealer, side=side,
        hands=tuple(tuple(cards[c] for c in h) for h in w.hands),
        discard=tuple(cards[c] for c in w.discard), top=top,
        colour=None if w.colour == NO_COLOUR else colours[w.colour],
        direction=w.direction, agenda=tuple(w.agenda),
        launcher_count=w.launcher_count, luck=luck, winner=w.winner, over=w.over,
        turns=w.turns, presses=w.presses, flips=w.flips, reloads=w.reloads)


# --- actions in --------------------------------------------------------------------


def act(state: HandState, action: Action, rng: random.Random) -> tuple[HandState, list[Effect]]:
    """Apply the decision of the player to move; raises RuleViolation if it is not legal."""
    w = _Draft(state)
    _act(w, action, rng)
    return w.freeze(), w.out


def _act(w: _Draft, action: Action, rng: random.Random, offered: bool = False) -> None:
    """``act`` in place: ``w`` becomes the next state, its effects in ``w.out``.

    ``offered``: the action is one of ``legal_actions(w)`` itself (the very object), so
    the play need not be checked again.
    """
    state = w  # read before the step changes it: every check comes before any change
    step = state.step
    if step is None or state.over:
        raise RuleViolation("the hand is over")
    w.out = []
    p = step.player
    kind = step.kind
    if kind == TURN:
        if isinstance(action, Press):
            w.turns += 1
            w.agenda[0:1] = [_step(PRESS, p, p, "turn"), _step(TURN, w.nxt(p))]
        elif isinstance(action, Play):
            if not offered:
                _check_play(state, p, action)
            w.turns += 1
            _play(w, p, action, 0)
        else:
            raise RuleViolation(f"player {p} must play or press, not {action}")
    elif kind == LUCK:
        if isinstance(action, PressLuck):
            if not any(_luck_can_discard(state, c.face(state.side)) for c in state.hands[p]):
                raise RuleViolation("no card to discard for another press: stop")
            w.agenda[0] = _step(LUCK_PRESS, p, p, "luck")
        elif isinstance(action, StopLuck):
            _end_luck(w, busted=False, uno=action.uno)
        else:
            raise RuleViolation(f"player {p} is pressing their luck: press or stop, not {action}")
    elif kind == LUCK_DISCARD:
        if not isinstance(action, Discard):
            raise RuleViolation(f"player {p} must discard a card for that press")
        if not any(c is action.card for c in state.hands[p]):
            raise RuleViolation(f"player {p} does not hold {action.card}")
        if not _luck_can_discard(state, action.card.face(state.side)):
            raise RuleViolation(f"{action.card.face(state.side)} may not be discarded "
                                f"(pyl_discard = {state.options.pyl_discard})")
        w.hands[p] = tuple(c for c in state.hands[p] if c is not action.card)
        assert w.luck is not None
        w.luck = LuckRun(w.luck.player, w.luck.card, w.luck.colour,
                         (*w.luck.discards, action.card))
        w.agenda[0] = _step(LUCK, p)
    elif kind == CATCH:
        exposed = step.arg
        if isinstance(action, Catch):
            while w.agenda and w.agenda[0].kind == CATCH and w.agenda[0].arg == exposed:
                w.agenda.pop(0)
            w.agenda[0:0] = [_step(PRESS, exposed, exposed, "uno")] * w.options.uno_penalty_presses
            w.out.append(Caught(exposed, p))
        elif isinstance(action, Pass):
            w.agenda.pop(0)
        else:
            raise RuleViolation(f"player {p} may catch player {exposed} or pass, not {action}")
    elif kind == HIT:
        owed = step.arg
        if isinstance(action, TakeHit):
            w.turns += 1
            w.agenda[0:1] = [*[_step(PRESS, p, p, "hit")] * owed, _step(TURN, w.nxt(p))]
        elif isinstance(action, Play):
            assert state.top is not None
            if action.card.face(state.side).kind != state.top.kind:
                raise RuleViolation(f"only a {state.top.kind} passes a {state.top.kind} on")
            _check_play(state, p, action)
            w.turns += 1
            _play(w, p, action, owed)
        else:
            raise RuleViolation(f"player {p} must take the hit or pass it on, not {action}")
    else:
        raise RuleViolation(f"waiting for player {p} to press the launcher, not {action}")
    _settle(w, rng)


def _play(w: _Draft, p: int, a: Play, carried: int) -> None:
    card, side = a.card, w.side
    face = card.face(side)
    k = face.kind
    hand = [c for c in w.hands[p] if c is not card]
    if k == WILD_PRESS_YOUR_LUCK and hand:
        # The card is held aside until the run ends: it goes on top of the discards.
        w.hands[p] = tuple(hand)
        assert a.colour is not None
        w.luck = LuckRun(p, card, a.colour)
        w.out.append(Played(p, card, side))
        w.agenda = [_step(LUCK, p)]
        return
    gone: list[Card] = []
    if k in (DISCARD_ALL, WILD_DISCARD_ALL):
        colour = face.colour if k == DISCARD_ALL else a.discard_colour
        gone = [c for c in hand if c.face(side).colour == colour]
        hand = [c for c in hand if c.face(side).colour != colour]
        w.discard += gone
    w.hands[p] = tuple(hand)
    w.discard.append(card)
    w.top = face
    w.colour = a.colour if face.is_wild else face.colour
    w.out.append(Played(p, card, side, len(gone)))
    if k == FLIP:
        _flip(w, a.colour)
    then = _after_play(w, p, k, carried)
    if not hand:
        _goes_out(w, p, then)
        return
    w.agenda = then
    if len(hand) == 1 and not a.uno:
        _expose(w, p)


def _after_play(w: _Draft, p: int, kind: str, carried: int) -> list[Step]:
    """What a card does to the order of play."""
    if kind == REVERSE:
        if w.players == 2 and w.options.two_player_reverse == "skip":
            return [_step(TURN, p)]
        w.direction = -w.direction
        return [_step(TURN, w.nxt(p))]
    if kind == SKIP:
        return [_step(TURN, w.nxt(p, 2))]
    if kind == SKIP_EVERYONE:
        return [_step(TURN, p)]
    if kind in HIT_PRESSES:
        victim = w.nxt(p)
        owed = carried + HIT_PRESSES[kind]
        if w.options.stack_hits:
            return [_step(HIT, victim, owed)]
        return [*[_step(PRESS, victim, victim, "hit")] * owed, _step(TURN, w.nxt(victim))]
    if kind == WILD_ALL_OUT_ATTACK:
        target = w.nxt(p)
        order = [w.nxt(target, i) for i in range(w.players)]
        if not w.options.attack_includes_attacker:
            order.remove(p)
        return [*(_step(PRESS, q, target, "attack") for q in order), _step(TURN, target)]
    return [_step(TURN, w.nxt(p))]


def _flip(w: _Draft, colour: str | None) -> None:
    w.side = other_side(w.side)
    w.discard.reverse()
    w.top = w.discard[-1].face(w.side)
    if w.top.is_wild:
        w.colour = colour if w.options.flip_wild_top == "flipper_chooses" else None
    else:
        w.colour = w.top.colour
    w.flips += 1
    w.out.append(FlipLid(w.side))


def _goes_out(w: _Draft, p: int, then: list[Step]) -> None:
    w.winner = p
    penalties: list[Step] = []
    if w.options.last_card_penalties:
        for s in then:
            if s.kind == PRESS:
                penalties.append(s)
            elif s.kind == HIT:
                penalties += [_step(PRESS, s.player, s.player, "hit")] * s.arg
    w.agenda = penalties


def _expose(w: _Draft, p: int) -> None:
    """``p`` has one card and did not call UNO: the others may catch them, next player first."""
    w.agenda[0:0] = [_step(CATCH, w.nxt(p, i), p) for i in range(1, w.players)]


def _end_luck(w: _Draft, busted: bool, uno: bool) -> None:
    run = w.luck
    assert run is not None
    p = run.player
    w.luck = None
    face = run.card.face(w.side)
    if busted:
        w.hands[p] = (*w.hands[p], *run.discards)
        if w.options.pyl_card_returns:
            w.hands[p] = (*w.hands[p], run.card)
        else:
            w.discard.append(run.card)
            w.top, w.colour = face, run.colour
    else:
        w.discard += run.discards
        w.discard.append(run.card)
        w.top, w.colour = face, run.colour
    w.out.append(LuckEnded(p, len(run.discards), busted))
    then = [_step(TURN, w.nxt(p))]
    hand = w.hands[p]
    if not hand:
        _goes_out(w, p, then)
        return
    w.agenda = then
    if len(hand) == 1 and not uno:
        _expose(w, p)


# --- shots in ----------------------------------------------------------------------


def shot(state: HandState, cards: Sequence[Card],
         rng: random.Random) -> tuple[HandState, list[Effect]]:
    """The cards one press shot (maybe none), for the press the agenda was waiting on."""
    w = _Draft(state)
    _shot(w, cards, rng)
    return w.freeze(), w.out


def _shot(w: _Draft, cards: Sequence[Card], rng: random.Random) -> None:
    """``shot`` in place."""
    step = w.step
    if step is None or step.kind not in PRESS_STEPS:
        raise RuleViolation("no press was due")
    if len(cards) > w.launcher_count:
        raise LauncherFault(f"{len(cards)} cards shot from a launcher holding "
                            f"{w.launcher_count}")
    w.out = []
    got = tuple(cards)
    was_empty = w.launcher_count == 0
    w.launcher_count -= len(got)
    w.presses += 1
    w.out.append(Pressed(step.player, step.arg, got, w.side, step.why, was_empty))
    if step.kind == PRESS:
        w.hands[step.arg] = (*w.hands[step.arg], *got)
        w.agenda.pop(0)
    elif got:
        w.hands[step.player] = (*w.hands[step.player], *got)
        _end_luck(w, busted=True, uno=False)
    else:
        w.agenda[0] = _step(LUCK_DISCARD, step.player)
    _settle(w, rng)


def _settle(w: _Draft, rng: random.Random) -> None:
    """After every step: end the hand when it is over, reload an empty launcher."""
    if w.winner is not None and not w.agenda:
        w.over = True
        w.out.append(HandOver(w.winner, w.side, hand_points(w)))
    elif w.winner is None and w.turns >= w.options.max_turns:
        w.over = True
        w.agenda = []
        w.out.append(HandOver(None, w.side, 0))
    if w.launcher_count == 0 and not w.over:
        _reload(w, rng)


def _reload(w: _Draft, rng: random.Random) -> None:
    """The discard pile, shuffled, goes into the launcher with the side in play at the back."""
    if w.options.reload_keep_top:
        pool, w.discard = w.discard[:-1], w.discard[-1:]
    else:
        pool, w.discard = w.discard, []
    if not pool:
        return
    rng.shuffle(pool)
    w.launcher_count = len(pool)
    w.reloads += 1
    w.out.append(Load(tuple(pool), w.side, "reload"))


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
        self.observers = list(observers)
        self._hand: _Draft | None = None
        self._bound: tuple[_Draft | None, list[Callable[[Effect], None]]] = (None, [])
        self._fast_bots: bool | None = None  # the last hand was played on the core
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
        hand = self._hand
        if hand is None:
            return None
        return hand.freeze() if isinstance(hand, _Draft) else _freeze_core(hand)

    def play(self, state: HandState, effects: Sequence[Effect] = ()) -> FinishedHand:
        """Play on from ``state`` (after carrying out ``effects``) until the hand is over.

        The hand is stepped in place (one mutable copy of ``state``); bots see that copy,
        which reads as a HandState. ``state`` itself is not changed. When every bot is one of
        ``bots``' own and the cards are the deck's, the copy is the integer core's
        (``core.Core``) and the bots decide on it (``decide``): the same game, faster.
        """
        fast = self._core_for(state)
        if fast is not None:
            return self._play_core(fast, state, effects)
        w = self._hand = _Draft(state)
        self._apply(w, list(effects))
        bots, launcher, rng = self.bots, self.launcher, self.rng
        while not w.over:
            step = w.agenda[0]
            if step.kind in PRESS_STEPS:
                _shot(w, launcher.press(), rng)
            else:
                legal = legal_actions(w)  # type: ignore[arg-type]
                action = bots[step.player].choose(w, step.player, legal)  # type: ignore[arg-type]
                _act(w, action, rng, any(action is a for a in legal))
            self._apply(w, w.out)
        final = w.freeze()
        return FinishedHand(final, hand_points(final))

    def _core_for(self, state: HandState) -> CardTable | None:
        """The compiled deck when this hand can be played on the fast core: every bot one
        of this package's (exactly: a subclass may decide otherwise), the deck's cards."""
        # ``decides_on_core`` on the bot's own class: a subclass may decide otherwise.
        self._fast_bots = all(type(b).__dict__.get("decides_on_core", False)
                              for b in self.bots)
        if not self._fast_bots:
            return None
        table = core.card_table(self.deck)
        if table is None or not core.Core.fits(table, state):
            return None
        return table

    def _play_core(self, table: CardTable, state: HandState,
                   effects: Sequence[Effect]) -> FinishedHand:
        """``play`` on the integer core: the same steps, the same draws, no objects per step
        (effect objects only for the observers, when there are any)."""
        w = self._hand = core.Core(table, state)
        self._apply(w, list(effects))
        launcher, rng, observers = self.launcher, self.rng, self.observers
        cards = table.cards
        watchers = [b for b in self.bots if hasattr(b, "dry_streak")]
        names = core.SIDE_NAMES

        def tell(e: Effect) -> None:
            for o in observers:
                o(e)

        def flip(side: int) -> None:
            got = launcher.flip()
            if got != names[side]:
                raise LauncherFault(f"the lid cycle left {got} at the back, not {names[side]}")
            for b in watchers:
                b.dry_streak = 0
            if observers:
                tell(FlipLid(got))

        def load(pool: list[int], side: int) -> None:
            e = Load(tuple(cards[c] for c in pool), names[side], "reload")
            self._apply(w, [e], check=False)

        def pressed(player: int, recipient: int, got: list[int], side: int, why: str,
                    empty: bool) -> None:
            tell(Pressed(player, recipient, tuple(cards[c] for c in got), names[side], why,
                         empty))

        def played(player: int, card: int, side: int, discarded: int) -> None:
            tell(Played(player, cards[card], names[side], discarded))

        def caught(player: int, by: int) -> None:
            tell(Caught(player, by))

        def luck_ended(player: int, discarded: int, busted: bool) -> None:
            tell(LuckEnded(player, discarded, busted))

        def over(winner: int | None, side: int, points: int) -> None:
            tell(HandOver(winner, names[side], points))

        if observers:
            hooks = core.Hooks(flip, load, pressed, played, caught, luck_ended, over, watchers)
        else:
            hooks = core.Hooks(flip, load, None, None, None, None, None, watchers)
        decide = [b.decide for b in self.bots]
        step_shot, step_move = core.step_shot, core.step_move
        check = self.check if self.check_steps else None
        while not w.over:
            step = w.agenda[0]
            if step.kind in PRESS_STEPS:
                got = launcher.press()
                if got:
                    got = [c.id for c in got]
                if len(got) > w.launcher_count:
                    raise LauncherFault(f"{len(got)} cards shot from a launcher holding "
                                        f"{w.launcher_count}")
                step_shot(w, got, rng, hooks)
            else:
                step_move(w, decide[step.player](w, step.player), rng, hooks)
            if check is not None:
                check(w)
        final = _freeze_core(w)
        self._hand = _Draft(final)  # for ``_collect`` and ``state``: the hand is over
        return FinishedHand(final, hand_points(final))

    def _apply(self, state: HandState | _Draft, effects: list[Effect],
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

    def check(self, state: HandState | _Draft) -> None:
        """Card conservation, and the launcher's count against the rules' count."""
        self.checks += 1
        if isinstance(state, (HandState, _Draft)):
            ids = [c.id for h in state.hands for c in h]
            ids += [c.id for c in state.discard]
            ids += [c.id for c in state.held]
        else:  # the fast core: cards are their ids already
            ids = [c for h in state.hands for c in h]
            ids += state.discard
            ids += state.held()
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
        s = self._hand
        if s is not None and not isinstance(s, _Draft):
            s = _freeze_core(s)  # type: ignore[assignment]
        if s is not None:
            back += [c for h in s.hands for c in h] + list(s.discard) + list(s.held)
        if s is not None and sorted(c.id for c in back) != sorted(self.ids):
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
