"""The rules of classic UNO, UNO Splash and UNO Flip, played: dealing, and the steps of a hand.

A hand is played one step at a time from the agenda's top: ``legal`` says what the player to
move may do (the one place legality is decided), ``apply`` carries a decision out and
``shot`` a draw from the launcher, each ending in the one check of whether the hand is over
(``_settle``). ``run`` plays a hand out with those steps for the table; the game-state
contract (``contract``) steps them itself. The engine never touches the launcher: what the
shell must do to it (load the draw pile, cycle the lid) waits in ``state.todo``. Randomness
(the deal, a reshuffle, Shuffle Hands) comes only from the ``random.Random`` passed in.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from launcher.games.base import LauncherFault, RuleViolation
from launcher.games.draws import shuffle_as_random
from launcher.games.engine import NO_COLOUR
from launcher.games.uno.game import (
    B_DRAW,
    B_FLIP,
    B_NUMBER,
    B_REVERSE,
    B_SHUFFLE,
    B_SKIP,
    B_SKIP_ALL,
    B_SWAP,
    B_WILD,
    B_WILD_DRAW,
    CARD_MASK,
    CATCH,
    CATCH_CHOICES,
    CATCH_THEM,
    CHALLENGE,
    CHALLENGE_CHOICES,
    CHALLENGE_IT,
    CHOOSE,
    COLOUR,
    DRAW,
    DRAW_CARD,
    DRAW_TURN,
    DRAW_UNTIL,
    DRAWN,
    FLIP_LID,
    KEEP,
    LOAD,
    PRESS_STEPS,
    RETURNED_FIRST,
    STEP_NAMES,
    TARGET,
    TURN,
    UNO,
    UNTIL_COLOUR,
    Rules,
    UnoOptions,
    UnoState,
    describe,
    player_steps,
)

# --- dealing ---------------------------------------------------------------------------------


def choose_dealer(rules: Rules, players: int, rng: random.Random) -> tuple[int, list[list[int]]]:
    """Each player draws a card; the highest (points, or number with symbols as zero)
    deals. Tied players draw again. Returns the dealer and every round of draws."""
    cards = list(range(rules.size))
    shuffle_as_random(cards, rng)
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


def shuffled_deck(rules: Rules, players: int, dealer: int, rng: random.Random) -> list[int]:
    """The whole deck, shuffled for a deal by ``dealer`` to ``players``: RuleViolation if
    it cannot be dealt to them, or the dealer is not one of them."""
    why = rules.cannot_deal(players)
    if why:
        raise RuleViolation(why)
    if not 0 <= dealer < players:
        raise RuleViolation(f"dealer {dealer} is not one of the {players} players")
    cards = list(rules.table.ids)
    shuffle_as_random(cards, rng)
    return cards


def deal(rules: Rules, players: int, dealer: int, rng: random.Random) -> UnoState:
    """Shuffle, deal one card at a time from the dealer's left, turn the first card (with its
    first-card rule), and leave the rest in ``todo`` to load into the launcher."""
    o = rules.options
    cards = shuffled_deck(rules, players, dealer, rng)
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
    if not rest or (behaviour[rest[0]] in RETURNED_FIRST and not any(
            behaviour[c] not in RETURNED_FIRST for c in rest)):
        raise RuleViolation("no card left that can start the discard pile")
    while True:
        first = rest.pop(0)
        if behaviour[first] not in RETURNED_FIRST:
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


def score_hand(options: UnoOptions, scores: list[int], winner: int | None, points: int,
               charges: Sequence[int]) -> tuple[bool, int | None]:
    """Book a finished hand into the game's ``scores`` (in place): ``points`` to its
    ``winner`` ("winner" scoring) or each player's own ``charges`` ("penalty"). Returns
    whether the game is decided, and its winner (a single round: the hand's)."""
    if options.single_round:
        if winner is not None:
            scores[winner] += points
        return True, winner
    n = len(scores)
    if options.scoring == "winner":
        if winner is not None:
            scores[winner] += points
        if max(scores) >= options.target_score:
            return True, max(range(n), key=scores.__getitem__)
    else:
        for q in range(n):
            scores[q] += charges[q]
        if max(scores) >= options.target_score:
            return True, min(range(n), key=scores.__getitem__)
    return False, None


# --- the rules, played: what may be done, and what it does -------------------------------------
#
# A hand is played one step at a time, from the agenda's top: a player's decision
# (``legal`` says which actions it may take, ``apply`` carries one out) or a draw from the
# launcher (``shot``: the cards one press gave). Each step ends in ``_settle``, the one check
# of whether the hand is over or the launcher must be refilled. ``run`` plays a hand out
# with these same steps for the table, with one hook after each step. Every way of playing
# goes through them: the table's trusted loop (this package's bots, unchecked), its checked
# loop (each answer checked against ``legal``, every step verified) and the game-state
# contract (``contract.UnoGameState``), which steps the hand itself.


def legal(state: UnoState) -> Sequence[int]:
    """Every legal action of the player to move (empty while a draw is due): the one place
    legality is decided. Do not mutate."""
    if state.over or not state.agenda:
        return ()
    kind, p, arg = state.agenda[-1]
    if kind == TURN:
        hand = state.hands[p]
        out = playable(state, hand, hand)
        out.append(DRAW_CARD)  # drawing is always allowed
        return out
    if kind == DRAWN:
        return (arg, KEEP)
    if kind == COLOUR:
        return state.rules.colour_choices
    if kind == CATCH:
        return CATCH_CHOICES
    if kind == CHALLENGE:
        return CHALLENGE_CHOICES
    if kind == TARGET:
        return state.rules.targets[state.n][p]
    return ()  # a draw: the launcher's


def playable(state: UnoState, hand: Sequence[int], cards: Sequence[int]) -> list[int]:
    """The cards of ``cards`` (in ``hand``) that may be laid on the discard pile now: the
    turn's options, and whether a card just drawn may be played."""
    st = state.tab
    m = st.masks[state.colour * st.stride + state.symbol]
    out = []
    for c in cards:  # a plain loop: a comprehension costs a call (3.11)
        if m[c]:
            out.append(c)
    if state.rules.strict and out:
        out = [c for c in out if _strict_ok(state, hand, c)]
    return out


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


def act(state: UnoState, action: int, rng: random.Random) -> None:
    """Apply the decision of the player to move; RuleViolation if it is not legal."""
    if state.over or not state.agenda:
        raise RuleViolation("the hand is over")
    check_action(state, state.agenda[-1][1], action, legal(state))
    apply(state, action, rng)


def may_call_uno(state: UnoState, player: int) -> bool:
    """Whether ``player``'s card play may carry "UNO!" (the ``UNO`` bit): a play from a
    hand of two, which leaves one card. The one place the rules decide it: the contract
    offers such plays called and uncalled (``contract.UnoGameState.legal_actions``),
    ``check_action`` refuses the bit on any other play, and the bots call on these only."""
    return len(state.hands[player]) == 2


def check_action(state: UnoState, player: int, action: int, options: Sequence[int]) -> int:
    """``action`` if it is one of ``options`` (a card's UNO bit aside, where
    ``may_call_uno``), else RuleViolation naming the move and the legal ones."""
    if 0 <= action < CHOOSE:
        if action & CARD_MASK in options and (not action & UNO or may_call_uno(state, player)):
            return action
    elif action in options:
        return action
    kind = state.agenda[-1][0]
    raise RuleViolation(
        f"player {player} may not {describe(state.rules, action, state.side)} at this "
        f"{STEP_NAMES[kind]} step; legal: "
        + ", ".join(describe(state.rules, a, state.side) for a in options))


def apply(state: UnoState, action: int, rng: random.Random) -> None:
    """One decision step: the player to move does ``action``, already known to be legal
    (``act`` checks it against ``legal``)."""
    if state.over or not state.agenda or state.agenda[-1][0] >= PRESS_STEPS:
        raise RuleViolation("no decision is due")
    _decide(state, action, rng)


def _decide(state: UnoState, action: int, rng: random.Random) -> None:
    """``apply``'s step, for callers that know a decision is due (``run``)."""
    ag = state.agenda
    kind, p, card = ag[-1]
    if kind == TURN:
        state.turns += 1
        if action == DRAW_CARD:  # the draw is the next step
            ag[-1] = player_steps(DRAW_TURN, state.n)[p]
            card = -1
        else:
            card = action & CARD_MASK
    elif kind == DRAWN:  # play the card just drawn (the step's arg), or keep it
        if action == KEEP:
            ag[-1] = state.turn_steps[(p + state.direction) % state.n]
            card = -1
    else:
        _choice(state, kind, p, card, action)
        card = -1
    if card >= 0:  # lay it, and what the card does follows
        st = state.tab
        hand = state.hands[p]
        hand.remove(card)
        state.discard.append(card)
        colour = st.colour[card]
        if colour >= 0:
            state.colour = colour
        state.symbol = st.symbol[card]
        if state.log is not None:
            state.log.append(("play", p, card, state.side))
        b = st.behaviour[card]
        n = state.n
        d = state.direction
        exposed = len(hand) == 1 and not action & UNO  # one card left, no UNO: catch them
        if not hand:
            ag.pop()
            _goes_out(state, p, b, card, (p + d) % n)
        elif b == B_NUMBER:  # the common case first
            ag[-1] = state.turn_steps[(p + d) % n]
        elif b == B_SKIP:
            ag[-1] = state.turn_steps[(p + 2 * d) % n]
        elif b == B_REVERSE:
            if n == 2:  # "Reverse acts as a Skip"
                ag[-1] = state.turn_steps[p]
            else:
                state.direction = -d
                ag[-1] = state.turn_steps[(p - d) % n]
        elif b == B_SKIP_ALL:
            ag[-1] = state.turn_steps[p]
        elif b == B_DRAW:  # the next player draws and is skipped
            ag[-1] = state.turn_steps[(p + 2 * d) % n]
            ag.append((DRAW, (p + d) % n, state.rules.amount[state.side][card]))
        else:  # a Flip, a wild, a hand card: what follows, then p's choices
            ag.pop()
            # (A wild leaves the colour in play as it was: the one it was laid on.)
            _play_wild(state, p, b, card, state.colour, exposed, rng)
            exposed = False  # (``_play_wild`` exposes them, under p's choices)
        if exposed:
            _expose(ag, p, n, d)
    _settle(state, rng)


def _choice(state: UnoState, kind: int, p: int, arg: int, action: int) -> None:
    """A colour, a catch, a challenge or a Swap Hands target chosen."""
    ag = state.agenda
    record = None if state.log is None else state.log.append  # the events, for listeners
    ag.pop()
    if kind == COLOUR:
        state.colour = action - CHOOSE
        if record:
            record(("colour", p, action - CHOOSE))
    elif kind == CATCH:
        if action == CATCH_THEM:
            while ag and ag[-1][0] == CATCH and ag[-1][2] == arg:
                ag.pop()
            state.caught += 1
            if state.rules.options.uno_penalty:
                ag.append((DRAW, arg, state.rules.options.uno_penalty))
            if record:
                record(("caught", arg, p))
    elif kind == CHALLENGE:
        _challenge(state, p, action == CHALLENGE_IT)
    else:  # TARGET: Swap Hands
        t = action - CHOOSE
        hands = state.hands
        hands[p], hands[t] = hands[t], hands[p]
        if record:
            record(("swap", p, t))


def shot(state: UnoState, cards: Sequence[int], rng: random.Random) -> None:
    """One draw step: the card one press gave (none: the launcher is empty and nothing can
    be reloaded)."""
    if state.over or not state.agenda or state.agenda[-1][0] < PRESS_STEPS:
        raise RuleViolation("no draw was due")
    _draw(state, cards, rng)


def _draw(state: UnoState, cards: Sequence[int], rng: random.Random) -> None:
    """``shot``'s step, for callers that know a draw is due (``run``)."""
    ag = state.agenda
    kind, p, arg = ag[-1]
    if len(cards) != 1 or not state.pile:
        if cards or state.pile:
            raise LauncherFault(f"{len(cards)} cards for one draw, from a "
                                f"launcher holding {state.pile}")
        # Nothing to draw, nor any discard to reshuffle: this draw (and the rest) lapses.
        ag.pop()
        if kind == DRAW_TURN:
            ag.append(state.turn_steps[(p + state.direction) % state.n])
    else:
        card = cards[0]
        state.pile -= 1
        state.draws += 1
        hand = state.hands[p]
        hand.append(card)
        if state.log is not None:
            state.log.append(("draw", p, card))
        if kind == DRAW_TURN:  # a card that may be laid may be played now
            if playable(state, hand, (card,)):
                ag[-1] = (DRAWN, p, card)
            else:
                ag[-1] = state.turn_steps[(p + state.direction) % state.n]
        elif kind == DRAW:
            if arg > 1:
                ag[-1] = (DRAW, p, arg - 1)
            else:
                ag.pop()
        elif state.tab.colour[card] == state.colour:  # DRAW_UNTIL: it came
            if arg:
                ag[-1] = (DRAW, p, arg)
            else:
                ag.pop()
    _settle(state, rng)


Choose = Callable[[UnoState, int, Sequence[int]], int]


def run(state: UnoState, choose: Sequence[Choose], press: Callable[[], Sequence[int]],
        rng: random.Random, after: Callable[[UnoState], None]) -> None:
    """Play on, step after step, until the hand is over (see above): ``choose[p](state, p,
    options)`` answers player ``p``'s decisions with one of ``options`` (a card may carry
    the ``UNO`` bit); ``press()`` gives the cards of one press when a draw is due;
    ``after(state)`` is called after every step (it does ``state.todo`` to the launcher)."""
    ag = state.agenda
    while not state.over:
        kind, p, _ = ag[-1]
        if kind < PRESS_STEPS:
            _decide(state, choose[p](state, p, legal(state)), rng)
        else:
            _draw(state, press(), rng)
        after(state)


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
    shuffle_as_random(pool, rng)
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
    shuffle_as_random(pool, rng)
    state.pile = len(pool)
    state.reloads += 1
    state.todo.append((LOAD, pool, state.side))
    if state.log is not None:
        state.log.append(("reload", len(pool)))
