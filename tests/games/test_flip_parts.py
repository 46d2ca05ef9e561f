"""The deck file, the two launchers and the bots, piece by piece."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest
from flip_position import Cards, position

from launcher.core import config
from launcher.core.errors import ConfigError
from launcher.games.cards import (
    MILD,
    SIDE_KINDS,
    WILD,
    build_deck,
    load_deck,
)
from launcher.games.flip_attack.bots import HeuristicBot, RandomBot, make_bot
from launcher.games.flip_attack.rules import act, legal_actions, shot
from launcher.games.flip_attack.state import (
    Discard,
    FlipLid,
    Play,
    Press,
    Pressed,
    PressLuck,
    StopLuck,
)
from launcher.games.launchers import DirectLauncher
from launcher.sim.games import FirmwareLauncher

# --- the deck ---------------------------------------------------------------------------


def test_shipped_deck_has_uno_flips_112_card_structure():
    deck = load_deck()
    assert len(deck) == 112 and len({c.id for c in deck}) == 112
    mild = Counter(c.mild.kind for c in deck)
    wild = Counter(c.wild.kind for c in deck)
    assert mild == {"number": 72, "hit_2": 8, "skip": 8, "flip": 8, "reverse": 4,
                    "discard_all": 4, "wild": 4, "wild_press_your_luck": 4}
    assert wild == {"number": 72, "hit_5": 8, "skip_everyone": 8, "flip": 8, "reverse": 8,
                    "wild_discard_all": 4, "wild_all_out_attack": 4}
    assert set(mild) == SIDE_KINDS[MILD] and set(wild) == SIDE_KINDS[WILD]
    # Two of each number 1-9 in each colour, on both sides.
    assert Counter((c.mild.colour, c.mild.number) for c in deck
                   if c.mild.kind == "number")[("red", 7)] == 2
    assert Counter((c.wild.colour, c.wild.number) for c in deck
                   if c.wild.kind == "number")[("teal", 9)] == 2


def test_deck_pairing_is_fixed_by_its_seed():
    a, b = load_deck(), load_deck()
    assert [str(c) for c in a] == [str(c) for c in b]
    raw = {"pairing_seed": 1,
           "mild": [{"kind": "number", "numbers": [1, 2], "per_colour": 1}],
           "wild": [{"kind": "number", "numbers": [3, 4], "per_colour": 1}]}
    other = build_deck({**raw, "pairing_seed": 2})
    assert [str(c) for c in build_deck(raw)] != [str(c) for c in other]


@pytest.mark.parametrize("change, key", [
    ({"mild": [{"kind": "hit_5", "per_colour": 2}]}, "mild[0].kind"),
    ({"mild": [{"kind": "wild", "per_colour": 2}]}, "mild[0].count"),
    ({"mild": [{"kind": "number", "numbers": [10], "per_colour": 2}]}, "mild[0].numbers"),
    ({"wild": [{"kind": "reverse", "per_colour": 2}]}, "wild"),
    ({"colour": "red"}, "colour"),
])
def test_a_bad_deck_file_names_the_key(change, key):
    raw = {"mild": [{"kind": "reverse", "per_colour": 1}],
           "wild": [{"kind": "reverse", "per_colour": 1}]}
    assert len(build_deck(raw)) == 4
    with pytest.raises(ConfigError) as err:
        build_deck({**raw, **change})
    assert err.value.key == key


def test_load_deck_reports_an_unreadable_file(tmp_path):
    with pytest.raises(ConfigError):
        load_deck(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("mild = [", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_deck(bad)


# --- launchers --------------------------------------------------------------------------


@pytest.fixture(params=["direct", "firmware"])
def launcher(request):
    if request.param == "direct":
        yield DirectLauncher(rng=random.Random(3))
        return
    fw = FirmwareLauncher(seed=3)
    yield fw
    fw.close()


def test_launchers_shoot_from_the_front_in_loading_order(launcher):
    deck = load_deck()
    launcher.load(deck[:10])
    launcher.load(deck[10:20])
    shot = []
    while launcher.cards_left:
        shot += launcher.press()
    assert [c.id for c in shot] == [c.id for c in deck[:20]]
    assert launcher.press() == []  # empty: nothing to shoot


def test_launchers_flip_and_unload(launcher):
    deck = load_deck()
    assert launcher.side == MILD
    assert launcher.flip() == WILD and launcher.side == WILD
    assert launcher.flip() == MILD
    launcher.load(deck[:5])
    assert [c.id for c in launcher.contents()] == [0, 1, 2, 3, 4]
    assert [c.id for c in launcher.unload()] == [0, 1, 2, 3, 4]
    assert launcher.cards_left == 0 and launcher.contents() == []


def test_direct_launcher_keeps_the_firmwares_dry_streak_rules():
    settings = config.load()
    launcher = DirectLauncher(settings.luck, random.Random(8))
    deck = load_deck()
    longest = 0
    for _ in range(300):
        if launcher.cards_left < 20:
            launcher.load(deck)
        if launcher.press():
            assert launcher.dry_streak == 0
        longest = max(longest, launcher.dry_streak)
    assert longest == settings.luck.mild.max_dry  # reached, never passed
    for _ in range(settings.luck.mild.max_dry):
        if launcher.dry_streak:
            break
        launcher.press()
    assert launcher.dry_streak > 0
    launcher.flip()
    assert launcher.dry_streak == 0
    launcher.unload()
    streak = launcher.dry_streak
    assert launcher.press() == [] and launcher.dry_streak == streak  # empty: no draw


def test_firmware_launcher_records_faults():
    fw = FirmwareLauncher(seed=1)
    try:
        fw.load(load_deck()[:30])
        fw.rig.sim.jam()
        for _ in range(12):
            fw.press()
        assert [f["code"] for f in fw.faults] == ["jam"]
    finally:
        fw.close()


# --- bots -------------------------------------------------------------------------------


def _pyl_state(c: Cards, discards: int):
    pyl = c("wild_press_your_luck")
    hand = [c("red 3"), c("blue 8"), c("green 9"), c("yellow 1"), c("wild")]
    state = replace(position([[pyl, *hand], c.many(3)], [c("red 5")]), launcher_count=50)
    state, _ = act(state, Play(pyl, "red"), random.Random(0))
    for _ in range(discards):
        state, _ = act(state, PressLuck(), random.Random(0))
        state, _ = shot(state, [], random.Random(0))
        state, _ = act(state, Discard(state.hands[0][0]), random.Random(0))
    return state


def test_heuristic_bot_presses_its_luck_while_the_risk_is_low():
    c = Cards()
    bot = HeuristicBot(random.Random(0))
    state = _pyl_state(c, 0)
    assert bot.choose(state, 0, legal_actions(state)) == PressLuck()
    # It has seen four dry presses on the Mild side: the next one is sure to shoot.
    for _ in range(4):
        bot.observe(Pressed(1, 1, (), MILD, "turn", 40))
    assert bot.shot_chance(MILD) == 1.0
    assert isinstance(bot.choose(state, 0, legal_actions(state)), StopLuck)
    bot.observe(FlipLid(WILD))
    assert bot.dry_streak == 0


def test_heuristic_bot_stops_when_too_much_is_at_stake():
    c = Cards()
    bot = HeuristicBot(random.Random(0))
    cheap = _pyl_state(c, 0)
    dear = _pyl_state(c, 3)
    assert bot.choose(cheap, 0, legal_actions(cheap)) == PressLuck()
    assert isinstance(bot.choose(dear, 0, legal_actions(dear)), StopLuck)


def test_heuristic_bot_keeps_its_wild_and_discards_high_cards():
    c = Cards()
    bot = HeuristicBot(random.Random(0))
    state = _pyl_state(c, 1)
    state, _ = act(state, PressLuck(), random.Random(0))
    state, _ = shot(state, [], random.Random(0))
    choice = bot.choose(state, 0, legal_actions(state))
    assert isinstance(choice, Discard) and str(choice.card.mild) == "green 9"


def test_heuristic_bot_prices_presses_from_the_hazard_curve():
    settings = config.load()
    bot = HeuristicBot(random.Random(0), settings.luck)
    mild = settings.luck.mild
    mean = sum(s * w for s, w in zip(mild.sizes, mild.weights, strict=True)) / sum(mild.weights)
    assert bot.expected_cards(MILD, 1, streak=mild.max_dry) == pytest.approx(mean)
    assert bot.expected_cards(MILD, 2, streak=0) == pytest.approx(
        mild.hazard[0] * mean + mild.hazard[1] * mean)  # both hazards are 0.28 either way
    # Against the launcher itself: five presses from a fresh streak, many times over.
    launcher = DirectLauncher(settings.luck, random.Random(4))
    deck = load_deck()
    totals = []
    for _ in range(4000):
        launcher.flip()
        launcher.flip()  # a lid cycle starts a new streak, as in the firmware
        if launcher.cards_left < 70:
            launcher.load(deck)
        totals.append(sum(len(launcher.press()) for _ in range(5)))
    expected = bot.expected_cards(MILD, 5, streak=0)
    mean_seen = sum(totals) / len(totals)
    sd = (sum((t - mean_seen) ** 2 for t in totals) / (len(totals) - 1)) ** 0.5
    assert abs(mean_seen - expected) < 3.3 * sd / len(totals) ** 0.5


def test_heuristic_bot_calls_uno_and_random_bot_sometimes_forgets():
    c = Cards()
    hand = [c("red 1"), c("blue 2")]
    state = position([hand, c.many(3)], [c("red 5")])
    legal = legal_actions(state)
    heuristic = HeuristicBot(random.Random(0))
    assert heuristic.choose(state, 0, legal) == Play(hand[0], uno=True)
    random_bot = RandomBot(random.Random(5), forget_uno=0.5)
    calls = Counter()
    for _ in range(200):
        a = random_bot.choose(state, 0, legal)
        if isinstance(a, Play):
            calls[a.uno] += 1
    assert calls[True] > 30 and calls[False] > 30


def test_random_bot_only_picks_legal_actions_and_presses_sometimes():
    c = Cards()
    hand = [c("red 1"), c("red 2"), c("wild"), c("blue 9")]
    state = position([hand, c.many(3)], [c("red 5")])
    legal = legal_actions(state)
    bot = RandomBot(random.Random(1))
    picks = Counter()
    for _ in range(400):
        a = bot.choose(state, 0, legal)
        plain = a if not isinstance(a, Play) else Play(a.card, a.colour, a.discard_colour)
        assert plain in legal
        picks["press" if isinstance(a, Press) else a.card.id] += 1
    # Press, red 1, red 2 and the wild are picked about equally (the wild's four colours
    # do not make it four times as likely).
    assert set(picks) == {"press", hand[0].id, hand[1].id, hand[2].id}
    assert max(picks.values()) < 2 * min(picks.values())


def test_make_bot_knows_the_names():
    assert make_bot("random", random.Random(0)).name == "random"
    assert make_bot("heuristic", random.Random(0)).name == "heuristic"
    with pytest.raises(ValueError):
        make_bot("clever", random.Random(0))
