"""Launcher profiles in the firmware: what a press does for each game, and whole games of each
game played through the firmware on the simulated launcher in its profile."""

from __future__ import annotations

import random

import pytest

from launcher.cli.simulate import simulate
from launcher.core import config, cues
from launcher.core import machine as m
from launcher.core.errors import ConfigError
from launcher.core.profiles import DEALER, GIN, deal_profile, parse_profile
from launcher.firmware.console import Console
from launcher.games.base import Run
from launcher.games.dealers import LauncherDealer
from launcher.games.gin.bots import make_bot as make_gin_bot
from launcher.games.gin.summary import GinSummary
from launcher.games.gin.table import GinTable
from launcher.games.gin.variants import variant_rules
from launcher.games.registry import GAMES
from launcher.sim.games import FirmwareLauncher
from launcher.sim.rig import CueLog, SimRig


def rig_in(profile: str, cards: int = 20) -> SimRig:
    rig = SimRig(seed=4)
    assert rig.app.use_profile(parse_profile(profile))
    rig.load([f"c{i}" for i in range(cards)])
    return rig


def test_dealer_shoots_one_card_a_press_with_no_luck_and_no_escalation():
    rig = rig_in("dealer")
    rng_state = rig.app.rng.getstate()
    got = [rig.press() for _ in range(6)]
    assert got == [["c0"], ["c1"], ["c2"], ["c3"], ["c4"], ["c5"]]
    assert rig.app.rng.getstate() == rng_state  # the luck generator was never touched
    played = rig.cues.played
    assert not any(cues.is_bam(c) or cues.is_press_cue(c) for c in played)
    assert rig.inventory == 14 and rig.faults == []
    rig.close()


def test_deal_n_shoots_n_cards_then_the_next_seat_chime():
    rig = rig_in("deal 7", cards=30)
    hands = [rig.press() for _ in range(4)]
    assert [len(h) for h in hands] == [7, 7, 7, 7]
    assert rig.cues.played.count(cues.DEAL_NEXT) == 4
    assert rig.inventory == 2
    rig.close()


def test_gin_refuses_to_draw_below_two_cards_with_the_hand_draw_cue():
    rig = rig_in("gin", cards=5)
    assert [len(rig.press()) for _ in range(5)] == [1, 1, 1, 0, 0]
    assert rig.inventory == 2 and len(rig.sim.cartridge) == 2
    refused = [d["reason"] for k, d in rig.app.events() if k == "refused"]
    assert refused == ["the stock is down to 2: the hand is a draw"] * 2
    assert rig.cues.played.count(cues.HAND_DRAW) == 2
    rig.close()


def test_uno_flip_profile_flips_with_the_lid_and_tracks_the_side():
    rig = rig_in("uno-flip")
    assert rig.press() == ["c0"]
    assert rig.flip() == "wild" == rig.sim.side
    assert rig.press() == ["c1"]
    rig.close()


def test_the_profile_changes_only_when_the_launcher_is_ready_or_open():
    rig = SimRig(seed=1, cues=CueLog())
    rig.load([f"c{i}" for i in range(10)])
    rig.app.use_profile(deal_profile(5))
    rig.sim.press()
    rig.advance(0)
    assert rig.state == m.SHOOTING
    assert rig.app.use_profile(DEALER) is False  # mid-shot: refused, the deal goes on
    rig.settle()
    assert rig.app.machine.profile.name == "deal 5"
    assert rig.app.use_profile(DEALER) and rig.app.machine.profile is DEALER
    rig.close()


def test_the_console_shows_and_sets_the_profile():
    rig = SimRig(seed=1)
    console = Console(rig.app)
    assert console.handle_line("profile") == ["ok profile=flip-attack"]
    assert console.handle_line("profile deal 7") == ['ok profile="deal 7"']
    assert console.handle_line("profile deal 99")[-1].startswith("error value deal N needs")
    assert console.handle_line("profile poker")[-1].startswith(
        "error value unknown launcher profile 'poker'")
    assert "profile=\"deal 7\"" in console.handle_line("status")[-1]
    console.close()
    rig.close()


def test_the_config_key_sets_the_start_profile_and_names_bad_values():
    raw = config.set_key(config.default_raw(), "game.profile", "gin")
    settings = config.settings_from_dict(raw)
    assert settings.profile is GIN
    rig = SimRig(settings, seed=1)
    assert rig.app.machine.profile is GIN
    rig.close()
    with pytest.raises(ConfigError, match=r"game\.profile = 'deal 0': must be one of"):
        config.set_key(config.default_raw(), "game.profile", "deal 0")


@pytest.mark.parametrize(("game", "players"), [("uno", 3), ("uno-splash", 2), ("uno-flip", 3)])
def test_whole_table_games_through_the_firmware_in_their_profile(game, players):
    run = Run(GAMES[game].options({}), ("heuristic",) * players, 5, config.load(), check=True,
              deal_with_launcher=True, firmware=FirmwareLauncher)
    summary = simulate(game, run, 2)
    assert summary.games == 2 and summary.faults == {}


def test_whole_gin_hands_through_the_firmware_stock():
    rules = variant_rules("standard", {})
    master = random.Random(7)
    players = [make_gin_bot("heuristic", random.Random(master.getrandbits(64))) for _ in "ab"]
    dealer = LauncherDealer(FirmwareLauncher(seed=3))
    table = GinTable(rules, players, random.Random(master.getrandbits(64)), dealer)
    summary = GinSummary(bots=["heuristic", "heuristic"])
    try:
        summary.add(table.play_game(first_dealer=0))
    finally:
        table.dealer.close()
    assert summary.hands >= 1
    assert dealer.dispensed > 0 and dealer.launcher.faults == []
