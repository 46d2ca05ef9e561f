"""Gin Rummy rules from the rule text (shared/rules/gin-rummy-vs-uno-flip.txt), exact hands.

Seat 0 deals in every position here, so the non-dealer, who acts first, is player 1.
Deadwood sums are written out in the comments so each figure can be checked by hand.
"""

from __future__ import annotations

import random

import pytest
from gin_position import draw, position

from launcher.games.dealers import DealerFault, DirectDealer
from launcher.games.gin.cards import DECK_SIZE, name, parse_card, parse_hand
from launcher.games.gin.rules import (
    BIG_GIN,
    BIG_GIN_WIN,
    DISCARD,
    DRAW,
    DRAW_STOCK,
    DRAW_UPCARD,
    DRAWN,
    GIN,
    KNOCK,
    KNOCK_WIN,
    PASS,
    UNDERCUT,
    UPCARD,
    GinHand,
    GinRules,
    HandResult,
    RuleViolation,
    deal_order,
)
from launcher.games.gin.scoring import Scoreboard
from launcher.games.gin.table import GinTable
from launcher.games.gin.variants import variant_rules


def C(text: str) -> int:
    return parse_card(text)


def knock(text: str) -> int:
    return KNOCK + C(text)


# The knocker's hand in most cases: three melds (AC 2C 3C, 4D 4H 4S, 7S 8S 9S) and one card.
MELDED9 = "AC 2C 3C 4D 4H 4S 7S 8S 9S"
# The defender with 56 deadwood and nothing to lay off: KC KH KD is a set;
# 5D 6D 9H JC QH 10D 6C = 5 + 6 + 9 + 10 + 10 + 10 + 6 = 56.
PLAIN_DEFENDER = "KC KH KD 5D 6D 9H JC QH 10D 6C"


def pass_both(hand: GinHand) -> None:
    hand.apply(PASS)
    hand.apply(PASS)


# --- the deal and the upcard ------------------------------------------------------------------


def test_deal_is_one_card_at_a_time_non_dealer_first() -> None:
    deck = list(range(DECK_SIZE))
    nd, d, up, stock = deal_order(deck, 10)
    assert nd == list(range(0, 20, 2)) and d == list(range(1, 20, 2))
    assert up == 20 and stock == list(range(21, 52)) and len(stock) == 31


def test_upcard_phase_non_dealer_then_dealer_then_stock() -> None:
    hand, dealer = position(MELDED9 + " KS", PLAIN_DEFENDER, "2H", "5S")
    assert hand.phase == UPCARD and hand.player == 1
    assert sorted(hand.legal_actions()) == [DRAW_UPCARD, PASS]
    hand.apply(PASS)
    assert hand.phase == UPCARD and hand.player == 0  # the dealer may take it now
    hand.apply(PASS)
    # Both passed: the non-dealer draws from the stock, and may not take the upcard.
    assert hand.phase == DRAW and hand.player == 1
    assert hand.legal_actions() == [DRAW_STOCK]
    with pytest.raises(RuleViolation):
        hand.apply(DRAW_UPCARD)
    assert draw(hand, dealer) == C("5S")
    assert hand.phase == DISCARD and hand.stock_left == 30


def test_non_dealer_takes_upcard_then_dealer_plays() -> None:
    hand, _dealer = position(MELDED9 + " KS", PLAIN_DEFENDER, "2H")
    hand.apply(DRAW_UPCARD)
    assert hand.phase == DISCARD and hand.hands[1] >> C("2H") & 1
    # The card just taken from the pile may not go straight back (discard_taken = False).
    assert C("2H") not in hand.legal_actions()
    with pytest.raises(RuleViolation):
        hand.apply(C("2H"))
    hand.apply(C("KS"))
    assert hand.phase == DRAW and hand.player == 0 and hand.top == C("KS")
    assert sorted(hand.legal_actions()) == [DRAW_STOCK, DRAW_UPCARD]


def test_dealer_takes_upcard_after_non_dealer_passes() -> None:
    hand, _dealer = position(MELDED9 + " KS", PLAIN_DEFENDER, "2H")
    hand.apply(PASS)
    hand.apply(DRAW_UPCARD)
    assert hand.player == 0 and hand.phase == DISCARD
    hand.apply(C("6C"))
    assert hand.player == 1 and hand.phase == DRAW
    assert sorted(hand.legal_actions()) == [DRAW_STOCK, DRAW_UPCARD]  # play has begun


def test_discard_taken_option_allows_throwing_it_back() -> None:
    hand, _ = position(MELDED9 + " KS", PLAIN_DEFENDER, "2H",
                       rules=GinRules(discard_taken=True))
    hand.apply(DRAW_UPCARD)
    assert C("2H") in hand.legal_actions()


def test_each_turn_is_draw_then_discard() -> None:
    hand, dealer = position(MELDED9 + " KS", PLAIN_DEFENDER, "QS", "2H JD")
    pass_both(hand)
    with pytest.raises(RuleViolation):
        hand.apply(C("KS"))  # no discard before drawing
    draw(hand, dealer)
    assert DRAW_STOCK not in hand.legal_actions()
    with pytest.raises(RuleViolation):
        hand.apply(DRAW_STOCK, C("JD"))  # no second draw
    hand.apply(C("KS"))
    assert hand.player == 0 and hand.phase == DRAW
    assert bin(hand.hands[1]).count("1") == 10


def test_stock_card_must_come_from_the_dealer() -> None:
    hand, _ = position(MELDED9 + " KS", PLAIN_DEFENDER, "QS")
    pass_both(hand)
    with pytest.raises(RuleViolation, match="needs the card"):
        hand.apply(DRAW_STOCK)
    with pytest.raises(RuleViolation, match="already in play"):
        hand.apply(DRAW_STOCK, C("KC"))  # the dealer holds KC


# --- knocking and scoring ------------------------------------------------------------------------


def test_knock_win_scores_the_difference() -> None:
    # The non-dealer draws 2H and knocks throwing KS: deadwood 2 against the plain 56.
    hand, dealer = position(MELDED9 + " KS", PLAIN_DEFENDER, "QS", "2H")
    pass_both(hand)
    draw(hand, dealer)
    assert knock("KS") in hand.legal_actions()
    result = hand.apply(knock("KS"))
    assert result is not None and result.kind == KNOCK_WIN
    assert (result.winner, result.knocker_deadwood, result.defender_deadwood) == (1, 2, 56)
    assert result.points == 54 and result.laid_off == 0


def test_knock_limit_is_ten() -> None:
    # Melds 4C 4D 4H 4S and 7S-10S; loose 8H 2D (10) may knock after drawing JD and
    # throwing it; loose 9C 2D (11) may not, whatever is thrown.
    hand, dealer = position("4C 4D 4H 4S 7S 8S 9S 10S 8H 2D", PLAIN_DEFENDER, "QS", "JD")
    pass_both(hand)
    draw(hand, dealer)
    assert [a - KNOCK for a in hand.legal_actions() if a >= KNOCK] == [C("JD")]
    hand, dealer = position("4C 4D 4H 4S 7S 8S 9S 10S 9C 2D", PLAIN_DEFENDER, "QS", "JD")
    pass_both(hand)
    draw(hand, dealer)
    assert not [a for a in hand.legal_actions() if a >= KNOCK]
    with pytest.raises(RuleViolation):
        hand.apply(knock("JD"))


def test_layoff_onto_set_and_chained_onto_run() -> None:
    # The defender lays 4C on the set of fours (or the AC-3C run) and 10S then JS on 7S-9S.
    # Before: 4C 10S JS 5D 9H QH 6C = 4 + 10 + 10 + 5 + 9 + 10 + 6 = 54; after: 5+9+10+6 = 30.
    hand, dealer = position(MELDED9 + " KS", "KC KH KD 4C 10S JS 5D 9H QH 6C", "QS", "2H")
    pass_both(hand)
    draw(hand, dealer)
    result = hand.apply(knock("KS"))
    assert result is not None and result.kind == KNOCK_WIN
    assert result.defender_own_deadwood == 54 and result.defender_deadwood == 30
    assert result.laid_off == parse_hand("4C 10S JS")
    assert result.points == 28


def test_undercut_defender_beats_the_knocker() -> None:
    # Knocker keeps 9C (deadwood 9); the defender holds QQQ JJJ 5D-7D + 2S: deadwood 2.
    hand, dealer = position(MELDED9 + " KS", "QH QD QC JH JD JC 5D 6D 7D 2S", "KC", "9C")
    pass_both(hand)
    draw(hand, dealer)
    result = hand.apply(knock("KS"))
    assert result is not None and result.kind == UNDERCUT
    assert result.winner == 0 and result.knocker == 1
    assert result.points == 25 + (9 - 2)


def test_undercut_on_a_tie() -> None:
    hand, dealer = position(MELDED9 + " KS", "QH QD QC JH JD JC 5D 6D 7D 9H", "KC", "9C")
    pass_both(hand)
    draw(hand, dealer)
    result = hand.apply(knock("KS"))
    assert result is not None and result.kind == UNDERCUT and result.points == 25


def test_undercut_made_by_laying_off() -> None:
    # 10S loose (10 > 9) would lose; laid off on 7S-9S it leaves 0: undercut 25 + 9.
    hand, dealer = position(MELDED9 + " KS", "QH QD QC JH JD JC 5D 6D 7D 10S", "KC", "9C")
    pass_both(hand)
    draw(hand, dealer)
    result = hand.apply(knock("KS"))
    assert result is not None and result.kind == UNDERCUT
    assert result.defender_own_deadwood == 10 and result.defender_deadwood == 0
    assert result.laid_off == parse_hand("10S") and result.points == 34


def test_gin_scores_25_plus_deadwood_and_forbids_layoffs() -> None:
    # The defender holds 4C and JS, which would lay off on a knock, but not on gin:
    # KC KH 4C JS 5D 9H QH 6C 2D 8D = 10+10+4+10+5+9+10+6+2+8 = 74.
    hand, dealer = position(MELDED9 + " KD", "KC KH 4C JS 5D 9H QH 6C 2D 8D", "QS", "10S")
    pass_both(hand)
    draw(hand, dealer)
    result = hand.apply(knock("KD"))
    assert result is not None and result.kind == GIN
    assert result.defender_deadwood == 74 and result.laid_off == 0
    assert result.points == 25 + 74
    assert sorted(result.knocker_melds) == sorted(
        parse_hand(m) for m in ("AC 2C 3C", "4D 4H 4S", "7S 8S 9S 10S"))


def test_gin_is_not_undercut_by_a_gin_defender() -> None:
    hand, dealer = position(MELDED9 + " KD", "QH QD QC JH JD JC 5D 6D 7D 8D", "KC", "10S")
    pass_both(hand)
    draw(hand, dealer)
    result = hand.apply(knock("KD"))
    assert result is not None and result.kind == GIN and result.winner == 1
    assert result.points == 25


def test_big_gin_with_eleven_cards() -> None:
    # AC-3C, the four 4s, 7S 8S 10S; drawing 9S melds all 11: 31 + the defender's
    # KD KH 5D 9H QH 6C 2D 8D JD 3H = 10+10+5+9+10+6+2+8+10+3 = 73.
    hand, dealer = position("AC 2C 3C 4C 4D 4H 4S 7S 8S 10S",
                            "KD KH 5D 9H QH 6C 2D 8D JD 3H", "QS", "9S")
    pass_both(hand)
    draw(hand, dealer)
    assert BIG_GIN in hand.legal_actions()
    result = hand.apply(BIG_GIN)
    assert result is not None and result.kind == BIG_GIN_WIN
    assert result.points == 31 + 73 and bin(hand.hands[1]).count("1") == 11


def test_big_gin_only_when_all_eleven_meld() -> None:
    hand, dealer = position(MELDED9 + " JD", PLAIN_DEFENDER, "QS", "10S")
    pass_both(hand)
    draw(hand, dealer)
    assert BIG_GIN not in hand.legal_actions()
    with pytest.raises(RuleViolation):
        hand.apply(BIG_GIN)


def _throwaway_stock(used: str, last: str, n: int) -> str:
    """``n`` stock cards outside ``used``, then ``last``."""
    taken = parse_hand(used) | parse_hand(last)
    names = [name(c) for c in range(DECK_SIZE) if not taken >> c & 1][:n]
    return " ".join([*names, last])


def test_drawn_hand_when_two_cards_remain() -> None:
    # Each player throws back what it draws: 29 draws take the stock from 31 to 2.
    hand, dealer = position(MELDED9 + " JD", PLAIN_DEFENDER, "QS")
    pass_both(hand)
    result = None
    while result is None:
        result = hand.apply(draw(hand, dealer))
    assert result.kind == DRAWN and result.winner is None and result.points == 0
    assert hand.stock_left == 2 and dealer.cards_left == 2 and result.turns == 29


def test_knock_still_allowed_on_the_last_draw() -> None:
    # The non-dealer's 15th draw is the stock's 29th card, 2H, leaving 2: it may knock.
    stock = _throwaway_stock(MELDED9 + " JD " + PLAIN_DEFENDER + " QS", "2H", 28)
    hand, dealer = position(MELDED9 + " JD", PLAIN_DEFENDER, "QS", stock)
    pass_both(hand)
    for _ in range(28):
        assert hand.apply(draw(hand, dealer)) is None
    assert hand.player == 1
    assert draw(hand, dealer) == C("2H") and hand.stock_left == 2
    result = hand.apply(knock("JD"))
    assert result is not None and result.kind == KNOCK_WIN and result.points == 56 - 2


# --- the knocker's layout ------------------------------------------------------------------------


def test_knocker_lays_out_the_arrangement_that_blocks_layoffs() -> None:
    # JC QC KC KD KH: the clubs run or the set of kings, 20 deadwood either way. Against a
    # defender with 9C 10C (lays both on the run) and KS (lays on the kings), the defensive
    # choice is the kings. The defender: 9+10+10+2+3+6+7+9+4+8 = 68.
    rules = GinRules(knock_limit=30)
    hand, dealer = position("JC QC KC KD KH AS 2S 3S 4S 5S",
                            "9C 10C KS 2D 3H 6D 7H 9D 4D 8H", "QS", rules=rules)
    knocker = hand.hands[1]
    defender = hand.hands[0]
    assert len(rules.solver.best_arrangements(knocker)) == 2
    melds, ddw, laid = hand.layout(knocker, defender)
    assert parse_hand("KC KD KH") in melds and laid == parse_hand("KS") and ddw == 58
    first = GinHand.copy(hand)
    first.rules = GinRules(knocker_layout="first")
    assert first.layout(knocker, defender)[1] in (49, 58)
    assert dealer.cards_left == 31


# --- variants -----------------------------------------------------------------------------------


def test_oklahoma_upcard_sets_the_knock_limit() -> None:
    rules = variant_rules("oklahoma")
    # Upcard 4C: knock with 4 or less. Loose 2H after throwing KS (2) may; loose 5H may not.
    hand, dealer = position(MELDED9 + " KS", PLAIN_DEFENDER, "4C", "2H", rules)
    assert hand.limit == 4 and hand.multiplier == 1
    pass_both(hand)
    draw(hand, dealer)
    assert knock("KS") in hand.legal_actions()
    hand, dealer = position(MELDED9 + " KS", PLAIN_DEFENDER, "4C", "5H", rules)
    pass_both(hand)
    draw(hand, dealer)
    assert not [a for a in hand.legal_actions() if a >= KNOCK]
    assert rules.hand_limit(C("KH")) == 10 and rules.hand_limit(C("AH")) == 1


def test_oklahoma_spade_upcard_doubles_the_hand() -> None:
    rules = variant_rules("oklahoma")
    hand, dealer = position(MELDED9 + " JD", PLAIN_DEFENDER, "QS", "2H", rules)
    assert hand.limit == 10 and hand.multiplier == 2
    pass_both(hand)
    draw(hand, dealer)
    result = hand.apply(knock("JD"))
    assert result is not None and result.points == 2 * (56 - 2) and result.multiplier == 2


def test_straight_gin_only() -> None:
    rules = variant_rules("straight")
    hand, dealer = position(MELDED9 + " KS", PLAIN_DEFENDER, "QD", "AH", rules)
    pass_both(hand)
    draw(hand, dealer)
    assert not [a for a in hand.legal_actions() if a >= KNOCK]  # deadwood 1 is not gin
    hand, dealer = position(MELDED9 + " JD", PLAIN_DEFENDER, "QD", "10S", rules)
    pass_both(hand)
    draw(hand, dealer)
    result = hand.apply(knock("JD"))
    assert result is not None and result.kind == GIN and result.points == 25 + 56


def test_tedesco_ace_upcard_forces_gin() -> None:
    rules = variant_rules("tedesco")
    hand, dealer = position(MELDED9 + " KS", PLAIN_DEFENDER, "AH", "2H", rules)
    assert hand.limit == 0
    pass_both(hand)
    draw(hand, dealer)
    assert not [a for a in hand.legal_actions() if a >= KNOCK]
    # Otherwise Tedesco is Oklahoma: a 7 upcard allows 7.
    assert rules.hand_limit(C("7D")) == 7 and rules.hand_multiplier(C("7S")) == 2


def _win(winner: int, points: int) -> HandResult:
    return HandResult(KNOCK_WIN, winner, points, knocker=winner)


def test_tedesco_consecutive_win_bonus() -> None:
    board = Scoreboard(variant_rules("tedesco"))
    assert board.record(_win(0, 10)) == 10
    assert board.record(_win(0, 10)) == 35        # second in a row: + 25
    assert board.record(_win(1, 10)) == 10        # the streak passes to the other player
    assert board.record(_win(1, 10)) == 35
    assert board.games[0].points == [45, 45]


def test_tedesco_a_drawn_round_breaks_the_streak() -> None:
    # "winning multiple consecutive rounds": a drawn hand is a round, so win, draw, win is
    # not two in a row.
    board = Scoreboard(variant_rules("tedesco"))
    assert board.rules.draw_breaks_streak
    assert board.record(_win(0, 10)) == 10
    assert board.record(HandResult(DRAWN, None, 0)) == 0
    assert board.record(_win(0, 10)) == 10        # not 35
    assert board.record(_win(0, 10)) == 35        # now two in a row
    assert board.games[0].points == [55, 0] and board.streak_bonuses == [25, 0]
    # The house rule that lets a streak run over a drawn hand is still an option.
    kept = Scoreboard(variant_rules("tedesco", {"draw_breaks_streak": False}))
    kept.record(_win(0, 10))
    kept.record(HandResult(DRAWN, None, 0))
    assert kept.record(_win(0, 10)) == 35


def test_mahjong_deals_thirteen_and_runs_aces_high() -> None:
    rules = variant_rules("mahjong")
    nd, d, _up, stock = deal_order(list(range(DECK_SIZE)), rules.hand_size)
    assert len(nd) == len(d) == 13 and len(stock) == 25
    # QH KH AH is a run here (never K-A-2); all 13 melded is gin.
    hand, dealer = position("QH KH AH 2C 3C 4C 5D 5S 5C 9S 10S JS KC",
                            "KD 2H 3D 6H 7C 9H 10D 8C 2S 3S 6D 7S 4H", "QD", "QS", rules)
    assert rules.solver.deadwood(parse_hand("QH KH AH")) == 0
    assert rules.solver.deadwood(parse_hand("KH AH 2H")) == 10 + 1 + 2
    pass_both(hand)
    draw(hand, dealer)
    result = hand.apply(knock("KC"))
    assert result is not None and result.kind == GIN
    assert sorted(result.knocker_melds) == sorted(parse_hand(m) for m in (
        "QH KH AH", "2C 3C 4C", "5D 5S 5C", "9S 10S JS QS"))


def test_mahjong_big_gin_with_fourteen() -> None:
    rules = variant_rules("mahjong")
    hand, dealer = position("QH KH AH 2C 3C 4C 5D 5S 5C 9S 10S JS KS",
                            "KD 2H 3D 6H 7C 9H 10D 8C 2S 3S 6D 7S 4H", "QD", "QS", rules)
    pass_both(hand)
    draw(hand, dealer)
    assert hand.apply(BIG_GIN).kind == BIG_GIN_WIN  # type: ignore[union-attr]


def test_aces_are_low_in_the_standard_game() -> None:
    solver = GinRules().solver
    assert solver.deadwood(parse_hand("QH KH AH")) == 21
    assert solver.deadwood(parse_hand("AH 2H 3H")) == 0


# --- a game: to 100, game bonus, line bonus, shutout; Hollywood --------------------------------


def test_game_to_100_with_game_and_line_bonus() -> None:
    board = Scoreboard(GinRules())
    board.record(_win(1, 30))
    board.record(_win(0, 60))
    assert not board.over
    board.record(_win(0, 45))  # 105: player 0 wins
    g = board.games[0]
    assert board.over and g.winner == 0 and not g.shutout
    # 105 + 100 game + 2 x 25 lines; the loser 30 + 1 x 25.
    assert g.totals == (105 + 100 + 50, 30 + 25)
    assert board.margin(0) == 255 - 55


def test_shutout_doubles_the_game_bonus() -> None:
    board = Scoreboard(GinRules())
    board.record(HandResult(DRAWN, None, 0))
    board.record(_win(1, 60))
    board.record(_win(1, 50))
    g = board.games[0]
    assert g.winner == 1 and g.shutout and g.totals == (0, 110 + 200 + 50)


def test_hollywood_wins_count_toward_games_in_turn() -> None:
    board = Scoreboard(variant_rules("hollywood"))
    board.record(_win(0, 40))                       # 0's first win: game 1
    assert [g.points for g in board.games] == [[40, 0], [0, 0], [0, 0]]
    board.record(_win(1, 20))                       # 1's first win: game 1
    board.record(_win(0, 30))                       # 0's second: games 1 and 2
    board.record(_win(0, 35))                       # third: all three; game 1 reaches 105
    assert [g.points for g in board.games] == [[105, 20], [65, 0], [35, 0]]
    assert board.games[0].over and not board.games[1].over
    board.record(_win(1, 50))                       # 1's second: games 1 (closed) and 2
    assert [g.points for g in board.games] == [[105, 20], [65, 50], [35, 0]]
    board.record(_win(0, 40))
    assert board.games[1].over and board.games[1].winner == 0
    assert board.games[2].points == [75, 0] and not board.over
    board.record(_win(0, 30))
    assert board.over and board.games[2].shutout and not board.games[1].shutout
    assert board.games[2].totals == (105 + 200 + 25 * 3, 0)


def test_whole_games_through_the_table_conserve_cards() -> None:
    from launcher.games.gin.bots import HeuristicBot, RandomBot

    for variant in ("standard", "oklahoma", "straight", "tedesco", "hollywood", "mahjong"):
        rules = variant_rules(variant)
        table = GinTable(rules, [HeuristicBot(random.Random(1)), RandomBot(random.Random(2))],
                         random.Random(3))
        record = table.play_game()
        assert record.board.over, variant
        assert table.checks == len(record.hands)
        assert all(w is not None for w in record.winners)


def test_a_dealer_that_loses_a_card_is_caught() -> None:
    class Leaky(DirectDealer[int]):
        def dispense(self) -> int:
            super().dispense()
            return super().dispense()  # two cards leave, one reaches the table

    from launcher.games.gin.bots import RandomBot

    table = GinTable(GinRules(), [RandomBot(random.Random(1)), RandomBot(random.Random(2))],
                     random.Random(3), dealer=Leaky())
    with pytest.raises((RuleViolation, DealerFault)):
        table.play_hand()


# --- the knocker's layout -------------------------------------------------------------------

# The knocker keeps 3C 3D 3H 3S 5C 5D 5H 5S AD 4D after drawing 4D and throwing KS. The
# defender: KC KD KH and 9S 10S JS melded; 2D 6D QC QH = 2 + 6 + 10 + 10 = 28 deadwood.
FOURS_KNOCKER = "3C 3D 3H 3S 5C 5D 5H 5S AD KS"
FOURS_DEFENDER = "2D 6D KC KD KH 9S 10S JS QC QH"
FOUR_SETS = (parse_hand("3C 3D 3H 3S"), parse_hand("5C 5D 5H 5S"))


def _fours_knock() -> GinHand:
    hand, dealer = position(FOURS_KNOCKER, FOURS_DEFENDER, "8C", "4D")
    pass_both(hand)
    draw(hand, dealer)
    return hand


def test_the_least_deadwood_layout_lets_the_defender_lay_off() -> None:
    # 3D 4D 5D with the other threes and fives leaves AD (1); the defender lays 2D and 6D
    # on the run: 28 - 8 = 20, less 1: 19.
    result = _fours_knock().apply(knock("KS"))
    assert result is not None and result.kind == KNOCK_WIN
    assert result.knocker_deadwood == 1 and result.laid_off == parse_hand("2D 6D")
    assert result.points == 19


def test_the_knocker_may_lay_out_the_two_fours_and_block_every_layoff() -> None:
    hand = _fours_knock()
    layouts = hand.layouts(C("KS"))
    assert (1, FOUR_SETS) not in layouts and (5, FOUR_SETS) in layouts
    assert layouts[0][0] == 1 and all(dw <= 10 for dw, _ in layouts)
    result = hand.apply(knock("KS"), melds=FOUR_SETS)
    assert result is not None and result.kind == KNOCK_WIN
    assert (result.knocker_deadwood, result.defender_deadwood, result.laid_off) == (5, 28, 0)
    assert result.points == 23 and result.knocker_melds == FOUR_SETS


def test_a_layout_must_be_melds_of_the_knockers_cards_within_the_limit() -> None:
    for melds in ((parse_hand("3C 3D 3H"), parse_hand("3H 3S 4D")),  # not a meld, shared
                  (parse_hand("KC KD KH"),),                          # the defender's cards
                  (parse_hand("3C 3D 3H 3S"),)):                      # 5 + 20 deadwood left
        with pytest.raises(RuleViolation):
            _fours_knock().apply(knock("KS"), melds=melds)
    with pytest.raises(RuleViolation, match="lays nothing out"):
        _fours_knock().apply(C("KS"), melds=FOUR_SETS)


def test_the_heuristic_bot_lays_out_against_the_layoffs_it_allows() -> None:
    from dataclasses import replace

    from launcher.games.gin.bots import HeuristicBot, RandomBot

    hand = _fours_knock()
    view = hand.view(hand.player)
    bot = HeuristicBot(random.Random(1))
    # Nothing known of the defender: 2D, 6D (and 7D after 6D) are each held with chance
    # 10/40, so the run costs 1 + (2 + 6) / 4 + 7 / 16 = 3.44 in expectation, the fours 5.
    melds = bot.arrange(view, C("KS"))
    assert melds is not None and parse_hand("3D 4D 5D") in melds
    # The defender took 2D and 6D from the pile: the run now costs 1 + 8 + more, the
    # fours still 5. Against this hand that scores 23 instead of 19.
    known = replace(view, opponent_known=parse_hand("2D 6D"))
    assert bot.arrange(known, C("KS")) == FOUR_SETS
    result = hand.apply(knock("KS"), melds=bot.arrange(known, C("KS")))
    assert result is not None and result.points == 23
    # The random bot leaves the layout to the engine.
    assert RandomBot(random.Random(1)).arrange(view, C("KS")) is None


def test_the_table_asks_the_knocker_how_to_lay_out() -> None:
    class Knocker:
        name = "script"

        def choose(self, view):
            return knock("KS") if knock("KS") in view.legal else view.legal[0]

        def arrange(self, view, discard):
            assert discard == C("KS")
            return FOUR_SETS

    hand, dealer = position(FOURS_KNOCKER, FOURS_DEFENDER, "8C", "4D")
    table = GinTable(GinRules(), [Knocker(), Knocker()], random.Random(1), dealer=dealer)
    pass_both(hand)  # then the non-dealer draws 4D and knocks
    result = table.play_hand(0, hand)
    assert result.points == 23 and result.knocker == 1
