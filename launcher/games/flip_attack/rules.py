"""UNO Flip Attack rules: a pure, seeded interface (actions and shots in, new state out).

The engine never touches the launcher. A hand is a ``HandState`` whose ``agenda`` says
what happens next: a player's decision (``act``) or a press of the launcher, whose
cards come back through ``shot``. Both return the new state and the effects the shell
must carry out on the launcher (``Load``, ``FlipLid``) or may show (the rest). The shell
that plays whole hands with bots and a launcher is ``table.FlipAttackTable``.

The rules themselves are ``core``'s, on small integers; this module reads the objects of
``state`` into the core and back (``as_core``, ``View``, ``as_action``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from operator import attrgetter

from launcher.games.base import LauncherFault, RuleViolation
from launcher.games.cards import COLOURS, MILD, NUMBER, WILD, WILD_CARD, Card, Face
from launcher.games.draws import shuffle_as_random
from launcher.games.engine import NO_COLOUR
from launcher.games.flip_attack.core import (
    CATCH,
    HIT,
    K_DA,
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
    Deck,
    Hooks,
    Move,
    Step,
    compile_deck,
    deck_holding,
    step_move,
    step_shot,
    variant,
)
from launcher.games.flip_attack.state import (
    Action,
    Catch,
    Caught,
    Discard,
    Effect,
    FlipLid,
    GameOptions,
    HandOver,
    HandState,
    Load,
    LuckEnded,
    LuckRun,
    Pass,
    Play,
    Played,
    Press,
    Pressed,
    PressLuck,
    StopLuck,
    TakeHit,
)

_PRESS = Press()


def hand_points(state: HandState) -> int:
    """What the winner of a finished hand scores: the other hands, on the side in play."""
    return as_core(state).hand_points()


def book_hand(scores: list[int], winner: int | None, points: int,
              target: int) -> tuple[bool, int | None]:
    """Book a finished hand into the game's ``scores`` (in place): ``points`` to its
    ``winner``. Whether a player has reached ``target`` (the game is decided), and the
    game's winner (the highest score)."""
    if winner is not None:
        scores[winner] += points
    if max(scores) >= target:
        return True, max(range(len(scores)), key=scores.__getitem__)
    return False, None


# --- dealing -----------------------------------------------------------------------


def deal(deck: Sequence[Card], players: int, dealer: int, options: GameOptions,
         rng: random.Random) -> tuple[HandState, list[Effect]]:
    """Shuffle, deal, turn the first discard, and load the rest (Mild facing the back)."""
    why = cannot_deal(len(deck), players, options)
    if why:
        raise RuleViolation(why)
    cards = list(deck)
    deck_holding(cards)  # compiled once, all of it: the launcher's cards come back later
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
# ``legal_actions`` read a HandState into a ``Core``, step it, and read it back; a
# ``FlipAttackTable`` keeps one Core for the whole hand and shows other bots a ``View`` of it.


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
    w = to_core(state, None, extra)
    _LAST[0] = (state, w)
    return w


# The last HandState read into a core (a bot's ``choose``, then ``legal_actions`` and
# ``act`` on the same state read it once).
_LAST: list[tuple[HandState, Core] | None] = [None]


def to_core(state: HandState, deck: Deck | None, extra: Sequence[Card]) -> Core:
    cards = [c for h in state.hands for c in h]
    cards += state.discard
    cards += state.held
    cards += extra
    if deck is None or not all(map(deck.index.__contains__, cards)):
        deck = deck_holding(cards)
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
        deck = compile_deck((*deck.cards, stand_in))
        found = len(deck.cards) - 1
    return Core(deck, state, found)


def freeze(w: Core, hands: tuple[tuple[Card, ...], ...] | None = None,
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
    """A ``Core`` read as a HandState, live: what a ``FlipAttackTable`` shows bots that are not this
    package's. It changes as the table steps the hand; ``FlipAttackTable.state`` is a snapshot."""

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
    """Every legal action for the player to move (empty while a press is awaited): the
    actions ``legal_moves``' decisions stand for."""
    w = as_core(state)
    return [as_action(w, m) for m in legal_moves(w)]


_CATCH_OR_PASS: list[Move] = [(M_CATCH, -1, -1, -1, False), (M_PASS, -1, -1, -1, False)]


def legal_moves(w: Core) -> list[Move]:
    """The core's legal decisions for the player to move: the one place the rules decide
    them (``legal_actions`` and ``to_move`` read them as actions)."""
    if not w.agenda or w.over:
        return []
    step = w.agenda[0]
    kind = step.kind
    hand = w.hands[step.player]
    if kind == TURN:
        moves: list[Move] = [PRESS_MOVE]
        mask, made, side = w.mask, w.deck.plays, w.side
        behaviour = w.sides[side].behaviour
        for c in hand:
            if mask[c]:
                key = (c, side, behaviour[c] == K_FLIP and w.flip_needs_colour(c))
                moves += made.get(key) or _plays(w, key)
        return moves
    if kind == LUCK:
        if any(w.luck_can_discard(c) for c in hand):
            return [_PRESS_LUCK, _STOP_LUCK]
        return [_STOP_LUCK]
    if kind == LUCK_DISCARD:
        return [(M_DISCARD, c, -1, -1, False) for c in hand if w.luck_can_discard(c)]
    if kind == CATCH:
        return list(_CATCH_OR_PASS)
    if kind == HIT:
        return [(M_TAKE_HIT, -1, -1, -1, False),
                *((M_PLAY, c, -1, -1, False) for c in w.hit_passers(hand))]
    return []


def _plays(w: Core, key: tuple[int, int, bool]) -> list[Move]:
    """A playable card's plays (one per colour it may name), made once per deck and kept in
    ``deck.plays`` under ``key`` (the card, the side up, and whether a Flip names the other
    side's colour)."""
    c = key[0]
    moves = w.deck.plays[key] = [variant(w, c, v) for v in range(w.variants(c))]
    return moves


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


def may_call_uno(w: Core, move: Move) -> bool:
    """Whether "UNO!" may be called with the legal ``move``: with a play that may leave one
    card (a hand of two, or a Discard All, which takes others with it) or with the stop of
    a luck run that does. The one place the rules decide it: the contract offers these
    moves called and uncalled (``contract.FlipAttackGameState.legal_actions``), the table
    takes a call on no other (``to_move``), and a bot calls on these only."""
    what = move[0]
    left = len(w.hands[w.agenda[0].player])
    if what == M_PLAY:
        return left == 2 or w.sides[w.side].behaviour[move[1]] in (K_DA, K_WDA)
    return what == M_STOP_LUCK and left == 1


def to_move(w: Core, a: Action) -> Move:
    """The core's decision for ``a``: a lookup in ``legal_moves`` (the one place the rules
    decide them) and, for "UNO!" called, ``may_call_uno``; RuleViolation for any other."""
    if not w.agenda or w.over:
        raise RuleViolation("the hand is over")
    uno = getattr(a, "uno", False)
    plain = replace(a, uno=False) if uno else a  # type: ignore[type-var]
    moves = legal_moves(w)
    actions = [as_action(w, m) for m in moves]
    for offered, move in zip(actions, moves, strict=True):
        if offered == plain and (not uno or may_call_uno(w, move)):
            return (*move[:4], True) if uno else move  # type: ignore[return-value]
    step = w.agenda[0]
    raise RuleViolation(f"player {step.player} may not {a} at this {step.kind} step; legal: "
                        + ", ".join(map(str, actions)))


# --- actions and shots in ----------------------------------------------------------


def act(state: HandState | View, action: Action,
        rng: random.Random) -> tuple[HandState, list[Effect]]:
    """Apply the decision of the player to move; raises RuleViolation if it is not legal."""
    before = as_core(state)
    move = to_move(before, action)  # every check before any change
    w = before.copy()
    out: list[Effect] = []
    step_move(w, move, rng, recording(w, out.append))
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
        before = to_core(freeze(w), None, cards)
    w = before.copy()
    out: list[Effect] = []
    index = w.deck.index
    step_shot(w, [index[c] for c in cards], rng, recording(w, out.append))
    return _stepped(state, before, w), out


def _stepped(state: HandState | View, before: Core, w: Core) -> HandState:
    """The next state: ``w`` (``before`` stepped) frozen, reusing what ``state`` holds of
    it (a hand or pile unchanged, or only grown); kept for ``as_core``, as the next call
    usually reads it."""
    if isinstance(state, HandState) and w.deck is before.deck:
        cards = w.cards
        hands = tuple(_objects(cards, h, b, old) for h, b, old in
                      zip(w.hands, before.hands, state.hands, strict=True))
        new = freeze(w, hands, _objects(cards, w.discard, before.discard, state.discard))
    else:
        new = freeze(w)
    _LAST[0] = (new, w)
    return new


def _objects(cards: tuple[Card, ...], now: list[int], was: list[int],
             objects: tuple[Card, ...]) -> tuple[Card, ...]:
    """``now`` as cards, given that ``was`` was ``objects``."""
    n = len(was)
    if len(now) >= n and now[:n] == was:
        return objects + tuple(cards[c] for c in now[n:]) if len(now) > n else objects
    return tuple(cards[c] for c in now)


def recording(w: Core, emit: Callable[[Effect], None]) -> Hooks:
    """Hooks that hand each of the core's effects to ``emit`` as an effect object."""
    cards = w.cards
    names = SIDE_NAMES
    return Hooks(
        flip=lambda side: emit(FlipLid(names[side])),
        load=lambda pool, side: emit(Load(tuple(cards[c] for c in pool), names[side],
                                          "reload")),
        pressed=lambda player, recipient, got, side, why, held: emit(
            Pressed(player, recipient, tuple(cards[c] for c in got), names[side], why, held)),
        played=lambda player, card, side, gone: emit(
            Played(player, cards[card], names[side], gone)),
        caught=lambda player, by: emit(Caught(player, by)),
        luck_ended=lambda player, gone, busted: emit(LuckEnded(player, gone, busted)),
        over=lambda winner, side, points: emit(HandOver(winner, names[side], points)))

