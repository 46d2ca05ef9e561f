"""Rule tests for classic UNO (rules/uno.txt) and UNO Splash, from exact positions."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from uno_position import Pick, Run, position

from launcher.games.base import OptionError, RuleViolation
from launcher.games.cards import CLASSIC
from launcher.games.uno.flip import UNO_FLIP_GAME
from launcher.games.uno.game import (
    ACCEPT,
    CATCH,
    CATCH_THEM,
    CHALLENGE,
    CHALLENGE_IT,
    CHOOSE,
    CLASSIC_UNO,
    COLOUR,
    DRAW,
    DRAW_CARD,
    DRAWN,
    KEEP,
    LOAD,
    PASS,
    TARGET,
    TURN,
    UNO,
    with_options,
)
from launcher.games.uno.rules import act, choose_dealer, deal, legal, start
from launcher.games.uno.splash import UNO_SPLASH
from launcher.games.uno.table import HandResult, UnoTable

RED, YELLOW, GREEN, BLUE = range(4)


def rules(**options):
    return CLASSIC_UNO.rules(CLASSIC_UNO.options(**options))


@pytest.fixture
def pick() -> Pick:
    return Pick(rules())


# --- the deck --------------------------------------------------------------------------------


def faces(r) -> Counter:
    return Counter(c.front.kind for c in r.deck)


def test_the_classic_deck_has_108_cards_without_its_blanks():
    r = rules()
    assert r.size == 108
    assert faces(r) == {"number": 76, "skip": 8, "reverse": 8, "draw_two": 8, "wild": 4,
                        "wild_draw_four": 4}
    numbers = Counter((c.front.colour, c.front.number) for c in r.deck
                      if c.front.number is not None)
    assert numbers[("red", 0)] == 1 and numbers[("blue", 9)] == 2 and len(numbers) == 40


@pytest.mark.parametrize("blanks, kind", [("wild", "wild"), ("swap_hands", "swap_hands"),
                                          ("shuffle_hands", "shuffle_hands")])
def test_the_four_blank_cards_or_their_variants_make_112(blanks, kind):
    r = rules(blank_cards=blanks)
    assert r.size == 112
    assert faces(r)[kind] == (8 if kind == "wild" else 4)


def test_card_values_follow_the_text():
    r = rules(blank_cards="swap_hands")
    pts = r.table.sides[0].points
    by_kind = {r.deck[c].front.kind: pts[c] for c in range(r.size)
               if r.deck[c].front.kind != "number"}
    assert by_kind == {"skip": 20, "reverse": 20, "draw_two": 20, "swap_hands": 40, "wild": 50,
                       "wild_draw_four": 50}
    seven = r.card("green 7")
    assert pts[seven] == 7


def test_the_splash_deck_is_classic_without_blanks_and_refuses_blank_options():
    r = UNO_SPLASH.rules()
    assert r.size == 108 and faces(r) == faces(rules())
    assert r.options.uno_penalty == 2
    with pytest.raises(ValueError, match="blank_cards"):
        UNO_SPLASH.options(blank_cards="wild")


# --- setup -----------------------------------------------------------------------------------


def test_the_highest_card_drawn_chooses_the_dealer_and_ties_draw_again():
    r = rules()
    pts = r.table.sides[0].points
    ties = 0
    for seed in range(200):
        dealer, rounds = choose_dealer(r, 4, random.Random(seed))
        last = rounds[-1]
        best = max(pts[c] for c in last)
        assert [pts[c] for c in last].count(best) == 1
        if len(rounds) == 1:
            assert pts[last[dealer]] == best
        ties += len(rounds) > 1
        # The tied players of a round are the ones who draw in the next.
        for before, after in itertools.pairwise(rounds):
            top = max(pts[c] for c in before)
            assert len(after) == [pts[c] for c in before].count(top)
    assert ties > 10  # wilds (50) and action cards (20) tie often


def test_the_deal_gives_seven_each_and_loads_the_rest():
    r = rules()
    state = deal(r, 3, dealer=1, rng=random.Random(4))
    assert [len(h) for h in state.hands] == [7, 7, 7]
    (load,) = state.todo
    assert load[0] == LOAD and len(load[1]) == state.pile == 108 - 21 - 1
    assert state.direction in (1, -1)


def _start(r, first: list[str], players: int = 4, dealer: int = 0, options=None):
    """Deal plain hands, then turn ``first`` in order (returned cards go back at random)."""
    pick = Pick(r)
    colours = ("red", "yellow", "green", "blue")
    hands = [pick.many(f"{colours[i]} 1", f"{colours[i]} 2") for i in range(players)]
    turned = [pick(name) for name in first]
    rest = turned + pick.rest()
    state = start(r, hands, rest, dealer, random.Random(1))
    return state, turned


def test_first_card_number_left_of_dealer_starts_clockwise():
    state, turned = _start(rules(), ["blue 5"], dealer=2)
    assert state.agenda == [(TURN, 3, 0)] and state.direction == 1
    assert state.discard == turned and state.colour == BLUE


def test_first_card_skip_skips_the_first_player():
    state, _ = _start(rules(), ["blue skip"], dealer=2)
    assert state.agenda == [(TURN, 0, 0)]  # seat 3 (left of the dealer) is skipped


def test_first_card_reverse_right_of_dealer_starts_to_the_right():
    state, _ = _start(rules(), ["green reverse"], dealer=2)
    assert state.direction == -1 and state.agenda == [(TURN, 1, 0)]
    # The other reading (UNO Flip's Reverse card): the dealer starts, play goes right.
    state, _ = _start(rules(first_reverse="dealer"), ["green reverse"], dealer=2)
    assert state.direction == -1 and state.agenda == [(TURN, 2, 0)]


def test_first_card_draw_two_first_player_draws_two_and_is_skipped():
    state, _ = _start(rules(), ["yellow draw_two"], dealer=0)
    assert state.agenda == [(TURN, 2, 0), (DRAW, 1, 2)]
    run = Run(state, state.todo.pop()[1], [])
    assert [len(h) for h in run.state.hands] == [2, 4, 2, 2]
    assert run.step == (TURN, 2, 0)


def test_first_card_wild_first_player_names_the_colour_then_plays():
    state, _ = _start(rules(), ["wild"], dealer=0)
    assert state.agenda == [(TURN, 1, 0), (COLOUR, 1, 0)]
    run = Run(state, state.todo.pop()[1], [(1, CHOOSE + GREEN)])
    assert run.state.colour == GREEN and run.step == (TURN, 1, 0)


def test_first_card_wild_draw_four_goes_back_and_another_is_turned():
    state, turned = _start(rules(), ["wild_draw_four", "wild_draw_four", "red 8"])
    assert state.discard == [turned[2]]
    loaded = state.todo[0][1]
    assert turned[0] in loaded and turned[1] in loaded
    assert len(loaded) + 1 + 8 == 108


def test_splash_turns_the_same_first_cards():
    r = UNO_SPLASH.rules()
    state, _ = _start(r, ["red skip"], dealer=1)
    assert state.agenda == [(TURN, 3, 0)]
    state, turned = _start(r, ["wild_draw_four", "blue 2"])
    assert state.discard == [turned[1]]


# --- turns -----------------------------------------------------------------------------------


def test_a_card_matches_by_colour_number_or_symbol_and_wilds_match_anything(pick):
    hand = pick.many("red 3", "blue 7", "blue skip", "green 4", "wild", "wild_draw_four",
                     "yellow 9")
    state, _ = position(pick, [hand, pick.many("red 1")], [pick("yellow skip")])
    # Yellow 9 by colour, blue Skip by symbol, both wilds; red 3, blue 7, green 4 do not.
    assert set(legal(state)) == {hand[2], hand[4], hand[5], hand[6], DRAW_CARD}
    with pytest.raises(RuleViolation, match="may not"):
        act(state, hand[0], random.Random(0))
    pick2 = Pick(rules())
    hand2 = pick2.many("red 3", "blue 7", "green 4")
    state, _ = position(pick2, [hand2, pick2.many("red 1")], [pick2("yellow 7")])
    assert set(legal(state)) == {hand2[1], DRAW_CARD}  # the number matches


def test_a_player_may_draw_instead_and_then_play_only_the_drawn_card(pick):
    hand = pick.many("red 3", "blue 9")
    drawn = pick("red 5")
    state, pile = position(pick, [hand, pick.many("green 1", "green 2")], [pick("red 7")],
                           draws=[drawn])
    run = Run(state.copy(), pile, [(0, DRAW_CARD)])
    assert run.step == (DRAWN, 0, drawn)
    assert run.offered == [drawn, KEEP]  # red 3 is not offered any more
    with pytest.raises(RuleViolation):
        act(run.state, hand[0], random.Random(0))
    run = Run(state, pile, [(0, DRAW_CARD), (0, drawn)])
    assert run.state.discard[-1] == drawn and run.step == (TURN, 1, 0)


def test_a_drawn_card_that_does_not_play_ends_the_turn(pick):
    state, pile = position(pick, [pick.many("red 3"), pick.many("green 1", "green 2")],
                           [pick("red 7")], draws=[pick("blue 5")])
    run = Run(state, pile, [(0, DRAW_CARD)])
    assert run.step == (TURN, 1, 0) and len(run.state.hands[0]) == 2


def test_keeping_a_playable_drawn_card_passes_the_turn(pick):
    drawn = pick("red 5")
    state, pile = position(pick, [pick.many("red 3", "red 4"), pick.many("green 1", "green 2")],
                           [pick("red 7")], draws=[drawn])
    run = Run(state, pile, [(0, DRAW_CARD), (0, KEEP)])
    assert run.step == (TURN, 1, 0) and drawn in run.state.hands[0]


@pytest.mark.parametrize("kind, nxt", [("skip", 2), ("reverse", 3), ("number", 1)])
def test_skip_and_reverse_with_four_players(pick, kind, nxt):
    card = pick(f"red {kind if kind != 'number' else 6}")
    hands = [[card, pick("blue 1"), pick("blue 2")], pick.many("green 1", "green 2"),
             pick.many("yellow 1", "yellow 2"), pick.many("blue 3", "blue 4")]
    run = Run(*position(pick, hands, [pick("red 7")]), [(0, card)])
    assert run.step == (TURN, nxt, 0)
    assert run.state.direction == (-1 if kind == "reverse" else 1)


def test_draw_two_next_player_draws_two_and_loses_the_turn(pick):
    d2 = pick("red draw_two")
    hands = [[d2, pick("blue 1"), pick("blue 2")]] + [pick.many("green 1", "green 2")
                                                      for _ in range(2)]
    run = Run(*position(pick, hands, [pick("red 7")]), [(0, d2)])
    assert [len(h) for h in run.state.hands] == [2, 4, 2]
    assert run.step == (TURN, 2, 0)


def test_draw_two_does_not_stack(pick):
    d2 = pick("red draw_two")
    other = pick("blue draw_two")
    hands = [[d2, pick("blue 1"), pick("blue 2")], [other, pick("green 1")]]
    run = Run(*position(pick, hands, [pick("red 7")]), [(0, d2)])
    assert len(run.state.hands[1]) == 4  # no chance to pass it on
    assert run.step == (TURN, 0, 0)


# --- two players -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["red reverse", "red skip", "red draw_two"])
def test_two_players_reverse_skip_and_draw_two_give_another_turn(pick, name):
    card = pick(name)
    hands = [[card, pick("blue 1"), pick("blue 2")], pick.many("green 1", "green 2")]
    run = Run(*position(pick, hands, [pick("red 7")]), [(0, card)])
    assert run.step == (TURN, 0, 0) and run.state.direction == 1
    assert len(run.state.hands[1]) == (4 if "draw" in name else 2)


def test_two_players_wild_draw_four_returns_play_to_its_player(pick):
    w4 = pick("wild_draw_four")
    hands = [[w4, pick("blue 1"), pick("blue 2")], pick.many("green 1", "green 2")]
    run = Run(*position(pick, hands, [pick("red 7")]), [(0, w4), (0, CHOOSE + BLUE), (1, ACCEPT)])
    assert len(run.state.hands[1]) == 6 and run.step == (TURN, 0, 0)


# --- Wild Draw Four and the challenge -----------------------------------------------------------


def _w4(pick, holds_red: bool, **options):
    pick = Pick(rules(**options))
    w4 = pick("wild_draw_four")
    mine = pick.many("red 2" if holds_red else "blue 7", "green 9")
    hands = [[w4, *mine], pick.many("yellow 1", "yellow 2"), pick.many("blue 1", "blue 2")]
    state, pile = position(pick, hands, [pick("red 7")])
    return state, pile, w4


@pytest.mark.parametrize("holds_red", [False, True])
def test_wild_draw_four_may_be_played_with_a_matching_number_only(pick, holds_red):
    state, _, w4 = _w4(pick, holds_red, wild_draw="strict")
    assert (w4 in legal(state)) == (not holds_red)
    state, _, w4 = _w4(pick, holds_red)
    assert w4 in legal(state)  # "challenge": it may be laid, and risked


def test_wild_draw_four_accepted_victim_draws_four_and_is_skipped(pick):
    state, pile, w4 = _w4(pick, holds_red=True)
    run = Run(state, pile, [(0, w4), (0, CHOOSE + GREEN), (1, ACCEPT)])
    assert [len(h) for h in run.state.hands] == [2, 6, 2]
    assert run.state.colour == GREEN and run.step == (TURN, 2, 0)


def test_only_the_victim_may_challenge(pick):
    state, pile, w4 = _w4(pick, holds_red=False)
    run = Run(state, pile, [(0, w4), (0, CHOOSE + GREEN)])
    assert run.step == (CHALLENGE, 1, 0) and set(run.offered) == {CHALLENGE_IT, ACCEPT}


def test_challenge_succeeds_the_guilty_player_draws_four(pick):
    state, pile, w4 = _w4(pick, holds_red=True)
    run = Run(state, pile, [(0, w4), (0, CHOOSE + GREEN), (1, CHALLENGE_IT)])
    assert [len(h) for h in run.state.hands] == [6, 2, 2]
    assert run.of("challenge") == [("challenge", 1, 0, True)]
    # The challenger draws nothing and is not skipped: the colour named stands.
    assert run.step == (TURN, 1, 0) and run.state.colour == GREEN


def test_challenge_fails_the_challenger_draws_six(pick):
    state, pile, w4 = _w4(pick, holds_red=False)
    run = Run(state, pile, [(0, w4), (0, CHOOSE + GREEN), (1, CHALLENGE_IT)])
    assert [len(h) for h in run.state.hands] == [2, 8, 2]
    assert run.of("challenge") == [("challenge", 1, 0, False)]
    assert run.step == (TURN, 2, 0)


def test_strict_wild_draw_four_has_no_challenge(pick):
    state, pile, w4 = _w4(pick, holds_red=False, wild_draw="strict")
    run = Run(state, pile, [(0, w4), (0, CHOOSE + GREEN)])
    assert [len(h) for h in run.state.hands] == [2, 6, 2] and run.step == (TURN, 2, 0)


# --- UNO ---------------------------------------------------------------------------------------


def _last_two(r):
    pick = Pick(r)
    hand = pick.many("red 3", "blue 9")
    hands = [hand, pick.many("green 1", "green 2"), pick.many("yellow 1", "yellow 2")]
    return (*position(pick, hands, [pick("red 7")]), hand)


@pytest.mark.parametrize("game, penalty", [(CLASSIC_UNO, 4), (UNO_SPLASH, 2)])
def test_caught_without_uno_draws_the_penalty(game, penalty):
    state, pile, hand = _last_two(game.rules())
    run = Run(state, pile, [(0, hand[0]), (1, PASS), (2, CATCH_THEM)])
    assert len(run.state.hands[0]) == 1 + penalty
    assert run.of("caught") == [("caught", 0, 2)]
    assert run.step == (TURN, 1, 0)


def test_the_catch_comes_before_the_next_player_begins():
    state, pile, hand = _last_two(rules())
    run = Run(state, pile, [(0, hand[0])])
    assert run.step == (CATCH, 1, 0) and set(run.offered) == {CATCH_THEM, PASS}
    run = Run(*_last_two(rules())[:2], [(0, hand[0]), (1, CATCH_THEM)])
    assert run.step == (TURN, 1, 0)  # one catch closes the window
    assert len(run.state.hands[0]) == 5


def test_calling_uno_is_safe_and_nobody_may_catch():
    state, pile, hand = _last_two(rules())
    run = Run(state, pile, [(0, hand[0] | UNO)])
    assert run.step == (TURN, 1, 0) and not run.of("caught")


def test_uno_penalty_option():
    state, pile, hand = _last_two(rules(uno_penalty=2))
    run = Run(state, pile, [(0, hand[0]), (1, CATCH_THEM)])
    assert len(run.state.hands[0]) == 3


# --- going out and scoring ----------------------------------------------------------------


def test_going_out_scores_the_other_hands():
    pick = Pick(rules())
    last = pick("red 3")
    hands = [[last], pick.many("green 1", "wild", "blue skip"), pick.many("yellow 9")]
    run = Run(*position(pick, hands, [pick("red 7")]), [(0, last)])
    assert run.result is not None and run.result.winner == 0
    assert run.result.points == 1 + 50 + 20 + 9
    assert run.result.charges == [0, 71, 9]


@pytest.mark.parametrize("name, drawn", [("red draw_two", 2), ("wild_draw_four", 4)])
def test_going_out_on_a_draw_card_the_draws_count(name, drawn):
    pick = Pick(rules())
    last = pick(name)
    hands = [[last], pick.many("green 1"), pick.many("yellow 9")]
    draws = pick.many("blue 9", "blue 8", "blue 7", "blue 6")
    moves = [(0, last)] + ([(0, CHOOSE + RED)] if "wild" in name else [])
    run = Run(*position(pick, hands, [pick("red 7")], draws=draws), moves)
    assert run.result is not None and run.result.winner == 0
    assert run.result.points == 1 + sum((9, 8, 7, 6)[:drawn]) + 9
    assert not run.of("challenge")  # the hand is over: nothing to challenge


def test_going_out_on_a_draw_card_without_the_draws_when_switched_off():
    pick = Pick(rules(last_card_draws=False))
    last = pick("red draw_two")
    run = Run(*position(pick, [[last], pick.many("green 1")], [pick("red 7")]), [(0, last)])
    assert run.result is not None and run.result.points == 1


def test_an_empty_draw_pile_is_reshuffled_from_the_discards_but_the_top():
    pick = Pick(rules())
    top = pick("red 7")
    hands = [pick.many("blue 3", "blue 4"), pick.many("green 1", "green 2")]
    last = pick("yellow 5")
    state, pile = position(pick, hands, [top], draws=[last], rest_to="discard")
    assert len(pile) == 1
    run = Run(state, pile, [(0, DRAW_CARD)])
    # Four cards in hands, the drawn one with them, the top card: the rest is reloaded.
    assert run.state.discard == [top]
    assert run.state.pile == 108 - 6 and run.launcher.cards_left == 108 - 6
    assert run.state.reloads == 1 and run.of("reload") == [("reload", 102)]


def test_reshuffle_keeping_no_top_card():
    pick = Pick(rules(reshuffle_keep_top=False))
    hands = [pick.many("blue 3", "blue 4"), pick.many("green 1", "green 2")]
    state, pile = position(pick, hands, [pick("red 7")], draws=[pick("yellow 5")],
                           rest_to="discard")
    run = Run(state, pile, [(0, DRAW_CARD)])
    assert run.state.discard == [] and run.state.colour == RED  # the colour in play stays
    assert run.state.pile == 108 - 5


def _game(options, results):
    """A table whose hands are scripted as (winner, points, charges)."""
    r = rules(**options)
    from launcher.games.launchers import DirectDealer

    table = UnoTable(r, DirectDealer(), [object(), object(), object()], random.Random(0))
    it = iter(results)

    def fake_hand(dealer):
        w, pts, charges = next(it)
        return HandResult(w, pts, charges, 0, 0, 0, 0, 0, 0, 0, 0)

    table.play_hand = fake_hand
    return table.play_game(first_dealer=0)


def test_a_game_goes_to_500_points():
    result = _game({}, [(0, 300, [0, 200, 100]), (1, 250, [50, 0, 60]), (0, 200, [0, 1, 2])])
    assert result.scores == [500, 250, 0] and result.winner == 0 and len(result.hands) == 3


def test_alternative_scoring_the_lowest_total_wins_when_someone_reaches_500():
    result = _game({"scoring": "penalty"}, [(0, 300, [0, 200, 100]), (1, 250, [50, 0, 60]),
                                            (2, 200, [10, 400, 0])])
    assert result.scores == [60, 600, 160] and result.winner == 0


def test_a_single_round_game_is_won_by_the_first_player_out():
    result = _game({"single_round": True}, [(2, 42, [5, 37, 0])])
    assert result.winner == 2 and len(result.hands) == 1


# --- Swap Hands and Shuffle Hands ---------------------------------------------------------


def test_swap_hands_names_a_colour_then_takes_a_hand():
    pick = Pick(rules(blank_cards="swap_hands"))
    swap = pick("swap_hands")
    mine = pick.many("red 1", "red 2", "red 3", "red 4")
    theirs = pick.many("green 1")
    third = pick.many("blue 1", "blue 2")
    run = Run(*position(pick, [[swap, *mine], theirs, third], [pick("yellow 7")]),
              [(0, swap), (0, CHOOSE + BLUE), (0, CHOOSE + 1)])
    assert run.state.hands[0] == theirs and run.state.hands[1] == mine
    assert run.state.colour == BLUE and run.step == (TURN, 1, 0)
    assert run.of("swap") == [("swap", 0, 1)]


def test_swap_hands_offers_every_other_player():
    pick = Pick(rules(blank_cards="swap_hands"))
    swap = pick("swap_hands")
    hands = [[swap, pick("red 1")], pick.many("green 1"), pick.many("blue 1")]
    run = Run(*position(pick, hands, [pick("yellow 7")]), [(0, swap | UNO), (0, CHOOSE)])
    assert run.step == (TARGET, 0, 0) and run.offered == [CHOOSE + 1, CHOOSE + 2]


def test_shuffle_hands_redeals_evenly_and_the_rest_goes_to_the_draw_pile():
    pick = Pick(rules(blank_cards="shuffle_hands"))
    shuffle = pick("shuffle_hands")
    hands = [[shuffle, *pick.many("red 1", "red 2")], pick.many("green 1", "green 2", "green 3"),
             pick.many("blue 1", "blue 2")]
    all_cards = sorted(c for h in hands for c in h if c != shuffle)
    run = Run(*position(pick, hands, [pick("yellow 7")]), [(0, shuffle), (0, CHOOSE + RED)])
    assert [len(h) for h in run.state.hands] == [2, 2, 2]
    assert run.of("shuffle") == [("shuffle", 1)]
    kept = sorted(c for h in run.state.hands for c in h)
    assert set(kept) <= set(all_cards) and len(all_cards) - len(kept) == 1
    assert run.launcher.contents()[-1] in all_cards  # the odd card went under the pile
    assert run.step == (TURN, 1, 0)


def test_a_bad_option_is_refused_by_name():
    with pytest.raises(ValueError, match="wild_draw"):
        CLASSIC_UNO.options(wild_draw="maybe")
    with pytest.raises(ValueError, match="uno_penalty"):
        CLASSIC_UNO.options(uno_penalty=-1)
    with pytest.raises(ValueError, match=r"^stack = True: is not a rule of uno"):
        with_options(CLASSIC_UNO, {"stack": True})
    assert CLASSIC_UNO.sides == (CLASSIC,)


def test_an_option_of_another_game_is_one_line_naming_this_game_s_rules_only():
    # UNO Flip has no blank cards: its error does not offer them; a gin rule is no TypeError.
    with pytest.raises(OptionError) as err:
        with_options(UNO_FLIP_GAME, {"blank_cards": "wild"})
    assert str(err.value).startswith("blank_cards = 'wild': is not a rule of uno-flip (its ")
    assert "blank_cards" not in str(err.value).split("(its rules:")[1]
    assert "wild_points" in str(err.value)
    with pytest.raises(OptionError, match=r"^knock_limit = 7: is not a rule of uno \(its rules"):
        CLASSIC_UNO.options(knock_limit=7)


@pytest.mark.parametrize(("game", "args", "says"), [
    ("uno", ["--rule", "last_flip=\"no_flip\""], "--rule last_flip"),
    ("uno-splash", ["--rule", "wild_points=50"], "--rule wild_points"),
    ("uno-splash", ["--rule", "single_round=true", "--rule", "target_score=200"],
     "--rule target_score = 200: does nothing in uno-splash: a single round"),
])
def test_the_cli_refuses_an_option_that_does_nothing_in_one_line(game, args, says, capsys):
    from launcher.cli.main import main

    assert main(["simulate", "--game", game, "--games", "1", "--no-progress", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
