"""Rule tests for UNO Flip (rules/uno-flip-vs-uno.txt), from exact positions."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from uno_position import Pick, Run, position

from launcher.games.cards import DARK, LIGHT
from launcher.games.uno import rules as uno
from launcher.games.uno.flip import UNO_FLIP_GAME
from launcher.games.uno.game import ACCEPT, CHALLENGE, CHALLENGE_IT, CHOOSE, COLOUR, DRAW, TURN, UNO
from launcher.games.uno.rules import choose_dealer, legal, start

PINK, ORANGE, TEAL, PURPLE = range(4)
RED, YELLOW, GREEN, BLUE = range(4)


def rules(**options):
    return UNO_FLIP_GAME.rules(UNO_FLIP_GAME.options(**options))


@pytest.fixture
def pick() -> Pick:
    return Pick(rules())


def test_the_deck_has_112_double_sided_cards_as_the_text_lists():
    r = rules()
    assert r.size == 112
    light = Counter(c.front.kind for c in r.deck)
    dark = Counter(c.back.kind for c in r.deck)
    assert light == {"number": 72, "draw_one": 8, "reverse": 8, "skip": 8, "flip": 8,
                     "wild": 4, "wild_draw_two": 4}
    assert dark == {"number": 72, "draw_five": 8, "reverse": 8, "skip_everyone": 8, "flip": 8,
                    "wild": 4, "wild_draw_colour": 4}
    assert {c.back.colour for c in r.deck} == {"pink", "teal", "orange", "purple", None}
    assert min(c.front.number for c in r.deck if c.front.number is not None) == 1  # no zeros
    assert r.options.uno_penalty == 2 and UNO_FLIP_GAME.sides == (LIGHT, DARK)


def test_card_values_per_side():
    r = rules()
    light, dark = (s.points for s in r.table.sides)
    values = {}
    for c in range(r.size):
        values[("light", r.deck[c].front.kind)] = light[c]
        values[("dark", r.deck[c].back.kind)] = dark[c]
    assert {k: v for k, v in values.items() if k[1] != "number"} == {
        ("light", "draw_one"): 10, ("light", "reverse"): 20, ("light", "skip"): 20,
        ("light", "flip"): 20, ("light", "wild"): 40, ("light", "wild_draw_two"): 50,
        ("dark", "draw_five"): 20, ("dark", "reverse"): 20, ("dark", "skip_everyone"): 30,
        ("dark", "flip"): 20, ("dark", "wild"): 40, ("dark", "wild_draw_colour"): 60}


def test_the_dealer_is_the_highest_number_and_symbols_count_zero():
    r = rules()
    number = r.table.sides[0].number
    for seed in range(100):
        dealer, rounds = choose_dealer(r, 3, random.Random(seed))
        values = [max(number[c], 0) for c in rounds[-1]]
        assert values.count(max(values)) == 1
        if len(rounds) == 1:
            assert values[dealer] == max(values)


# --- first cards -----------------------------------------------------------------------------


def _start(first: list[str], dealer: int = 0, **options):
    r = rules(**options)
    pick = Pick(r)
    hands = [pick.many(f"{c} 1", f"{c} 2") for c in ("red", "yellow", "green", "blue")]
    turned = [pick(name) for name in first]
    return start(r, hands, turned + pick.rest(), dealer, random.Random(1)), turned


def test_first_draw_one_the_first_player_draws_one_and_is_skipped():
    state, _ = _start(["blue draw_one"])
    assert state.agenda == [(TURN, 2, 0), (DRAW, 1, 1)]


def test_first_skip_and_wild():
    state, _ = _start(["red skip"], dealer=3)
    assert state.agenda == [(TURN, 1, 0)]
    state, _ = _start(["wild"], dealer=3)
    assert state.agenda == [(TURN, 0, 0), (COLOUR, 0, 0)]


def test_first_reverse_the_dealer_goes_first_and_play_moves_right():
    state, _ = _start(["green reverse"], dealer=2)
    assert state.direction == -1 and state.agenda == [(TURN, 2, 0)]


@pytest.mark.parametrize("name", ["wild_draw_two", "yellow flip"])
def test_first_wild_draw_two_or_flip_goes_back_and_another_is_turned(name):
    state, turned = _start([name, "red 9"])
    assert state.discard == [turned[1]] and turned[0] in state.todo[0][1]


# --- the flip ----------------------------------------------------------------------------------


def test_a_flip_turns_over_the_discard_pile_the_draw_pile_and_every_hand(pick):
    bottom = pick("blue 4")
    top = pick("red 7")
    flip = pick("red flip")
    hands = [[flip, *pick.many("blue 1", "blue 2")], pick.many("green 1", "green 2")]
    run = Run(*position(pick, hands, [bottom, top]), [(0, flip)])
    r = pick.rules
    s = run.state
    assert s.side == 1 and s.flips == 1
    # The pile is turned over: the Flip is at the bottom, the old bottom card is on top,
    # showing its Dark face; its colour is the one in play.
    assert s.discard == [flip, top, bottom]
    dark = r.deck[bottom].back
    if dark.colour is not None:
        assert s.colour == r.table.sides[1].colour[bottom]
    # The launcher's cartridge turned too (a lid cycle), and hands show their Dark faces.
    assert run.launcher.side == DARK and run.launcher.flips == 1
    assert s.names(s.hands[1]) == [str(r.deck[c].back) for c in s.hands[1]]
    assert run.of("flip") == [("flip", 1)]


def test_a_flip_that_turns_a_wild_up_lets_its_player_name_the_colour():
    r = rules()
    pick = Pick(r)
    # A card whose Dark face is a wild, as the pile's bottom card.
    bottom = next(c for c in range(r.size) if r.deck[c].back.is_wild
                  and not r.deck[c].front.is_wild)
    pick.used.append(bottom)
    flip = pick("blue flip")
    top = pick("blue 7")
    hands = [[flip, *pick.many("red 1", "red 2")], pick.many("green 1", "green 2")]
    run = Run(*position(pick, hands, [bottom, top]), [(0, flip), (0, CHOOSE + TEAL)])
    assert run.state.colour == TEAL and run.step == (TURN, 1, 0)
    assert run.state.discard[-1] == bottom and run.state.side == 1


# --- action cards -----------------------------------------------------------------------


def test_draw_one_next_player_draws_one_and_loses_the_turn(pick):
    d1 = pick("red draw_one")
    hands = [[d1, pick("blue 1")], pick.many("green 1", "green 2"), pick.many("yellow 1")]
    run = Run(*position(pick, hands, [pick("red 7")]), [(0, d1 | UNO)])
    assert [len(h) for h in run.state.hands] == [1, 3, 1] and run.step == (TURN, 2, 0)


def test_draw_five_on_the_dark_side(pick):
    d5 = pick("pink draw_five", side=1)
    top = pick("pink 7", side=1)
    hands = [[d5, pick("teal 1", side=1)], [pick("orange 1", side=1)], [pick("teal 2", side=1)]]
    run = Run(*position(pick, hands, [top], side=1), [(0, d5 | UNO)])
    assert [len(h) for h in run.state.hands] == [1, 6, 1] and run.step == (TURN, 2, 0)


def test_skip_everyone_gives_its_player_another_turn(pick):
    se = pick("teal skip_everyone", side=1)
    hands = [[se, pick("teal 1", side=1), pick("teal 4", side=1)],
             [pick("orange 1", side=1)], [pick("pink 2", side=1)], [pick("pink 3", side=1)]]
    run = Run(*position(pick, hands, [pick("teal 7", side=1)], side=1), [(0, se)])
    assert run.step == (TURN, 0, 0)


@pytest.mark.parametrize("name", ["red reverse", "red skip"])
def test_two_players_reverse_and_skip_give_another_turn(pick, name):
    card = pick(name)
    hands = [[card, pick("blue 1"), pick("blue 2")], pick.many("green 1")]
    run = Run(*position(pick, hands, [pick("red 7")]), [(0, card)])
    assert run.step == (TURN, 0, 0)


# --- Wild Draw Two and Wild Draw Color -------------------------------------------------------


def _wild_draw(name: str, holds: bool, side: int, **options):
    r = rules(**options)
    pick = Pick(r)
    card = pick(name, side=side)
    if side == 0:
        mine = pick.many("red 2" if holds else "blue 2", "green 9")
        top = pick("red 7")
        others = [pick.many("yellow 1"), pick.many("blue 5")]
    else:
        mine = pick.many("pink 2" if holds else "teal 2", "orange 9", side=1)
        top = pick("pink 7", side=1)
        others = [pick.many("orange 1", side=1), pick.many("teal 5", side=1)]
    # Draws, on the Dark side: two cards of other colours, then a purple one, then more.
    draws = [pick("orange 3", side=1), pick("teal 3", side=1), pick("purple 3", side=1),
             pick("orange 4", side=1), pick("teal 4", side=1)] if side else []
    state, pile = position(pick, [[card, *mine], *others], [top], draws=draws, side=side)
    return state, pile, card


@pytest.mark.parametrize("holds", [False, True])
def test_wild_draw_two_is_legal_only_without_the_colour_when_strict(holds):
    state, _, card = _wild_draw("wild_draw_two", holds, 0, wild_draw="strict")
    assert (card in legal(state)) == (not holds)


def test_wild_draw_two_accepted_and_challenged():
    state, pile, card = _wild_draw("wild_draw_two", True, 0)
    run = Run(state, pile, [(0, card), (0, CHOOSE + BLUE)])
    assert run.step == (CHALLENGE, 1, 0)
    state, pile, card = _wild_draw("wild_draw_two", True, 0)
    run = Run(state, pile, [(0, card), (0, CHOOSE + BLUE), (1, ACCEPT)])
    assert [len(h) for h in run.state.hands] == [2, 3, 1] and run.step == (TURN, 2, 0)
    # Guilty: they draw 2 instead of you.
    state, pile, card = _wild_draw("wild_draw_two", True, 0)
    run = Run(state, pile, [(0, card), (0, CHOOSE + BLUE), (1, CHALLENGE_IT)])
    assert [len(h) for h in run.state.hands] == [4, 1, 1] and run.step == (TURN, 1, 0)
    # Innocent: you draw 2 + 2 = 4.
    state, pile, card = _wild_draw("wild_draw_two", False, 0)
    run = Run(state, pile, [(0, card), (0, CHOOSE + BLUE), (1, CHALLENGE_IT)])
    assert [len(h) for h in run.state.hands] == [2, 5, 1] and run.step == (TURN, 2, 0)


def test_wild_draw_colour_the_next_player_draws_until_the_colour_named():
    state, pile, card = _wild_draw("wild_draw_colour", True, 1)
    run = Run(state, pile, [(0, card), (0, CHOOSE + PURPLE), (1, ACCEPT)])
    # orange 3, teal 3, then purple 3: three cards, and the turn is lost.
    assert [len(h) for h in run.state.hands] == [2, 4, 1] and run.step == (TURN, 2, 0)
    assert run.state.colour == PURPLE


def test_wild_draw_colour_challenge_guilty_the_player_draws_until_the_colour():
    state, pile, card = _wild_draw("wild_draw_colour", True, 1)
    run = Run(state, pile, [(0, card), (0, CHOOSE + PURPLE), (1, CHALLENGE_IT)])
    assert [len(h) for h in run.state.hands] == [5, 1, 1] and run.step == (TURN, 1, 0)


def test_wild_draw_colour_challenge_innocent_until_the_colour_plus_two():
    state, pile, card = _wild_draw("wild_draw_colour", False, 1)
    run = Run(state, pile, [(0, card), (0, CHOOSE + PURPLE), (1, CHALLENGE_IT)])
    assert [len(h) for h in run.state.hands] == [2, 6, 1] and run.step == (TURN, 2, 0)


def test_draw_until_a_colour_that_never_comes_stops_when_nothing_is_left():
    r = rules()
    pick = Pick(r)
    card = pick("wild_draw_colour", side=1)
    # Every purple card in player 2's hand: the draw pile and the discards hold none.
    purples = [c for c in range(r.size) if r.deck[c].back.colour == "purple"]
    pick.used += purples
    hands = [[card, pick("pink 2", side=1)], [pick("orange 1", side=1)], purples]
    state, pile = position(pick, hands, [pick("pink 7", side=1)], side=1)
    run = Run(state, pile, [(0, card | UNO), (0, CHOOSE + PURPLE), (1, ACCEPT)])
    assert run.step == (TURN, 2, 0)
    assert run.state.pile == 0 and len(run.state.discard) == 1  # everything else was drawn
    # Player 1 took every card but the Wild Draw Color (the top), player 0's last card and
    # player 2's purples.
    assert len(run.state.hands[1]) == r.size - 1 - 1 - len(purples)


# --- scoring ----------------------------------------------------------------------------


def test_points_are_counted_on_the_side_the_hand_ended_on(pick):
    last = pick("pink 3", side=1)
    other = pick("teal 5", side=1)
    se = pick("orange skip_everyone", side=1)
    run = Run(*position(pick, [[last], [other, se]], [pick("pink 9", side=1)], side=1),
              [(0, last)])
    assert run.result is not None and run.result.points == 5 + 30 and run.result.side == 1


def test_a_last_draw_five_makes_the_next_player_draw_and_it_counts(pick):
    d5 = pick("pink draw_five", side=1)
    draws = [pick(f"teal {n}", side=1) for n in (1, 2, 3, 4, 5)]
    run = Run(*position(pick, [[d5], [pick("orange 9", side=1)]], [pick("pink 7", side=1)],
                        draws=draws, side=1), [(0, d5)])
    assert run.result is not None and run.result.points == 9 + 15


def test_a_last_wild_draw_colour_is_named_and_drawn(pick):
    card = pick("wild_draw_colour", side=1)
    draws = [pick("orange 3", side=1), pick("teal 2", side=1)]
    run = Run(*position(pick, [[card], [pick("orange 9", side=1)]], [pick("pink 7", side=1)],
                        draws=draws, side=1), [(0, card), (0, CHOOSE + TEAL)])
    assert run.result is not None and run.result.points == 9 + 3 + 2


# --- a Flip as the last card; the dealer draw and the Wild's value (options) -------------------


def _last_flip(**options):
    r = rules(**options)
    pick = Pick(r)
    flip = pick("yellow flip")  # dark face: orange 6
    others = pick.many("red 8", "red 9", "green 4")  # dark: pink 4, orange 3, teal 1
    run = Run(*position(pick, [[flip], others], [pick("yellow 3")]), [(0, flip)])
    return r, run


def test_a_flip_laid_last_flips_everything_and_the_dark_side_scores():
    r, run = _last_flip()
    assert r.options.last_flip == "flip"
    assert run.result is not None and run.result.winner == 0
    assert run.result.side == 1 and run.result.flips == 1
    assert run.result.points == 4 + 3 + 1  # the light side would score 8 + 9 + 4
    assert run.launcher.side == DARK  # the lid was cycled for it
    assert run.state.discard[0] == r.card("yellow flip")  # the Flip went to the bottom


def test_a_flip_laid_last_with_no_flip_scores_the_light_side():
    _, run = _last_flip(last_flip="no_flip")
    assert run.result is not None and run.result.side == 0 and run.result.flips == 0
    assert run.result.points == 8 + 9 + 4


def test_the_dealer_by_points_option_counts_symbols_at_their_value():
    r = rules(dealer_by="points")
    points = r.table.sides[0].points
    for seed in range(100):
        dealer, rounds = choose_dealer(r, 3, random.Random(seed))
        values = [points[c] for c in rounds[-1]]
        assert values.count(max(values)) == 1
        if len(rounds) == 1:
            assert values[dealer] == max(values)
    # An exact draw where the two readings disagree: a Skip (20 points, number 0) against a 9.
    r_num = rules()
    assert r_num.options.dealer_by == "number"
    skip, nine = r.card("red skip"), r.card("red 9")
    assert points[skip] > points[nine]
    assert max(r_num.table.sides[0].number[skip], 0) < r_num.table.sides[0].number[nine]


def test_the_wild_is_worth_40_or_50_on_either_side():
    r40, r50 = rules(), rules(wild_points=50)
    wild_l, wild_d = r40.card("wild"), r40.card("wild", side=1)
    assert (r40.table.sides[0].points[wild_l], r40.table.sides[1].points[wild_d]) == (40, 40)
    assert (r50.table.sides[0].points[wild_l], r50.table.sides[1].points[wild_d]) == (50, 50)
    # The other wilds keep their own values.
    wd2 = r50.card("wild_draw_two")
    assert r50.table.sides[0].points[wd2] == 50
    assert r50.table.sides[1].points[r50.card("wild_draw_colour", side=1)] == 60
    with pytest.raises(ValueError, match="wild_points"):
        rules(wild_points=45)


def test_the_dealer_draw_where_the_two_readings_disagree(monkeypatch):
    # Player 0 draws a red Skip (20 points; a symbol, so zero by number), player 1 a red 9.
    for dealer_by, expected in (("number", 1), ("points", 0)):
        r = rules(dealer_by=dealer_by)
        skip, nine = r.card("red skip"), r.card("red 9")

        def rig(cards, _rng, skip=skip, nine=nine):  # the draws come off the end
            cards.remove(skip)
            cards.remove(nine)
            cards += [nine, skip]

        monkeypatch.setattr(uno, "shuffle_as_random", rig)
        dealer, rounds = choose_dealer(r, 2, random.Random(0))
        assert rounds == [[skip, nine]] and dealer == expected, dealer_by


def test_a_wild_left_in_hand_scores_40_or_50():
    for options, wild_value in (({}, 40), ({"wild_points": 50}, 50)):
        pick = Pick(rules(**options))
        last = pick("yellow 3")
        run = Run(*position(pick, [[last], [pick("wild"), pick("red 8")]], [pick("yellow 5")]),
                  [(0, last)])
        assert run.result is not None and run.result.winner == 0
        assert run.result.points == wild_value + 8
