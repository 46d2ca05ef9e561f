"""Our bots deciding on the core play the same games as through the object interface.

``FlipAttackTable`` lets every bot of ours decide on the integer core (``decide``), and asks
any other bot ``choose`` with a view of the hand and ``legal_actions`` (its answer read back into a
core decision). A bot wrapped in a pass-through player is "another bot", so the same seeds
played both ways must give the same effects, the same decisions' outcomes and the same
final states.
"""

from __future__ import annotations

import random

import pytest

from launcher.core import config
from launcher.games.base import RuleViolation
from launcher.games.cards import load_deck
from launcher.games.flip_attack.bots import HeuristicBot, RandomBot, make_bot
from launcher.games.flip_attack.core import PRESS_STEPS
from launcher.games.flip_attack.rules import act, deal, hand_points, legal_actions, shot
from launcher.games.flip_attack.state import (
    Effect,
    FlipLid,
    GameOptions,
    Load,
    Play,
    Played,
    Pressed,
)
from launcher.games.flip_attack.table import FlipAttackTable
from launcher.games.launchers import DirectLauncher

LUCK = config.load().luck
DECK = load_deck()

OPTIONS = {
    "default": GameOptions(),
    "stacking, matching luck": GameOptions(stack_hits=True, pyl_discard="match",
                                           pyl_card_returns=True),
    "every other choice": GameOptions(
        pyl_discard="colour", first_card_action="return", first_card_wild="play",
        flip_wild_top="open", reload_keep_top=False, last_card_penalties=False,
        attack_includes_attacker=False, uno_penalty_presses=0),
    "big hands, short hands": GameOptions(hand_size=12, max_turns=150),
}


class Wrapped:
    """Another player (so the table takes the object path) that plays as ``bot`` does."""

    def __init__(self, bot: RandomBot | HeuristicBot) -> None:
        self.bot = bot
        self.name = bot.name

    def choose(self, state, player, legal):
        return self.bot.choose(state, player, legal)

    def observe(self, effect) -> None:
        self.bot.observe(effect)


def _play(options: GameOptions, players: int, names: list[str], seed: int, wrap: bool,
          games: int = 2, check: bool = True):
    bots = [make_bot(names[i % len(names)], random.Random(seed + i), LUCK)
            for i in range(players)]
    seen: list[str] = []
    table = FlipAttackTable(DirectLauncher(LUCK, random.Random(seed)),
                  [Wrapped(b) for b in bots] if wrap else bots, random.Random(seed), options,
                  DECK, observers=[lambda e: seen.append(repr(e))], check=check)
    results = []
    for g in range(games):
        r = table.play_game(first_dealer=g % players, max_hands=30)
        results.append((r.scores, r.winner, [(h.points_won, h.state) for h in r.hands]))
    return seen, results, table


@pytest.mark.parametrize("name", list(OPTIONS))
@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_the_core_and_the_object_engine_play_the_same_games(name, players):
    for names in (["heuristic", "random"], ["random"], ["heuristic"]):
        seed = 1000 * players + len(names) * 7 + len(name)
        fast = _play(OPTIONS[name], players, names, seed, wrap=False)
        slow = _play(OPTIONS[name], players, names, seed, wrap=True)
        assert fast[2]._fast_bots and not slow[2]._fast_bots
        assert len(fast[0]) > 100
        assert fast[0] == slow[0]  # every effect, in order
        assert fast[1] == slow[1]  # scores, winners, every hand's final state


def test_without_observers_and_checks_the_same_games_are_played():
    opts = GameOptions()
    _, fast, _ = _play(opts, 4, ["heuristic", "random"], 5, wrap=False, check=False)
    _, slow, _ = _play(opts, 4, ["heuristic", "random"], 5, wrap=True, check=False)
    assert fast == slow


def test_a_subclass_of_our_bots_gets_the_object_interface():
    class Picky(RandomBot):
        def choose(self, state, player, legal):
            return legal[0]  # always presses

    table = FlipAttackTable(DirectLauncher(LUCK, random.Random(1)),
                  [Picky(random.Random(1)), RandomBot(random.Random(2))], random.Random(1))
    hand = table.play_hand(dealer=0)
    assert not table._fast_bots
    assert hand.state.turns > 0


class Leaky(DirectLauncher):
    """Loses the first card it shoots (the conservation check must see it)."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.lost = False

    def press(self):
        got = super().press()
        if got and not self.lost:
            self.lost = True
            return got[1:]
        return got


def test_the_core_checks_conservation_after_every_step():
    table = FlipAttackTable(Leaky(LUCK, random.Random(3)),
                  [make_bot("random", random.Random(i), LUCK) for i in range(3)],
                  random.Random(3), check=True)
    with pytest.raises(RuleViolation, match="not conserved"):
        table.play_game()


def test_the_core_tells_observers_every_press():
    seen: list[Pressed] = []
    table = FlipAttackTable(DirectLauncher(LUCK, random.Random(2)),
                  [make_bot(n, random.Random(i), LUCK) for i, n in
                   enumerate(["heuristic", "random"] * 2)], random.Random(2),
                  observers=[lambda e: seen.append(e) if isinstance(e, Pressed) else None])
    hand = table.play_hand(dealer=0)
    assert table._fast_bots
    assert len(seen) == hand.state.presses > 0


@pytest.mark.parametrize("name", list(OPTIONS))
def test_the_pure_interface_plays_the_same_hands_as_the_table(name):
    """``deal``, ``legal_actions``, ``act`` and ``shot`` on frozen states, the launcher
    driven by hand: the same effects and final state as a table's hand from the same seeds."""
    options, players = OPTIONS[name], 3
    effects_seen = 0
    for seed in range(4):
        seen: list[Effect] = []
        table_bots = [make_bot(n, random.Random(seed + i), LUCK)
                      for i, n in enumerate(["heuristic", "random", "random"])]
        table = FlipAttackTable(DirectLauncher(LUCK, random.Random(seed)), table_bots,
                      random.Random(seed), options, DECK,
                      observers=[seen.append])
        expected = table.play_hand(dealer=1)

        bots = [make_bot(n, random.Random(seed + i), LUCK)
                for i, n in enumerate(["heuristic", "random", "random"])]
        launcher, rng = DirectLauncher(LUCK, random.Random(seed)), random.Random(seed)
        state, effects = deal(DECK, players, 1, options, rng)
        told: list[str] = []
        pending = list(effects)
        while True:
            for e in pending:
                if isinstance(e, Load):
                    launcher.load(list(e.cards))
                    while launcher.side != e.side:
                        flip = FlipLid(launcher.flip())
                        for b in bots:
                            b.observe(flip)
                        told.append(repr(flip))
                elif isinstance(e, FlipLid):
                    assert launcher.flip() == e.side
                for b in bots:
                    b.observe(e)
                told.append(repr(e))
            if state.over:
                break
            step = state.step
            if step.kind in PRESS_STEPS:
                state, pending = shot(state, launcher.press(), rng)
            else:
                legal = legal_actions(state)
                action = bots[step.player].choose(state, step.player, legal)
                state, pending = act(state, action, rng)
        assert told == [repr(e) for e in seen]
        assert state == expected.state
        assert hand_points(state) == expected.points_won
        effects_seen += len(told)
    assert effects_seen > 200


def test_a_face_to_match_that_no_card_of_the_state_shows_is_still_matched():
    """After a whole-pile reload the face on top may be on no card the state holds: the
    pure functions still match it (number or colour), and refuse what does not."""
    from dataclasses import replace

    from flip_position import Cards, face, position

    c = Cards()
    hand = [c("yellow 7"), c("red 4"), c("red 9"), c("wild")]
    state = replace(position([hand, c.many(3)], [c("blue 1")]), discard=(),
                    top=face("yellow 4"), colour="yellow", launcher_count=20)
    offered = {a.card.id for a in legal_actions(state) if isinstance(a, Play)}
    assert offered == {hand[0].id, hand[1].id, hand[3].id}
    after, effects = act(state, Play(hand[1]), random.Random(0))
    assert after.top == face("red 4") and after.colour == "red"
    assert [e.card for e in effects if isinstance(e, Played)] == [hand[1]]
    with pytest.raises(RuleViolation):
        act(state, Play(hand[2]), random.Random(0))
