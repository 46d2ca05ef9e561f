"""Flip Attack's rules: one hand on small integers, stepped in place.

Cards are indexes into a compiled deck (``Deck``), faces are looked up in the shared
``engine.CardTable`` (per side: kind code, colour index, match symbol, points) and whether a
card may be laid is one entry of a precomputed mask (a tuple of bools). No object is made
per turn: a decision is a small tuple (``Move``), an effect is a call to the table's hooks,
and the Flip Attack objects (``Card``, ``Play``, the ``Effect``s, ``HandState``) are made at
the boundary only, when a listener or a caller asks for them.

This is the only rule engine. ``FlipAttackTable`` steps a ``Core`` for the whole hand: this
package's bots decide on it directly (``decide``); other bots, and the pure ``act`` /
``shot`` / ``legal_actions``, go through ``rules``, which reads its objects into a Core and
back. The agenda's ``Step``s live here too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from launcher.games.cards import (
    COLOURS,
    DISCARD_ALL,
    FLIP,
    HIT_2,
    HIT_5,
    MILD,
    NUMBER,
    POINTS,
    REVERSE,
    SKIP,
    SKIP_EVERYONE,
    WILD,
    WILD_ALL_OUT_ATTACK,
    WILD_CARD,
    WILD_DISCARD_ALL,
    WILD_PRESS_YOUR_LUCK,
    Card,
)
from launcher.games.draws import shuffle_as_random
from launcher.games.engine import NO_COLOUR, CardTable

# --- the agenda: what happens next (``HandState.agenda``, a list in ``Core``) -----------

TURN = "turn"  # the player plays a card or presses
PRESS = "press"  # the player presses; the cards go to ``arg``
LUCK = "luck"  # pressing their luck: press again or stop
LUCK_PRESS = "luck_press"  # the press of a Wild Press Your Luck run
LUCK_DISCARD = "luck_discard"  # a press that shot nothing: discard one card
CATCH = "catch"  # the player may catch ``arg``, who did not call UNO
HIT = "hit"  # (stack_hits) the player owes ``arg`` presses, or passes them on
PRESS_STEPS = (PRESS, LUCK_PRESS)


@dataclass(frozen=True, slots=True)
class Step:
    """One item of the agenda: who does what next."""

    kind: str
    player: int
    arg: int = -1
    why: str = ""  # for presses: turn, hit, uno, attack, luck


_STEPS: dict[tuple[str, int, int, str], Step] = {}


def _step(kind: str, player: int, arg: int = -1, why: str = "") -> Step:
    """The Step with these fields: made once and shared (a Step is immutable), so the hot
    path does not build one per turn."""
    key = (kind, player, arg, why)
    step = _STEPS.get(key)
    if step is None:
        if len(_STEPS) > 10_000:  # only tables of many players make many: start again
            _STEPS.clear()
        step = _STEPS[key] = Step(kind, player, arg, why)
    return step



SIDE_NAMES = (MILD, WILD)
SIDE_COLOURS = (COLOURS[MILD], COLOURS[WILD])

# Behaviour codes of the kinds (``CardTable.with_codes``).
K_NUMBER, K_REVERSE, K_SKIP, K_FLIP, K_HIT2, K_DA, K_WILD, K_PYL, K_HIT5, K_SKIPE, K_WDA, \
    K_ATTACK = range(12)
KIND_CODES = {NUMBER: K_NUMBER, REVERSE: K_REVERSE, SKIP: K_SKIP, FLIP: K_FLIP, HIT_2: K_HIT2,
              DISCARD_ALL: K_DA, WILD_CARD: K_WILD, WILD_PRESS_YOUR_LUCK: K_PYL,
              HIT_5: K_HIT5, SKIP_EVERYONE: K_SKIPE, WILD_DISCARD_ALL: K_WDA,
              WILD_ALL_OUT_ATTACK: K_ATTACK}
HIT_COUNT = {K_HIT2: 2, K_HIT5: 5}
_PLAIN = frozenset({K_NUMBER, K_FLIP, K_DA, K_WILD, K_PYL, K_WDA})  # next player's turn

# A decision: (what, card, colour, discard colour, uno). Colours are indexes into the
# side's colours (a Flip's colour: the new side's); -1 for none.
M_PRESS, M_PLAY, M_PRESS_LUCK, M_STOP_LUCK, M_DISCARD, M_CATCH, M_PASS, M_TAKE_HIT = range(8)
Move = tuple[int, int, int, int, bool]
PRESS_MOVE: Move = (M_PRESS, -1, -1, -1, False)


class Deck:
    """A deck compiled for the core: its ``CardTable``, its cards in index order, each
    card's index (``index[card]``; a card is equal only to itself) and id (``ids``).

    The table is built over copies numbered 0..n-1 when the cards' own ids are not.
    """

    __slots__ = ("_faces", "cards", "ids", "index", "plain", "plays", "table")

    def __init__(self, cards: Sequence[Card]) -> None:
        self.cards = tuple(cards)
        self.ids = tuple(c.id for c in self.cards)
        self.plain = self.ids == tuple(range(len(self.cards)))
        numbered = self.cards if self.plain else tuple(
            Card(i, c.mild, c.wild) for i, c in enumerate(self.cards))
        try:
            self.table = CardTable(numbered, SIDE_NAMES, (POINTS, POINTS)).with_codes(KIND_CODES)
        except KeyError as e:
            raise ValueError(f"not a UNO Flip Attack card kind: {e}") from None
        self.index = {c: i for i, c in enumerate(self.cards)}
        self.plays: dict[tuple[int, int, bool], list[Move]] = {}
        self._faces: list[dict[Any, int] | None] = [None, None]

    def find(self, side: int, face: Any) -> int:
        """A card showing ``face`` on ``side`` (its index), or -1."""
        faces = self._faces[side]
        if faces is None:
            name = SIDE_NAMES[side]
            faces = self._faces[side] = {}
            for i, c in enumerate(self.cards):
                faces.setdefault(c.face(name), i)
        return faces.get(face, -1)


_DECKS: dict[int, Deck] = {}  # id(cards) -> the deck compiled from them
_HOME: dict[Card, Deck] = {}  # a card -> the deck last compiled with it


def compile_deck(cards: tuple[Card, ...]) -> Deck:
    """``cards`` compiled (once per tuple, kept while it lives in the cache)."""
    deck = _DECKS.get(id(cards))
    if deck is not None and deck.cards is cards:
        return deck
    deck = Deck(cards)
    if len(_DECKS) > 64:  # decks made and dropped (tests): start again
        _DECKS.clear()
        _HOME.clear()
    _DECKS[id(cards)] = deck
    for c in deck.cards:
        _HOME[c] = deck
    return deck


def deck_holding(cards: Sequence[Card]) -> Deck:
    """A compiled deck that holds every one of ``cards``: the last one compiled with the
    first of them, grown by any it lacks (so a hand played through the pure functions,
    cards coming back from the launcher, compiles a deck only when it sees new cards)."""
    deck = _HOME.get(cards[0]) if cards else None
    if deck is None:
        return compile_deck(tuple(dict.fromkeys(cards)))
    index = deck.index
    if all(map(index.__contains__, cards)):
        return deck
    return compile_deck((*deck.cards, *(c for c in dict.fromkeys(cards) if c not in index)))


class Core:
    """One hand on integers: the fields of a ``HandState``, mutable, cards as indexes.

    ``colour`` is an index into the side's colours (``NO_COLOUR``: any card may follow);
    ``top`` the card whose face (on ``side``) is to be matched. ``luck`` is
    ``[player, card, colour, discards]`` during a Wild Press Your Luck run.
    """

    __slots__ = (
        "after",
        "agenda",
        "any_card",
        "cards",
        "colour",
        "dealer",
        "deck",
        "direction",
        "discard",
        "flips",
        "hands",
        "launcher_count",
        "luck",
        "mask",
        "options",
        "over",
        "players",
        "press_turn",
        "presses",
        "reloads",
        "side",
        "sides",
        "t",
        "top",
        "turns",
        "winner",
    )

    def __init__(self, deck: Deck, s: Any, top: int) -> None:
        """From a HandState ``s`` (its cards all ``deck``'s), ``top`` the index of a card
        showing the face to match (-1: none)."""
        table = deck.table
        ix = deck.index.__getitem__
        self.deck = deck
        self.t = table
        self.sides = table.sides
        self.cards = deck.cards
        self.options = s.options
        self.players = s.players
        self.dealer = s.dealer
        self.side = 1 if s.side == WILD else 0
        self.hands = [list(map(ix, h)) for h in s.hands]
        self.discard = list(map(ix, s.discard))
        self.top = top
        self.colour = NO_COLOUR if s.colour is None else SIDE_COLOURS[self.side].index(s.colour)
        self.direction = s.direction
        self.agenda: list[Step] = list(s.agenda)
        self.launcher_count = s.launcher_count
        run = s.luck
        self.luck: list | None = None
        if run is not None:
            self.luck = [run.player, ix(run.card), SIDE_COLOURS[self.side].index(run.colour),
                         [ix(c) for c in run.discards]]
        self.winner = s.winner
        self.over = s.over
        self.turns = s.turns
        self.presses = s.presses
        self.flips = s.flips
        self.reloads = s.reloads
        self.any_card = (True,) * len(self.cards)
        self.mask = self.any_card
        self.remask()
        # The shared Steps the hot path needs, per player: a turn, a press instead of one.
        self.after = [_step(TURN, q) for q in range(self.players)]
        self.press_turn = [_step(PRESS, q, q, "turn") for q in range(self.players)]

    def copy(self) -> Core:
        """Another hand in the same position (stepping one leaves the other as it was)."""
        w = Core.__new__(Core)
        for name in _SHARED:
            setattr(w, name, getattr(self, name))
        w.hands = [h[:] for h in self.hands]
        w.discard = self.discard[:]
        w.agenda = self.agenda[:]
        w.luck = None if self.luck is None else [*self.luck[:3], self.luck[3][:]]
        return w

    def held(self) -> list[int]:
        if self.luck is None:
            return []
        return [self.luck[1], *self.luck[3]]

    def nxt(self, player: int, steps: int = 1) -> int:
        return (player + steps * self.direction) % self.players

    # -- what may be done --

    def remask(self) -> None:
        """``mask[card]``: whether the card may be laid now; after every change of the top
        card, the colour in play or the side."""
        colour = self.colour
        if colour == NO_COLOUR or self.top < 0:
            self.mask = self.any_card
        else:
            st = self.sides[self.side]
            self.mask = st.masks[colour * st.stride + st.symbol[self.top]]

    def hit_passers(self, hand: Sequence[int]) -> list[int]:
        """(``stack_hits``) The cards of ``hand`` that pass the hit on top on: the same kind
        (a Hit 2x passes a Hit 2x on, a Hit 5x a Hit 5x), in hand order."""
        b = self.sides[self.side].behaviour
        kind = b[self.top]
        return [c for c in hand if b[c] == kind]

    def flip_needs_colour(self, card: int) -> bool:
        if self.options.flip_wild_top != "flipper_chooses":
            return False
        bottom = self.discard[0] if self.discard else card
        return self.sides[1 - self.side].wild[bottom]

    def variants(self, card: int) -> int:
        """How many plays a card has (colours named): 16, 4 or 1, as ``legal_actions``."""
        kind = self.sides[self.side].behaviour[card]
        if kind == K_WDA:
            return 16
        if self.sides[self.side].wild[card]:
            return 4
        if kind == K_FLIP and self.flip_needs_colour(card):
            return 4
        return 1

    def luck_can_discard(self, card: int) -> bool:
        rule = self.options.pyl_discard
        if rule == "any":
            return True
        st = self.sides[self.side]
        run = self.luck
        assert run is not None
        if rule == "colour":
            return st.colour[card] == run[2]
        if st.wild[card]:
            return True
        if run[3]:
            last = run[3][-1]
            if st.wild[last]:
                return True  # a wild on top: its colour is None, anything follows
            return st.colour[card] == st.colour[last] or st.symbol[card] == st.symbol[last]
        return bool(self.mask[card])

    def points(self, player: int) -> int:
        pts = self.sides[self.side].points
        return sum([pts[c] for c in self.hands[player]])

    def hand_points(self) -> int:
        if self.winner is None:
            return 0
        return sum(self.points(q) for q in range(self.players) if q != self.winner)


def variant(w: Core, card: int, v: int) -> Move:
    """The ``v``-th play of ``card``, as ``legal_actions`` orders them."""
    st = w.sides[w.side]
    kind = st.behaviour[card]
    if kind == K_WDA:
        return (M_PLAY, card, v % 4, v // 4, False)
    if st.wild[card] or (kind == K_FLIP and w.flip_needs_colour(card)):
        return (M_PLAY, card, v, -1, False)
    return (M_PLAY, card, -1, -1, False)



# What ``Core.copy`` shares: the fields no step changes in place (the rest are lists).
_SHARED = tuple(sorted(set(Core.__slots__) - {"hands", "discard", "agenda", "luck"}))


class Hooks:
    """What the core tells the table as it steps (the table carries it out and reports it)."""

    __slots__ = ("caught", "flip", "load", "luck_ended", "over", "played", "pressed",
                 "watchers")

    def __init__(self, flip: Callable[[int], None], load: Callable[[list[int], int], None],
                 pressed: Callable[[int, int, list[int], int, str, int], None] | None,
                 played: Callable[[int, int, int, int], None] | None,
                 caught: Callable[[int, int], None] | None,
                 luck_ended: Callable[[int, int, bool], None] | None,
                 over: Callable[[int | None, int, int], None] | None,
                 watchers: Sequence[Any] = ()) -> None:
        self.watchers = tuple(watchers)
        self.flip = flip
        self.load = load
        self.pressed = pressed
        self.played = played
        self.caught = caught
        self.luck_ended = luck_ended
        self.over = over


# --- stepping: ``rules._act`` / ``_shot`` on integers ----------------------------------


def step_move(w: Core, move: Move, rng: random.Random, h: Hooks) -> None:
    """Apply a decision of the player to move (one the core's bots made: legal by making)."""

    agenda = w.agenda
    step = agenda[0]
    p = step.player
    kind = step.kind
    what = move[0]
    if kind == TURN:
        w.turns += 1
        if what == M_PRESS:
            agenda[0:1] = [w.press_turn[p], w.after[(p + w.direction) % w.players]]
        else:
            _play(w, p, move, 0, h)
        if w.winner is None and w.launcher_count and w.turns < w.options.max_turns:
            return  # nothing to settle (the common case)
    elif kind == LUCK:
        if what == M_PRESS_LUCK:
            w.agenda[0] = _step(LUCK_PRESS, p, p, "luck")
        else:
            _end_luck(w, False, move[4], h)
    elif kind == LUCK_DISCARD:
        card = move[1]
        w.hands[p].remove(card)
        assert w.luck is not None
        w.luck[3].append(card)
        w.agenda[0] = _step(LUCK, p)
    elif kind == CATCH:
        exposed = step.arg
        if what == M_CATCH:
            agenda = w.agenda
            while agenda and agenda[0].kind == CATCH and agenda[0].arg == exposed:
                agenda.pop(0)
            agenda[0:0] = [_step(PRESS, exposed, exposed, "uno")] * w.options.uno_penalty_presses
            if h.caught is not None:
                h.caught(exposed, p)
        else:
            w.agenda.pop(0)
    elif kind == HIT:
        owed = step.arg
        w.turns += 1
        if what == M_TAKE_HIT:
            w.agenda[0:1] = [*[_step(PRESS, p, p, "hit")] * owed, _step(TURN, w.nxt(p))]
        else:
            _play(w, p, move, owed, h)
    _settle(w, rng, h)


def _play(w: Core, p: int, move: Move, carried: int, h: Hooks) -> None:
    card = move[1]
    side = w.side
    st = w.sides[side]
    k = st.behaviour[card]
    hand = w.hands[p]
    hand.remove(card)
    if k == K_PYL and hand:
        w.luck = [p, card, move[2], []]
        if h.played is not None:
            h.played(p, card, side, 0)
        w.agenda = [_step(LUCK, p)]
        return
    gone = 0
    if k in (K_DA, K_WDA):
        col = st.colour[card] if k == K_DA else move[3]
        colour = st.colour
        out = [c for c in hand if colour[c] == col]
        if out:
            gone = len(out)
            hand[:] = [c for c in hand if colour[c] != col]
            w.discard += out
    w.discard.append(card)
    w.top = card
    w.colour = move[2] if st.wild[card] else st.colour[card]
    w.remask()
    if h.played is not None:
        h.played(p, card, side, gone)
    if k == K_FLIP:
        _flip(w, move[2], h)
    if k in _PLAIN:
        then = [w.after[(p + w.direction) % w.players]]
    else:
        then = _after_play(w, p, k, carried)
    if not hand:
        _goes_out(w, p, then)
        return
    w.agenda = then
    if len(hand) == 1 and not move[4]:
        _expose(w, p)


def _after_play(w: Core, p: int, k: int, carried: int) -> list[Step]:
    if k in _PLAIN:
        return [w.after[(p + w.direction) % w.players]]
    if k == K_REVERSE:
        if w.players == 2 and w.options.two_player_reverse == "skip":
            return [_step(TURN, p)]
        w.direction = -w.direction
        return [_step(TURN, w.nxt(p))]
    if k == K_SKIP:
        return [_step(TURN, w.nxt(p, 2))]
    if k == K_SKIPE:
        return [_step(TURN, p)]
    if k in (K_HIT2, K_HIT5):
        victim = w.nxt(p)
        owed = carried + HIT_COUNT[k]
        if w.options.stack_hits:
            return [_step(HIT, victim, owed)]
        return [*[_step(PRESS, victim, victim, "hit")] * owed, _step(TURN, w.nxt(victim))]
    if k == K_ATTACK:
        target = w.nxt(p)
        order = [w.nxt(target, i) for i in range(w.players)]
        if not w.options.attack_includes_attacker:
            order.remove(p)
        return [*(_step(PRESS, q, target, "attack") for q in order), _step(TURN, target)]
    return [_step(TURN, w.nxt(p))]


def _flip(w: Core, colour: int, h: Hooks) -> None:
    w.side = side = 1 - w.side
    w.discard.reverse()
    w.top = top = w.discard[-1]
    st = w.sides[side]
    if st.wild[top]:
        w.colour = (colour if colour >= 0 else NO_COLOUR) \
            if w.options.flip_wild_top == "flipper_chooses" else NO_COLOUR
    else:
        w.colour = st.colour[top]
    w.remask()
    w.flips += 1
    h.flip(side)


def _goes_out(w: Core, p: int, then: list[Step]) -> None:

    w.winner = p
    penalties: list[Step] = []
    if w.options.last_card_penalties:
        for s in then:
            if s.kind == PRESS:
                penalties.append(s)
            elif s.kind == HIT:
                penalties += [_step(PRESS, s.player, s.player, "hit")] * s.arg
    w.agenda = penalties


def _expose(w: Core, p: int) -> None:

    w.agenda[0:0] = [_step(CATCH, w.nxt(p, i), p) for i in range(1, w.players)]


def _end_luck(w: Core, busted: bool, uno: bool, h: Hooks) -> None:

    run = w.luck
    assert run is not None
    p, card, colour, discards = run
    w.luck = None
    if busted:
        w.hands[p] += discards
        if w.options.pyl_card_returns:
            w.hands[p].append(card)
        else:
            w.discard.append(card)
            w.top, w.colour = card, colour
            w.remask()
    else:
        w.discard += discards
        w.discard.append(card)
        w.top, w.colour = card, colour
        w.remask()
    if h.luck_ended is not None:
        h.luck_ended(p, len(discards), busted)
    then = [_step(TURN, w.nxt(p))]
    hand = w.hands[p]
    if not hand:
        _goes_out(w, p, then)
        return
    w.agenda = then
    if len(hand) == 1 and not uno:
        _expose(w, p)


def step_shot(w: Core, got: list[int], rng: random.Random, h: Hooks) -> None:
    """The cards one press shot, for the press the agenda is waiting on."""

    step = w.agenda[0]
    held = w.launcher_count
    w.launcher_count = held - len(got)
    w.presses += 1
    # The players who count the dry streak (``HeuristicBot.observe``, on integers).
    if got:
        for b in h.watchers:
            b.dry_streak = 0
    elif held:
        for b in h.watchers:
            b.dry_streak += 1
    if h.pressed is not None:
        h.pressed(step.player, step.arg, got, w.side, step.why, held)
    if step.kind == PRESS:
        w.hands[step.arg] += got
        w.agenda.pop(0)
        if w.winner is None and w.launcher_count and w.turns < w.options.max_turns:
            return  # nothing to settle (the common case)
    elif got:
        w.hands[step.player] += got
        _end_luck(w, True, False, h)
    else:
        w.agenda[0] = _step(LUCK_DISCARD, step.player)
    _settle(w, rng, h)


def _settle(w: Core, rng: random.Random, h: Hooks) -> None:
    if w.winner is not None and not w.agenda:
        w.over = True
        if h.over is not None:
            h.over(w.winner, w.side, w.hand_points())
    elif w.winner is None and w.turns >= w.options.max_turns:
        w.over = True
        w.agenda = []
        if h.over is not None:
            h.over(None, w.side, 0)
    if w.launcher_count == 0 and not w.over:
        _reload(w, rng, h)


def _reload(w: Core, rng: random.Random, h: Hooks) -> None:
    if w.options.reload_keep_top:
        pool, w.discard = w.discard[:-1], w.discard[-1:]
    else:
        pool, w.discard = w.discard, []
    if not pool:
        return
    shuffle_as_random(pool, rng)
    w.launcher_count = len(pool)
    w.reloads += 1
    h.load(pool, w.side)
