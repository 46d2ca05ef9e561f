"""Gin Rummy as ``launcher simulate`` plays it: its ``GameSpec`` (``GIN_SPEC``)."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from launcher.games.base import Options, RuleViolation, Run, Seats
from launcher.games.cards import MILD, WILD
from launcher.games.dealers import LauncherDealer
from launcher.games.gin.bots import BOTS
from launcher.games.gin.contract import GinGameState, GinPlayer
from launcher.games.gin.rules import GinRules
from launcher.games.gin.summary import GinSummary
from launcher.games.gin.table import GameRecord, GinTable, Observer
from launcher.games.gin.variants import VARIANTS, variant_rules
from launcher.games.launchers import GIN, DirectDealer
from launcher.games.runs import play_games

if TYPE_CHECKING:
    from launcher.core.config import Settings


class GinSpec:
    """Gin Rummy for two, the launcher dispensing the stock."""

    name = "gin"
    title = "Gin Rummy"
    help = "Gin Rummy for two, the launcher dispensing the stock (--variant)"
    bots = BOTS
    target = "game_target"
    luck = False
    variants = VARIANTS
    launcher_deal = "the table deals the hands, the launcher holds the stock"
    default_players = 2
    summary = GinSummary

    def options(self, changes: Mapping[str, Any], variant: str | None = None) -> GinRules:
        return variant_rules(variant or "standard", changes)

    def idle(self, options: Any, name: str, seats: Seats) -> str | None:
        why = options.idle(name, seats)
        if why is None and name == "knocker_layout" and all(
                getattr(BOTS.maker(b), "lays_out", False) for b in seats.bots):
            why = "every bot lays out its own melds when it knocks"
        return why

    def refuse_seats(self, options: Any, players: int) -> str | None:
        return None if players == 2 else "gin rummy is a game for two players"

    def heading(self, run: Run) -> str:
        where = "through the firmware" if run.firmware else "direct dealer"
        return f"{self.title} ({run.variant or 'standard'}), {where}, seed {run.seed}"

    def table(self, run: Run, rng: random.Random,
              observers: Sequence[Observer] = ()) -> GinTable:
        """``run.firmware``: the stock is the firmware on the simulated launcher, under the
        ``gin`` profile."""
        players = [BOTS.make(n, random.Random(rng.getrandbits(64))) for n in run.bots]
        dealer = None
        if run.firmware is not None:
            dealer = LauncherDealer(run.firmware(settings=run.settings,
                                                 seed=rng.getrandbits(32)))
        assert isinstance(run.options, GinRules)
        return GinTable(run.options, players, random.Random(rng.getrandbits(64)), dealer,
                        observers)

    profile = GIN
    sides = (MILD, WILD)

    def player(self, bot: str, rng: random.Random, settings: Settings) -> GinPlayer:
        return GinPlayer(BOTS.make(bot, random.Random(rng.getrandbits(64))))

    def new_game(self, players: int | None = None, seed: int = 0,
                 options: Options | None = None, settings: Settings | None = None
                 ) -> GinGameState:
        why = self.refuse_seats(options, players or 2)
        if why:
            raise RuleViolation(why)
        rules = options if options is not None else self.options({})
        assert isinstance(rules, GinRules)
        return GinGameState(rules, seed)

    def play(self, run: Run, start: int, stop: int) -> GinSummary:
        """Through the contract (``runs.play_games``): the launcher holds the stock."""
        summary = GinSummary(bots=list(run.bots))
        rules = run.options
        assert isinstance(rules, GinRules)

        def record(state: GinGameState) -> None:
            summary.add(GameRecord(tuple(state.results), state.board, state.first_dealer))

        return play_games(self, run, start, stop, summary,
                          lambda rng: DirectDealer(GIN, self.sides),
                          lambda seed, g: GinGameState(rules, seed, first_dealer=g % 2),
                          record)


GIN_SPEC = GinSpec()
