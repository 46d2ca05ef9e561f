"""Properties of the Flip Attack engine over many generated hands (hypothesis)."""

from __future__ import annotations

import random
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from launcher.games.base import RuleViolation
from launcher.games.cards import COLOURS, load_deck, other_side
from launcher.games.flip_attack.bots import HeuristicBot, RandomBot
from launcher.games.flip_attack.core import TURN
from launcher.games.flip_attack.rules import act
from launcher.games.flip_attack.state import GameOptions, Play
from launcher.games.flip_attack.table import FlipAttackTable
from launcher.games.launchers import DirectLauncher

DECK = load_deck()

options = st.builds(
    GameOptions,
    two_player_reverse=st.sampled_from(["skip", "reverse"]),
    first_card_action=st.sampled_from(["cover", "return"]),
    first_card_wild=st.sampled_from(["ignore", "play"]),
    pyl_discard=st.sampled_from(["any", "colour", "match"]),
    pyl_card_returns=st.booleans(),
    stack_hits=st.booleans(),
    last_card_penalties=st.booleans(),
    attack_includes_attacker=st.booleans(),
    flip_wild_top=st.sampled_from(["flipper_chooses", "open"]),
    reload_keep_top=st.booleans(),
    max_turns=st.just(400),
)


class CheckingBot:
    """Wraps a bot: before each decision, every legal action must be accepted by the engine
    and every other play of a card in hand refused."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.decisions = 0

    def choose(self, state, player, legal):
        assert legal, f"no legal action for player {player} at {state.step}"
        for action in legal:
            act(state, action, random.Random(0))  # raises if the engine disagrees
        if state.step.kind == TURN:
            offered = {(a.card.id, a.colour, a.discard_colour) for a in legal
                       if isinstance(a, Play)}
            for card in state.hands[player]:
                for colour in (None, *COLOURS[state.side], *COLOURS[other_side(state.side)]):
                    if (card.id, colour, None) in offered or card.face(state.side).is_wild:
                        continue
                    try:
                        act(state, Play(card, colour), random.Random(0))
                    except RuleViolation:
                        continue
                    raise AssertionError(f"{card} with {colour} was accepted but not offered")
        self.decisions += 1
        return self.inner.choose(state, player, legal)

    def observe(self, effect):
        self.inner.observe(effect)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6), opts=options)
def test_random_hands_conserve_cards_and_offer_only_legal_moves(seed, players, opts):
    rng = random.Random(seed)
    bots = [CheckingBot(RandomBot(random.Random(rng.random()))) for _ in range(players)]
    table = FlipAttackTable(DirectLauncher(rng=random.Random(rng.random())), bots, rng, opts, DECK)
    hand = table.play_hand(dealer=seed % players)
    # The table checked conservation after every step; make sure it really ran.
    assert table.checks > hand.state.turns
    assert hand.state.over and hand.state.turns <= opts.max_turns
    assert sum(b.decisions for b in bots) >= hand.state.turns


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6), opts=options)
def test_heuristic_hands_end_with_a_winner_well_within_the_bound(seed, players, opts):
    rng = random.Random(seed)
    bots = [HeuristicBot(random.Random(rng.random())) for _ in range(players)]
    opts = replace(opts, max_turns=2000)
    table = FlipAttackTable(DirectLauncher(rng=random.Random(rng.random())), bots, rng, opts, DECK)
    hand = table.play_hand(dealer=0)
    assert hand.winner is not None and hand.state.turns < 600
    side = hand.state.side
    assert hand.points_won == sum(c.face(side).points for q in range(players)
                                  if q != hand.winner for c in hand.state.hands[q])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), presses=st.integers(1, 400))
def test_direct_launcher_never_exceeds_the_dry_cap_or_the_cards_it_holds(seed, presses):
    launcher = DirectLauncher(rng=random.Random(seed))
    launcher.load(DECK[:40])
    streak = 0
    for i in range(presses):
        if i == presses // 2:
            launcher.flip()
            streak = 0
        side = launcher.luck.side(launcher.side)
        before = launcher.cards_left
        out = launcher.press()
        assert launcher.cards_left == before - len(out) >= 0
        if out:
            streak = 0
        elif before:
            streak += 1
        assert streak == launcher.dry_streak <= side.max_dry
        assert len(out) <= max(side.sizes)
