"""Rule tests for UNO Flip Attack, one or more per rule of the rule text, from exact positions."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from flip_position import Cards, Run, ScriptedLauncher, face, position

from launcher.games.base import LauncherFault, RuleViolation
from launcher.games.cards import COLOURS, MILD, POINTS, SYMBOLS, WILD, load_deck
from launcher.games.flip_attack.core import TURN, Step
from launcher.games.flip_attack.rules import act, deal, legal_actions, shot
from launcher.games.flip_attack.state import (
    Catch,
    Caught,
    Discard,
    FlipLid,
    GameOptions,
    HandOver,
    Load,
    LuckEnded,
    Pass,
    Play,
    Press,
    Pressed,
    PressLuck,
    StopLuck,
    TakeHit,
)
from launcher.games.flip_attack.table import FlipAttackTable


class NoShuffle(random.Random):
    """Deals the deck in the order given."""

    def shuffle(self, x: list) -> None:  # type: ignore[override]
        pass


@pytest.fixture
def c() -> Cards:
    return Cards()


def ids(cards) -> list[int]:
    return [card.id for card in cards]


# --- setup ------------------------------------------------------------------------------


def test_deal_gives_seven_cards_each_and_loads_the_rest_mild_side():
    deck = load_deck()
    state, effects = deal(deck, 4, dealer=0, options=GameOptions(), rng=random.Random(5))
    assert [len(h) for h in state.hands] == [7, 7, 7, 7]
    (load,) = effects
    assert isinstance(load, Load) and load.side == MILD and load.reason == "deal"
    assert len(load.cards) + len(state.discard) + 28 == 112
    assert state.launcher_count == len(load.cards)
    assert state.side == MILD and not state.top.is_action


def test_first_player_is_left_of_the_dealer_and_play_goes_clockwise(c):
    deck = load_deck()
    state, _ = deal(deck, 4, dealer=2, options=GameOptions(), rng=random.Random(1))
    assert state.step == Step(TURN, 3)
    assert state.direction == 1
    # Cards are dealt one at a time starting with the player on the dealer's left.
    ordered, _ = deal(deck, 4, dealer=2, options=GameOptions(), rng=NoShuffle())
    assert ordered.hands[3][0] is deck[0] and ordered.hands[0][0] is deck[1]


def _deck_with_start(c: Cards, starts: list[str]):
    """Twenty-eight number cards to deal, then ``starts`` turned in order, then the rest."""
    dealt = c.many(28, "blue 2")
    turned = [c(s) for s in starts]
    rest = c.many(10, "green 3")
    return dealt, turned, rest


def test_an_action_card_turned_first_is_ignored_and_the_next_one_turned(c):
    dealt, turned, rest = _deck_with_start(c, ["red skip", "wild", "yellow 4"])
    state, (load,) = deal(dealt + turned + rest, 4, 0, GameOptions(), NoShuffle())
    assert ids(state.discard) == ids(turned)  # covered: they stay under the number card
    assert state.top == face("yellow 4") and state.colour == "yellow"
    assert ids(load.cards) == ids(rest)


def test_first_action_card_can_go_back_into_the_deck_instead(c):
    dealt, turned, rest = _deck_with_start(c, ["red hit_2", "yellow 4"])
    opts = GameOptions(first_card_action="return")
    state, (load,) = deal(dealt + turned + rest, 4, 0, opts, NoShuffle())
    assert ids(state.discard) == [turned[1].id]
    assert turned[0].id in ids(load.cards) and len(load.cards) == 11


def test_first_wild_may_stay_and_then_anything_follows(c):
    dealt, turned, rest = _deck_with_start(c, ["wild", "yellow 4"])
    state, _ = deal(dealt + turned + rest, 4, 0, GameOptions(first_card_wild="play"), NoShuffle())
    assert ids(state.discard) == [turned[0].id] and state.colour is None
    # Any card may follow: every card in the first player's hand plays.
    plays = {a.card for a in legal_actions(state) if isinstance(a, Play)}
    assert plays == set(state.hands[1])


def test_the_table_loads_the_launcher_with_mild_at_the_back():
    launcher = ScriptedLauncher([], side=WILD)
    deck = load_deck()
    table = FlipAttackTable(launcher, [_Stop(), _Stop()], random.Random(0), deck=deck)
    with pytest.raises(_Halt):
        table.play_hand(dealer=0)
    assert launcher.side == MILD and launcher.flips == 1
    assert launcher.cards_left == 112 - 14 - len(table.state.discard)


class _Halt(Exception):
    pass


class _Stop:
    name = "stop"

    def choose(self, state, player, legal):
        raise _Halt

    def observe(self, effect):
        pass


# --- turns ------------------------------------------------------------------------------


@pytest.mark.parametrize("card, ok", [
    ("red 9", True),  # colour
    ("blue 5", True),  # number
    ("blue 7", False),
    ("blue skip", False),
    ("wild", True),
])
def test_a_card_matches_by_colour_number_or_symbol(c, card, ok):
    hand = [c(card), c("green 1"), c("green 2")]
    state = position([hand, c.many(3)], [c("red 5")])
    assert (Play(hand[0], "red" if card == "wild" else None) in legal_actions(state)) == ok


def test_action_cards_match_by_their_symbol(c):
    hand = [c("blue skip"), c("blue reverse")]
    state = position([hand, c.many(3)], [c("red skip")])
    assert Play(hand[0]) in legal_actions(state)
    assert Play(hand[1]) not in legal_actions(state)


def test_colour_symbols_name_the_colours_on_both_sides():
    for side in (MILD, WILD):
        assert [face(f"{col} 1").symbol for col in COLOURS[side]] == list(SYMBOLS)
    assert face("red 1").symbol == face("pink 1").symbol == "circle"
    assert face("wild").symbol is None


def test_an_illegal_play_is_refused(c):
    hand = [c("blue 7"), c("green 1"), c("green 2")]
    state = position([hand, c.many(3)], [c("red 5")])
    with pytest.raises(RuleViolation):
        act(state, Play(hand[0]), random.Random(0))
    with pytest.raises(RuleViolation):
        act(state, Play(c("red 1")), random.Random(0))  # not in the hand


def test_a_player_may_press_instead_of_playing_a_playable_card(c):
    hand = [c("red 9"), c("green 1"), c("green 2")]
    run = Run(position([hand, c.many(3)], [c("red 5")]),
              ScriptedLauncher(c.many(5), shots=[0]), [(0, Press())])
    assert run.to_move == 1  # nothing came out: the turn is over
    assert ids(run.state.hands[0]) == ids(hand)


def test_cards_that_shoot_go_into_the_hand_and_end_the_turn(c):
    hand = [c("red 9"), c("green 1"), c("green 2")]
    inside = c.many(5)
    run = Run(position([hand, c.many(3)], [c("red 5")]),
              ScriptedLauncher(inside, shots=[2]), [(0, Press())])
    assert ids(run.state.hands[0]) == ids(hand + inside[:2])
    assert run.to_move == 1
    assert run.of(Pressed)[0].cards == tuple(inside[:2])


# --- Mild side action cards -----------------------------------------------------------------


def test_reverse_turns_the_direction_of_play(c):
    hand = [c("red reverse"), c("green 1"), c("green 2")]
    run = Run(position([hand, *[c.many(3) for _ in range(3)]], [c("red 5")]),
              ScriptedLauncher(c.many(3)), [(0, Play(hand[0]))])
    assert run.state.direction == -1 and run.to_move == 3


@pytest.mark.parametrize("rule, next_player", [("skip", 0), ("reverse", 1)])
def test_two_player_reverse_is_an_option(c, rule, next_player):
    hand = [c("red reverse"), c("green 1"), c("green 2")]
    opts = GameOptions(two_player_reverse=rule)
    run = Run(position([hand, c.many(3)], [c("red 5")], options=opts),
              ScriptedLauncher(c.many(3)), [(0, Play(hand[0]))])
    assert run.to_move == next_player


def test_skip_makes_the_next_player_lose_their_turn(c):
    hand = [c("red skip"), c("green 1"), c("green 2")]
    run = Run(position([hand, c.many(3), c.many(3)], [c("red 5")]),
              ScriptedLauncher(c.many(3)), [(0, Play(hand[0]))])
    assert run.to_move == 2


def test_wild_plays_on_anything_and_names_the_colour(c):
    hand = [c("wild"), c("blue 3"), c("green 1"), c("green 2")]
    other = [c("red 3"), c("blue 8"), c("yellow 1")]
    state = position([hand, other], [c("yellow 5")])
    assert Play(hand[0], "red") in legal_actions(state)
    with pytest.raises(RuleViolation):
        act(state, Play(hand[0]), random.Random(0))  # no colour named
    run = Run(state, ScriptedLauncher(c.many(3)), [(0, Play(hand[0], "blue"))])
    assert run.state.colour == "blue"
    legal = legal_actions(run.state)
    assert Play(other[1]) in legal and Play(other[0]) not in legal


def test_hit_2x_makes_the_next_player_press_twice_then_play_moves_on(c):
    hand = [c("red hit_2"), c("green 1"), c("green 2")]
    inside = c.many(6)
    run = Run(position([hand, c.many(2), c.many(2)], [c("red 5")]),
              ScriptedLauncher(inside, shots=[0, 3]), [(0, Play(hand[0]))])
    assert len(run.state.hands[1]) == 5
    assert [p.player for p in run.of(Pressed)] == [1, 1]
    assert run.to_move == 2


@pytest.mark.parametrize("top, colour, ok", [
    ("blue 5", None, False),
    ("red 5", None, True),
    ("blue hit_2", None, True),
    ("wild", "red", True),
    ("wild", "blue", False),
])
def test_hit_2x_only_on_its_colour_or_another_hit_2x(c, top, colour, ok):
    hand = [c("red hit_2"), c("green 1"), c("green 2")]
    state = position([hand, c.many(2)], [c(top)], colour=colour)
    assert (Play(hand[0]) in legal_actions(state)) == ok


def test_a_hit_2x_cannot_be_passed_on_unless_stacking_is_on(c):
    hand = [c("red hit_2"), c("green 1"), c("green 2")]
    victim = [c("blue hit_2"), c("blue 1")]
    state = position([hand, victim, c.many(2)], [c("red 5")])
    after, _ = act(state, Play(hand[0]), random.Random(0))
    assert after.awaiting_press and legal_actions(after) == []
    stacked = replace(state, options=GameOptions(stack_hits=True))
    run = Run(stacked, ScriptedLauncher(c.many(8), shots=[0, 0, 0, 1]),
              [(0, Play(hand[0])), (1, Play(victim[0], uno=True)), (2, TakeHit())])
    assert [p.player for p in run.of(Pressed)] == [2, 2, 2, 2]
    assert run.to_move == 0


def test_stacking_lets_the_victim_take_the_hit(c):
    hand = [c("red hit_2"), c("green 1"), c("green 2")]
    victim = [c("blue hit_2"), c("blue 1")]
    state = position([hand, victim, c.many(2)], [c("red 5")],
                     options=GameOptions(stack_hits=True))
    run = Run(state, ScriptedLauncher(c.many(8), shots=[1, 1]),
              [(0, Play(hand[0])), (1, TakeHit())])
    assert len(run.state.hands[1]) == 4 and run.to_move == 2


def test_discard_all_discards_every_card_of_its_colour_under_it(c):
    da = c("yellow discard_all")
    yellows = [c("yellow 3"), c("yellow 9"), c("yellow skip")]
    keep = [c("red 4"), c("blue 4")]
    hand = [yellows[0], da, keep[0], yellows[1], keep[1], yellows[2]]
    start = c("yellow 7")
    run = Run(position([hand, c.many(3)], [start]), ScriptedLauncher(c.many(3)), [(0, Play(da))])
    assert ids(run.state.discard) == ids([start, *yellows, da])
    assert ids(run.state.hands[0]) == ids(keep)
    assert run.state.top == face("yellow discard_all") and run.to_move == 1


def test_discard_all_plays_on_another_discard_all(c):
    da = c("red discard_all")
    hand = [da, c("red 1"), c("green 1"), c("green 2")]
    run = Run(position([hand, c.many(3)], [c("yellow discard_all")]), ScriptedLauncher(c.many(3)),
              [(0, Play(da))])
    assert len(run.state.hands[0]) == 2 and run.state.colour == "red"


def _luck_position(c: Cards, **opts):
    pyl = c("wild_press_your_luck")
    hand = [pyl, c("red 3"), c("blue 8"), c("green 9"), c("yellow 1")]
    return pyl, hand, position([hand, c.many(3)], [c("red 5")], options=GameOptions(**opts))


def test_press_your_luck_discards_one_card_per_dry_press_then_goes_on_top(c):
    pyl, hand, state = _luck_position(c)
    run = Run(state, ScriptedLauncher(c.many(5), shots=[0, 0]), [
        (0, Play(pyl, "green")), (0, PressLuck()), (0, Discard(hand[2])),
        (0, PressLuck()), (0, Discard(hand[1])), (0, StopLuck())])
    assert ids(run.state.discard[-3:]) == ids([hand[2], hand[1], pyl])
    assert ids(run.state.hands[0]) == ids([hand[3], hand[4]])
    assert run.state.colour == "green" and run.to_move == 1
    assert run.of(LuckEnded) == [LuckEnded(0, 2, False)]


def test_press_your_luck_shot_takes_back_the_discards(c):
    pyl, hand, state = _luck_position(c)
    inside = c.many(5)
    run = Run(state, ScriptedLauncher(inside, shots=[0, 3]), [
        (0, Play(pyl, "green")), (0, PressLuck()), (0, Discard(hand[2])), (0, PressLuck())])
    assert sorted(ids(run.state.hands[0])) == sorted(ids(hand[1:] + inside[:3]))
    assert run.state.discard[-1] is pyl and run.state.colour == "green"
    assert run.to_move == 1 and run.state.luck is None


def test_press_your_luck_card_may_return_to_the_hand_by_option(c):
    pyl, _, state = _luck_position(c, pyl_card_returns=True)
    run = Run(state, ScriptedLauncher(c.many(5), shots=[2]),
              [(0, Play(pyl, "green")), (0, PressLuck())])
    assert pyl in run.state.hands[0] and run.state.top == face("red 5")


def test_press_your_luck_may_stop_at_once(c):
    pyl, _, state = _luck_position(c)
    run = Run(state, ScriptedLauncher(c.many(3)), [(0, Play(pyl, "blue")), (0, StopLuck())])
    assert run.state.discard[-1] is pyl and len(run.state.hands[0]) == 4


@pytest.mark.parametrize("rule, allowed", [
    ("any", {"red 3", "blue 8", "green 9", "yellow 1"}),
    ("colour", {"green 9"}),
    ("match", {"red 3"}),  # the first discard must match the red 5 under the run
])
def test_what_a_press_your_luck_discard_must_match_is_an_option(c, rule, allowed):
    pyl, _, state = _luck_position(c, pyl_discard=rule)
    run = Run(state, ScriptedLauncher(c.many(5), shots=[0]),
              [(0, Play(pyl, "green")), (0, PressLuck())])
    offered = {str(a.card.mild) for a in legal_actions(run.state)}
    assert offered == allowed


# --- Wild side action cards -----------------------------------------------------------------


def test_hit_5x_makes_the_next_player_press_five_times(c):
    hand = [c("red 1", "teal hit_5"), c("red 2", "pink 2"), c("red 7", "pink 7")]
    run = Run(position([hand, c.many(2), c.many(2)], [c("red 3", "teal 4")], side=WILD),
              ScriptedLauncher(c.many(20), shots=[0, 0, 4, 0, 6], side=WILD),
              [(0, Play(hand[0]))])
    assert len(run.state.hands[1]) == 12 and run.to_move == 2


def test_skip_everyone_returns_play_to_its_player(c):
    hand = [c("red 1", "teal skip_everyone"), c("red 2", "pink 2"), c("red 7", "pink 7")]
    run = Run(position([hand, c.many(2), c.many(2)], [c("red 3", "teal 4")], side=WILD),
              ScriptedLauncher(c.many(3), side=WILD), [(0, Play(hand[0]))])
    assert run.to_move == 0 and len(run.state.hands[0]) == 2


def test_wild_reverse_reverses_too(c):
    hand = [c("red 1", "teal reverse"), c("red 2", "pink 2"), c("red 7", "pink 7")]
    run = Run(position([hand, c.many(2), c.many(2)], [c("red 3", "teal 4")], side=WILD),
              ScriptedLauncher(c.many(3), side=WILD), [(0, Play(hand[0]))])
    assert run.to_move == 2 and run.state.direction == -1


def test_wild_discard_all_clears_the_colour_named_and_sets_another(c):
    wda = c("red 1", "wild_discard_all")
    teal = [c("red 2", "teal 5"), c("red 3", "teal hit_5")]
    keep = [c("red 4", "pink 5"), c("red 5", "orange 5")]
    run = Run(position([[wda, *teal, *keep], c.many(2)], [c("red 6", "purple 9")], side=WILD),
              ScriptedLauncher(c.many(3), side=WILD), [(0, Play(wda, "pink", "teal"))])
    assert ids(run.state.hands[0]) == ids(keep)
    assert ids(run.state.discard[-3:]) == ids([*teal, wda])
    assert run.state.colour == "pink"


def test_wild_all_out_attack_everybody_presses_for_the_target(c):
    attack = c("red 1", "wild_all_out_attack")
    hand = [attack, c("red 2", "pink 2"), c("red 7", "pink 7")]
    inside = c.many(10)
    hands = [hand, c.many(2), c.many(2), c.many(2)]
    run = Run(position(hands, [c("red 3", "teal 4")], side=WILD),
              ScriptedLauncher(inside, shots=[1, 0, 2, 3], side=WILD),
              [(0, Play(attack, "orange"))])
    assert [p.player for p in run.of(Pressed)] == [1, 2, 3, 0]
    assert {p.recipient for p in run.of(Pressed)} == {1}
    assert len(run.state.hands[1]) == 2 + 6
    assert [len(h) for h in run.state.hands[2:]] == [2, 2]
    assert run.to_move == 1 and run.state.colour == "orange"


def test_all_out_attack_without_the_attacker_by_option(c):
    attack = c("red 1", "wild_all_out_attack")
    hand = [attack, c("red 2", "pink 2"), c("red 7", "pink 7")]
    run = Run(position([hand, c.many(2), c.many(2)], [c("red 3", "teal 4")], side=WILD,
                       options=GameOptions(attack_includes_attacker=False)),
              ScriptedLauncher(c.many(5), shots=[0, 0], side=WILD),
              [(0, Play(attack, "orange"))])
    assert [p.player for p in run.of(Pressed)] == [1, 2]


# --- Flip -----------------------------------------------------------------------------------


def test_flip_turns_hands_and_pile_over_and_cycles_the_lid(c):
    flip = c("red flip", "teal 7")
    hand = [flip, c("blue 1", "orange 6"), c("green 2", "purple 3")]
    bottom, middle = c("red 4", "pink 9"), c("red 5", "orange skip_everyone")
    launcher = ScriptedLauncher(c.many(4))
    run = Run(position([hand, c.many(3)], [bottom, middle]), launcher, [(0, Play(flip))])
    s = run.state
    assert s.side == WILD and launcher.side == WILD and launcher.flips == 1
    assert ids(s.discard) == ids([flip, middle, bottom])  # the pile turned over
    assert s.top == face("pink 9") and s.colour == "pink"
    assert s.visible(0) == [face("orange 6"), face("purple 3")]
    assert run.of(FlipLid) == [FlipLid(WILD)]


@pytest.mark.parametrize("top, ok", [("blue 5", False), ("red 5", True), ("blue flip", True)])
def test_flip_only_on_its_colour_or_another_flip(c, top, ok):
    flip = c("red flip")
    state = position([[flip, c("green 1"), c("green 2")], c.many(2)], [c(top)])
    assert any(isinstance(a, Play) and a.card is flip for a in legal_actions(state)) == ok


def test_a_flip_that_turns_up_a_wild_face_names_a_colour(c):
    flip = c("red flip")
    bottom = c("red 4", "wild_discard_all")
    state = position([[flip, c("green 1"), c("green 2")], c.many(2)], [bottom, c("red 5")])
    assert Play(flip) not in legal_actions(state)
    run = Run(state, ScriptedLauncher(c.many(3)), [(0, Play(flip, "teal"))])
    assert run.state.colour == "teal" and run.state.top.kind == "wild_discard_all"
    opened = replace(state, options=GameOptions(flip_wild_top="open"))
    run = Run(opened, ScriptedLauncher(c.many(3)), [(0, Play(flip))])
    assert run.state.colour is None
    assert all(isinstance(a, Press) or a.card in run.state.hands[1]
               for a in legal_actions(run.state))
    assert len(legal_actions(run.state)) == 1 + 2  # press, or either card


# --- UNO --------------------------------------------------------------------------------


def test_a_player_caught_without_uno_presses_twice(c):
    hand = [c("red 1"), c("blue 2")]
    inside = c.many(5)
    run = Run(position([hand, c.many(3), c.many(3)], [c("red 5")]),
              ScriptedLauncher(inside, shots=[1, 2]),
              [(0, Play(hand[0])), (1, Pass()), (2, Catch())])
    assert run.of(Caught) == [Caught(0, 2)]
    assert ids(run.state.hands[0]) == ids([hand[1], *inside[:3]])
    assert run.to_move == 1


def test_calling_uno_leaves_nothing_to_catch(c):
    hand = [c("red 1"), c("blue 2")]
    run = Run(position([hand, c.many(3), c.many(3)], [c("red 5")]), ScriptedLauncher(c.many(3)),
              [(0, Play(hand[0], uno=True))])
    assert run.state.step == Step(TURN, 1)


def test_uno_can_only_be_caught_before_the_next_player_begins(c):
    hand = [c("red 1"), c("blue 2")]
    run = Run(position([hand, c.many(3), c.many(3)], [c("red 5")]), ScriptedLauncher(c.many(3)),
              [(0, Play(hand[0])), (1, Pass()), (2, Pass())])
    assert run.state.step == Step(TURN, 1)
    assert not any(isinstance(a, Catch) for a in legal_actions(run.state))


# --- winning, reloading, scoring ------------------------------------------------------------


def test_playing_the_last_card_wins_and_scores_the_other_hands(c):
    last = c("red 1")
    others = [c("blue 9"), c("wild"), c("green skip")]
    run = Run(position([[last], others[:2], others[2:]], [c("red 5")]), ScriptedLauncher(c.many(3)),
              [(0, Play(last))])
    assert run.state.over and run.state.winner == 0
    assert run.finished.points_won == 9 + 40 + 20
    assert run.of(HandOver) == [HandOver(0, MILD, 69)]


def test_scores_count_the_side_the_hand_ended_on(c):
    flip = c("red flip", "teal 2")
    others = [c("blue 9", "wild_all_out_attack"), c("green skip", "orange 3")]
    run = Run(position([[flip], others], [c("red 5")]), ScriptedLauncher(c.many(2)),
              [(0, Play(flip))])
    assert run.state.side == WILD and run.finished.points_won == 60 + 3


def test_going_out_on_a_hit_still_makes_the_next_player_press(c):
    last = c("red hit_2")
    inside = [c("wild"), c("blue 7"), c("red 2")]
    run = Run(position([[last], [c("blue 1")]], [c("red 5")]),
              ScriptedLauncher(inside, shots=[0, 2]), [(0, Play(last))])
    assert run.state.winner == 0 and run.finished.points_won == 1 + 40 + 7


def test_going_out_on_a_hit_without_the_presses_by_option(c):
    last = c("red hit_2")
    run = Run(position([[last], [c("blue 1")]], [c("red 5")],
                       options=GameOptions(last_card_penalties=False)),
              ScriptedLauncher(c.many(3)), [(0, Play(last))])
    assert run.state.over and run.finished.points_won == 1 and run.launcher.presses == 0


def test_press_your_luck_can_discard_down_to_a_win(c):
    pyl = c("wild_press_your_luck")
    last = c("blue 3")
    run = Run(position([[pyl, last], [c("green 4")]], [c("red 5")]),
              ScriptedLauncher(c.many(3), shots=[0]),
              [(0, Play(pyl, "red")), (0, PressLuck()), (0, Discard(last)), (0, StopLuck())])
    assert run.state.winner == 0 and run.state.discard[-1] is pyl


def test_an_empty_launcher_is_reloaded_from_the_discard_pile_side_in_play_at_the_back(c):
    hand = [c("red 9"), c("green 1"), c("green 2")]
    pile = [c("red 1", "pink 1"), c("red 2", "pink 2"), c("red 3", "pink 3"), c("red 4")]
    inside = c.many(2)
    launcher = ScriptedLauncher(inside, shots=[5], side=MILD)
    state = position([hand, c.many(3)], pile, side=WILD)
    run = Run(state, launcher, [(0, Press())])
    (load,) = run.of(Load)
    assert load.reason == "reload" and load.side == WILD
    assert sorted(ids(load.cards)) == sorted(ids(pile[:3]))
    assert ids(run.state.discard) == [pile[3].id]  # the top card stays
    assert launcher.side == WILD  # the lid was cycled once to turn the cartridge
    assert launcher.cards_left == 3 == run.state.launcher_count and run.state.reloads == 1


def test_reload_can_take_the_whole_pile_by_option(c):
    hand = [c("red 9"), c("green 1"), c("green 2")]
    pile = [c("red 1"), c("yellow 4")]
    other = [c("yellow 7"), c("blue 4"), c("blue 5")]
    state = position([hand, other], pile, options=GameOptions(reload_keep_top=False))
    run = Run(state, ScriptedLauncher(c.many(1), shots=[1]), [(0, Press())])
    assert run.state.discard == () and run.state.launcher_count == 2
    legal = legal_actions(run.state)  # the yellow 4 is still the card to match
    assert Play(other[0]) in legal and Play(other[1]) in legal and Play(other[2]) not in legal


def test_card_values_are_the_rule_texts():
    assert POINTS == {
        "hit_2": 10, "reverse": 20, "skip": 20, "flip": 20, "discard_all": 20, "hit_5": 20,
        "skip_everyone": 30, "wild": 40, "wild_discard_all": 50,
        "wild_press_your_luck": 60, "wild_all_out_attack": 60,
    }
    assert face("red 7").points == 7


def test_a_game_is_played_to_500_points():
    from launcher.games.flip_attack.bots import HeuristicBot
    from launcher.games.launchers import DirectLauncher

    rng = random.Random(3)
    table = FlipAttackTable(DirectLauncher(rng=random.Random(4)),
                     [HeuristicBot(random.Random(i)) for i in range(3)], rng)
    result = table.play_game()
    assert max(result.scores) >= 500 and result.scores[result.winner] == max(result.scores)
    running = [0, 0, 0]
    for hand in result.hands[:-1]:
        running[hand.winner] += hand.points_won
        assert max(running) < 500  # nobody had reached 500 before the last hand
    assert sum(h.points_won for h in result.hands) == sum(result.scores)


def test_the_hand_stops_at_the_turn_limit_with_no_winner(c):
    hand = [c("red 9"), c("green 1"), c("green 2")]
    state = position([hand, c.many(2)], [c("red 5")], options=GameOptions(max_turns=2))
    run = Run(state, ScriptedLauncher(c.many(4), shots=[0, 0]), [(0, Press()), (1, Press())])
    assert run.state.over and run.state.winner is None and run.finished.points_won == 0


# --- the checks themselves ------------------------------------------------------------------


class _LeakyLauncher(ScriptedLauncher):
    """Drops one card on the floor when it shoots."""

    def press(self):
        out = super().press()
        return out[:-1]


def test_the_table_notices_a_card_lost_by_the_launcher(c):
    hand = [c("red 9"), c("green 1"), c("green 2")]
    with pytest.raises(RuleViolation, match="not conserved"):
        Run(position([hand, c.many(3)], [c("red 5")]),
            _LeakyLauncher(c.many(5), shots=[2]), [(0, Press())])


def test_the_table_notices_a_lid_cycle_that_did_not_flip(c):
    class Stuck(ScriptedLauncher):
        def flip(self):
            return self.side

    flip = c("red flip")
    with pytest.raises(LauncherFault):
        Run(position([[flip, c("red 1"), c("red 2")], c.many(3)], [c("red 5")]),
            Stuck(c.many(3)), [(0, Play(flip))])


def test_an_action_out_of_turn_is_refused(c):
    hand = [c("red hit_2"), c("green 1"), c("green 2")]
    state = position([hand, c.many(3)], [c("red 5")])
    after, _ = act(state, Play(hand[0]), random.Random(0))
    with pytest.raises(RuleViolation):
        act(after, Press(), random.Random(0))  # a press is due, not a decision
    with pytest.raises(RuleViolation):
        shot(state, [], random.Random(0))  # no press was due


def test_a_game_of_hands_that_never_finish_ends_without_a_winner():
    from launcher.games.flip_attack.bots import RandomBot
    from launcher.games.launchers import DirectLauncher

    table = FlipAttackTable(DirectLauncher(rng=random.Random(1)),
                     [RandomBot(random.Random(i)) for i in range(3)], random.Random(2),
                     GameOptions(max_turns=1))
    result = table.play_game(max_hands=3)
    assert len(result.hands) == 3 and result.winner is None and result.scores == [0, 0, 0]
