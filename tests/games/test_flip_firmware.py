"""Scenario: whole games of Flip Attack drawn through the firmware on the simulated launcher."""

from __future__ import annotations

import random

import pytest

from launcher.core import config
from launcher.games.cards import load_deck
from launcher.games.flip_attack.bots import HeuristicBot, RandomBot
from launcher.games.flip_attack.state import FlipLid, GameOptions, Load, Pressed
from launcher.games.flip_attack.table import FlipAttackTable
from launcher.sim.games import FirmwareLauncher

GAMES = 20


class WatchedFirmware(FirmwareLauncher):
    """The firmware launcher, checking the firmware's own card count around every press."""

    def press(self):
        self._agree()
        out = super().press()
        self._agree()
        return out

    def _agree(self) -> None:
        inventory = self.inventory
        # The firmware forgets the count when the lid opens on an empty cartridge (None).
        assert inventory is None or inventory == self.cards_left, (inventory, self.cards_left)


HOUSE_RULES = GameOptions(two_player_reverse="reverse", first_card_action="return",
                          first_card_wild="play", pyl_discard="match", pyl_card_returns=True,
                          stack_hits=True, last_card_penalties=False,
                          attack_includes_attacker=False, flip_wild_top="open",
                          reload_keep_top=False)


@pytest.mark.parametrize("options", [GameOptions(), HOUSE_RULES], ids=["rules", "house"])
def test_twenty_whole_games_through_the_firmware_without_violations_or_faults(options):
    settings = config.load()
    rng = random.Random(20)
    launcher = WatchedFirmware(settings, seed=rng.getrandbits(32))
    bots = [HeuristicBot(random.Random(1), settings.luck), RandomBot(random.Random(2)),
            HeuristicBot(random.Random(3), settings.luck), RandomBot(random.Random(4))]
    effects = []
    table = FlipAttackTable(launcher, bots, rng, options, load_deck(), observers=[effects.append])
    try:
        results = [table.play_game(first_dealer=g % 4) for g in range(GAMES)]
        counters = dict(launcher.rig.app.machine.memory.counters)
        assert launcher.faults == []
        assert launcher.rig.state == "ready"
    finally:
        launcher.close()
    for result in results:
        assert result.winner is not None and max(result.scores) >= 500
        assert all(hand.winner is not None for hand in result.hands)
    presses = [e for e in effects if isinstance(e, Pressed)]
    # Every press the rules asked for reached the firmware as one accepted press (none lost
    # to the mash guard or to sleep); presses on an empty cartridge draw no luck there.
    assert counters["presses"] == sum(not e.empty for e in presses) == launcher.presses - sum(
        e.empty for e in presses)
    assert counters["cards_shot"] == sum(len(e.cards) for e in presses)
    assert counters["flips"] == launcher.flips == sum(isinstance(e, FlipLid) for e in effects)
    assert sum(isinstance(e, Load) and e.reason == "reload" for e in effects) > 0
    # Conservation was checked after every decision and every press.
    assert table.checks >= sum(h.state.turns + h.state.presses for r in results for h in r.hands)
