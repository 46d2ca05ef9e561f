"""The table engine as a whole: random games under every option, launchers, bots, the CLI."""

from __future__ import annotations

import math
import random
import re

import pytest

from launcher.cli.main import main
from launcher.games.base import LauncherFault, RuleViolation
from launcher.games.cards import DARK, LIGHT, load_deck
from launcher.games.engine import CardTable
from launcher.games.launchers import (
    DEALER,
    FLIP_ATTACK,
    UNO_FLIP,
    DirectDealer,
    DirectLauncher,
    ProfileUnsupported,
    deal_profile,
    parse_profile,
)
from launcher.games.uno.bots import UnoHeuristicBot, UnoRandomBot, make_uno_bot
from launcher.games.uno.flip import UNO_FLIP_GAME
from launcher.games.uno.game import (
    CATCH,
    CHALLENGE,
    CHOOSE,
    CLASSIC_UNO,
    COLOUR,
    DRAW,
    DRAW_CARD,
    DRAW_TURN,
    DRAW_UNTIL,
    DRAWN,
    PRESS_STEPS,
    TARGET,
    TURN,
)
from launcher.games.uno.rules import act, deal, legal
from launcher.games.uno.splash import UNO_SPLASH
from launcher.games.uno.table import UnoTable
from launcher.sim.games import FirmwareLauncher

GAMES = {"uno": CLASSIC_UNO, "uno-splash": UNO_SPLASH, "uno-flip": UNO_FLIP_GAME}


def dealer_for(game) -> DirectDealer:
    sides = game.sides if len(game.sides) == 2 else game.sides * 2
    return DirectDealer(game.profile, sides)


class Checking:
    """Wraps a bot: before each decision, every legal action is accepted by the engine (on a
    copy) and every card of the hand not offered at a turn is refused."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.decisions = 0

    def choose(self, state, player, legal):
        assert legal, f"no legal action at {state}"
        for a in legal:
            act(state.copy(), a, random.Random(0))
        if state.agenda[-1][0] == TURN:
            for c in state.hands[player]:
                if c not in legal:
                    with pytest.raises(RuleViolation):
                        act(state.copy(), c, random.Random(0))
        self.decisions += 1
        return self.inner.choose(state, player, legal)

    def observe(self, event) -> None:
        self.inner.observe(event)


OPTION_SETS = [
    {},
    {"wild_draw": "strict", "uno_penalty": 0, "reshuffle_keep_top": False},
    {"first_reverse": "dealer", "last_card_draws": False, "scoring": "penalty"},
]


@pytest.mark.parametrize("name", sorted(GAMES))
@pytest.mark.parametrize("opts", OPTION_SETS)
def test_random_hands_conserve_cards_and_offer_only_legal_moves(name, opts):
    game = GAMES[name]
    rng = random.Random(hash((name, str(opts))) % 1000)
    for players in (2, 3, 5):
        options = game.options(**opts, max_turns=300)
        bots = [Checking(make_uno_bot(("random", "heuristic")[i % 2], random.Random(i)))
                for i in range(players)]
        table = UnoTable(game.rules(options), dealer_for(game), bots, rng, check=True)
        hand = table.play_hand(dealer=players - 1)
        assert table.checks > hand.turns  # the check really ran, every step
        assert sum(b.decisions for b in bots) >= hand.turns


@pytest.mark.parametrize("blanks", ["wild", "swap_hands", "shuffle_hands"])
def test_classic_with_each_blank_card_variant_conserves_cards(blanks):
    rules = CLASSIC_UNO.rules(CLASSIC_UNO.options(blank_cards=blanks, max_turns=400))
    table = UnoTable(rules, DirectDealer(), [Checking(UnoRandomBot(random.Random(i)))
                                              for i in range(4)], random.Random(7), check=True)
    for dealer in range(3):
        hand = table.play_hand(dealer)
        assert hand.turns <= 400


def test_a_bot_that_is_not_trusted_is_refused_an_illegal_move():
    # A subclass does not inherit ``trusted``: its answers are checked.
    class Cheat(UnoRandomBot):
        def choose(self, state, player, legal):
            if state.agenda[-1][0] == TURN:
                refused = [c for c in state.hands[player] if c not in legal]
                if refused:
                    return refused[0]
            return super().choose(state, player, legal)

    table = UnoTable(CLASSIC_UNO.rules(), DirectDealer(), [Cheat(random.Random(i))
                                                          for i in range(2)], random.Random(1))
    with pytest.raises(RuleViolation, match="may not play"):
        table.play_game(first_dealer=0)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_trusted_bots_play_the_same_games_unchecked_as_checked(name):
    # check=False with this package's bots takes the table's loop that does not re-check
    # each answer: the games must be the very ones the checked loop plays.
    game = GAMES[name]

    def play(check):
        bots = [make_uno_bot(b, random.Random(i))
                for i, b in enumerate(["heuristic", "random", "random-play"])]
        table = UnoTable(game.rules(), dealer_for(game), bots, random.Random(5), check=check)
        return [table.play_game(first_dealer=g % 3) for g in range(3)]

    fast, checked = play(False), play(True)
    assert sum(len(r.hands) for r in fast) >= 3
    assert fast == checked


def test_the_check_catches_a_launcher_that_loses_a_card():
    class Leaky(DirectDealer):
        def press(self):
            out = super().press()
            if out and self.presses == 3:
                super().press()  # one card falls on the floor
            return out

    table = UnoTable(CLASSIC_UNO.rules(), Leaky(), [UnoRandomBot(random.Random(i))
                                                   for i in range(2)], random.Random(1),
                     check=True)
    with pytest.raises(RuleViolation, match=r"launcher holds|not conserved"):
        table.play_game(first_dealer=0)


def test_a_launcher_that_shoots_two_cards_for_one_draw_is_a_fault():
    table = UnoTable(CLASSIC_UNO.rules(), DirectDealer(deal_profile(2)),
                     [UnoRandomBot(random.Random(i)) for i in range(2)], random.Random(1))
    table.launcher.use(deal_profile(2))  # the table asked for the dealer; force the wrong one
    with pytest.raises(LauncherFault):
        for _ in range(20):
            table.play_hand(0)


def test_seeded_games_replay_exactly():
    def run(seed):
        rules = UNO_FLIP_GAME.rules()
        bots = [make_uno_bot(n, random.Random(seed + i)) for i, n in
                enumerate(["heuristic", "random", "random-play"])]
        table = UnoTable(rules, dealer_for(UNO_FLIP_GAME), bots, random.Random(seed))
        result = table.play_game()
        return result.scores, [(h.winner, h.turns, h.draws) for h in result.hands]

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_state_copy_is_independent():
    state = deal(CLASSIC_UNO.rules(), 3, 0, random.Random(2))
    other = state.copy()
    other.hands[0].append(999)
    other.agenda.append((TURN, 2, 0))
    assert 999 not in state.hands[0] and len(state.agenda) + 1 == len(other.agenda)


# --- the card table --------------------------------------------------------------------------


def test_card_tables_are_built_from_the_shared_card_model():
    deck = load_deck(shipped="uno_flip_deck.toml", sides=(LIGHT, DARK))
    table = CardTable(deck, (LIGHT, DARK), UNO_FLIP_GAME.points)
    light = table.sides[0]
    for c in (0, 17, 111):
        assert table.name(c, 0) == str(deck[c].front) and table.name(c, 1) == str(deck[c].back)
        assert light.wild[c] == deck[c].front.is_wild
    # A red 5 plays on red, or on any 5; a wild on anything.
    red5 = next(c for c in range(112) if table.name(c) == "red 5")
    blue5 = next(c for c in range(112) if table.name(c) == "blue 5")
    wild = next(c for c in range(112) if table.name(c) == "wild")
    assert light.playable(red5, 0, light.symbol[blue5])
    assert not light.playable(red5, 3, light.symbol[wild])
    assert light.playable(wild, 2, 3)
    with pytest.raises(ValueError, match="ids"):
        CardTable(deck[1:], (LIGHT, DARK), UNO_FLIP_GAME.points)
    assert table.where([range(111), [5]]) == ([5], [111])


# --- launchers and profiles -------------------------------------------------------------------


def test_profiles_parse_and_name_themselves():
    assert parse_profile("dealer") == DEALER and parse_profile("uno-flip") == UNO_FLIP
    assert parse_profile("flip-attack") == FLIP_ATTACK
    assert parse_profile("deal  7") == deal_profile(7) and str(deal_profile(7)) == "deal 7"
    for bad in ("deal", "deal 0", "dealer 2", "luck"):
        with pytest.raises(ValueError):
            parse_profile(bad)


def test_direct_dealer_shoots_one_card_a_press_then_n_with_deal_n():
    dealer = DirectDealer()
    dealer.load(list(range(20)))
    assert [dealer.press() for _ in range(3)] == [[0], [1], [2]]
    dealer.use(deal_profile(7))
    assert dealer.press() == [3, 4, 5, 6, 7, 8, 9]
    assert dealer.press() == [10, 11, 12, 13, 14, 15, 16]
    assert dealer.press() == [17, 18, 19] and dealer.press() == []
    with pytest.raises(ProfileUnsupported):
        dealer.flip()  # "deal 7" does not flip
    with pytest.raises(ProfileUnsupported):
        dealer.use(FLIP_ATTACK)


def test_direct_dealer_flips_with_the_uno_flip_profile_and_keeps_the_order():
    dealer = DirectDealer(UNO_FLIP, (LIGHT, DARK))
    dealer.load([5, 6, 7])
    assert dealer.side == LIGHT and dealer.flip() == DARK and dealer.side == DARK
    assert dealer.contents() == [5, 6, 7] and dealer.unload() == [5, 6, 7]


def test_the_luck_launchers_refuse_profiles_they_do_not_have():
    direct = DirectLauncher(rng=random.Random(0))
    direct.use(FLIP_ATTACK)
    with pytest.raises(ProfileUnsupported, match="DirectDealer"):
        direct.use(DEALER)
    fw = FirmwareLauncher(seed=0)
    try:
        fw.use(FLIP_ATTACK)
        fw.use(DEALER)  # the firmware has every profile now
        assert fw.profile == DEALER
        fw.rig.sim.jam()
        fw.load(["a", "b"])
        fw.press()  # the jammed card faults the firmware: it takes no new profile then
        with pytest.raises(ProfileUnsupported, match="refused profile flip-attack while fault"):
            fw.use(FLIP_ATTACK)
    finally:
        fw.close()


def test_a_table_asks_its_launcher_for_the_games_profile():
    asked = []

    class Recording(DirectDealer):
        def use(self, profile):
            asked.append(profile)
            super().use(profile)

    launcher = Recording(UNO_FLIP, (LIGHT, DARK))
    UnoTable(UNO_FLIP_GAME.rules(), launcher, [object(), object()], random.Random(0))
    assert asked[-1] == UNO_FLIP
    with pytest.raises(ProfileUnsupported):
        UnoTable(CLASSIC_UNO.rules(), DirectLauncher(rng=random.Random(0)), [object(), object()],
                 random.Random(0))


def test_uno_flip_through_the_dealer_cycles_the_lid_for_every_flip():
    launcher = dealer_for(UNO_FLIP_GAME)
    flips: list[int] = []
    table = UnoTable(UNO_FLIP_GAME.rules(), launcher,
                     [UnoHeuristicBot(random.Random(i)) for i in range(3)], random.Random(5),
                     check=True, observers=[lambda e: flips.append(1) if e[0] == "flip" else None])
    hands = [table.play_hand(d % 3) for d in range(4)]
    assert sum(flips) == sum(h.flips for h in hands) > 0
    assert launcher.flips >= sum(flips)  # plus any turn made to load on the side in play


# --- bots ---------------------------------------------------------------------------------------


def test_random_play_bot_draws_only_when_nothing_plays():
    pick_rules = CLASSIC_UNO.rules()
    state = deal(pick_rules, 2, 0, random.Random(1))
    state.agenda = [(TURN, 1, 0)]
    bot = UnoRandomBot(random.Random(0), renege=False)
    options = legal(state)
    for _ in range(50):
        a = bot.choose(state, 1, options)
        assert (a != DRAW_CARD) == (len(options) > 1)
    assert bot.name == "random-play"


def test_heuristic_beats_random_heads_up():
    """Fixed seeds: 300 single-round hands of classic UNO, seats alternating. Under the null
    hypothesis (no better than random) wins ~ Binomial(300, 1/2); we require p < 0.001."""
    rules = CLASSIC_UNO.rules(CLASSIC_UNO.options(single_round=True))
    wins = 0
    n = 300
    for g in range(n):
        seats = [UnoHeuristicBot(random.Random(g)), UnoRandomBot(random.Random(g + 1))]
        if g % 2:
            seats.reverse()
        table = UnoTable(rules, DirectDealer(), seats, random.Random(g))
        result = table.play_game(first_dealer=g % 2)
        heuristic_seat = g % 2
        wins += result.winner == heuristic_seat
    p = sum(math.comb(n, k) for k in range(wins, n + 1)) / 2 ** n
    assert p < 1e-3, f"heuristic won {wins} of {n}"


def test_heuristic_never_bluffs_and_names_its_colour():
    r = CLASSIC_UNO.rules()
    state = deal(r, 2, 0, random.Random(4))
    bot = UnoHeuristicBot(random.Random(0))
    state.agenda = [(COLOUR, 1, 0)]
    col = r.table.sides[0].colour
    counts = [sum(1 for c in state.hands[1] if col[c] == k) for k in range(4)]
    choice = bot.choose(state, 1, legal(state)) - CHOOSE
    assert counts[choice] == max(counts)


# --- the command line ---------------------------------------------------------------------------


def run_cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("game, title", [("uno", "UNO,"), ("uno-splash", "UNO Splash"),
                                         ("uno-flip", "UNO Flip")])
def test_simulate_plays_each_table_game(capsys, game, title):
    rc, out, _ = run_cli(capsys, "simulate", "--game", game, "--games", "3", "--players", "3",
                         "--seed", "2", "--no-progress", "--check")
    assert rc == 0 and out.startswith(title)
    assert "3 games" in out and "3 players" in out
    seats = re.findall(r"seat (\d) (\w+) +([\d.]+)% +([\d.]+)%", out)
    assert [b for _, b, _, _ in seats] == ["heuristic", "random", "heuristic"]
    assert sum(float(g) for _, _, g, _ in seats) == pytest.approx(100.0, abs=0.2)
    for heading in ("turns per hand:", "draws per hand:", "reshuffles:", "UNO catches:"):
        assert heading in out
    assert ("flips per hand:" in out) == (game == "uno-flip")


def test_simulate_table_game_options_and_errors(capsys):
    rc, out, _ = run_cli(capsys, "simulate", "--game", "uno", "--games", "1", "--players", "2",
                         "--rule", 'scoring="penalty"', "--rule", "uno_penalty=2",
                         "--target", "30", "--bots", "random-play", "--no-progress")
    assert rc == 0 and "1 games" in out
    rc, out, _ = run_cli(capsys, "simulate", "--game", "uno", "--games", "1", "--players", "2",
                         "--rule", "single_round=true", "--bots", "random-play", "--no-progress")
    assert rc == 0 and "1 games, 1 hands" in out
    rc, _, err = run_cli(capsys, "simulate", "--game", "uno-splash", "--rule",
                         'blank_cards="wild"')
    assert rc == 2 and "--rule blank_cards" in err
    rc, out, _ = run_cli(capsys, "simulate", "--game", "uno", "--through-firmware", "--games",
                         "1", "--players", "2", "--no-progress")
    assert rc == 0 and "1 games" in out
    rc, _, err = run_cli(capsys, "simulate", "--game", "uno", "--players", "20")
    assert rc == 2 and "--players" in err
    rc, _, err = run_cli(capsys, "simulate", "--game", "uno", "--bots", "genius")
    assert rc == 2 and "--bots" in err
    with pytest.raises(SystemExit):
        main(["simulate", "--game", "poker"])


def test_simulate_flip_attack_still_default_and_checkable(capsys):
    rc, out, _ = run_cli(capsys, "simulate", "--games", "1", "--players", "2", "--check",
                         "--no-progress")
    assert rc == 0 and out.startswith("UNO Flip Attack")


def test_simulate_table_game_is_replayable(capsys):
    a = run_cli(capsys, "simulate", "--game", "uno-flip", "--games", "2", "--no-progress")[1]
    b = run_cli(capsys, "simulate", "--game", "uno-flip", "--games", "2", "--no-progress")[1]
    assert a == b


def test_press_steps_are_draws_and_the_rest_decisions():
    assert all(k >= PRESS_STEPS for k in (DRAW, DRAW_TURN, DRAW_UNTIL))
    assert all(k < PRESS_STEPS for k in (TURN, DRAWN, COLOUR, TARGET,
                                         CHALLENGE, CATCH))


def test_deal_refuses_a_dealer_who_is_not_at_the_table():
    with pytest.raises(RuleViolation, match="dealer 2"):
        deal(CLASSIC_UNO.rules(), 2, 2, random.Random(0))
    with pytest.raises(RuleViolation, match="cannot deal"):
        deal(CLASSIC_UNO.rules(), 16, 0, random.Random(0))


@pytest.mark.parametrize("name", sorted(GAMES))
def test_dealing_with_the_launcher_uses_deal_n_then_the_games_profile(name):
    game = GAMES[name]
    asked = []

    class Recording(DirectDealer):
        def use(self, profile):
            asked.append(profile.name)
            super().use(profile)

    sides = game.sides if len(game.sides) == 2 else game.sides * 2
    launcher = Recording(game.profile, sides)
    table = UnoTable(game.rules(game.options(max_turns=300)), launcher,
                     [UnoRandomBot(random.Random(i)) for i in range(3)], random.Random(4),
                     check=True, deal_with_launcher=True)
    presses = launcher.presses
    for dealer in range(3):
        hand = table.play_hand(dealer)
        assert hand.turns > 0
    assert asked[-2:] == ["deal 7", game.profile.name]
    assert launcher.presses - presses >= 9  # three presses of seven cards a hand, and draws


def test_simulate_can_deal_with_the_launcher(capsys):
    rc, out, _ = run_cli(capsys, "simulate", "--game", "uno-flip", "--games", "2",
                         "--deal-with-launcher", "--check", "--no-progress")
    assert rc == 0 and "2 games" in out
