"""Classic UNO, UNO Splash and UNO Flip as ``launcher simulate`` plays them: a ``GameSpec``
for each (``UNO_SPEC``, ``UNO_SPLASH_SPEC``, ``UNO_FLIP_SPEC``) over the one table engine."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from launcher.games.base import (
    GameResult,
    OptionError,
    Options,
    Run,
    Seats,
    finish,
    game_seed,
    launcher_for,
)
from launcher.games.launchers import DirectDealer
from launcher.games.runs import play_games
from launcher.games.uno.bots import UNO_BOTS
from launcher.games.uno.contract import UnoGameState, UnoPlayer
from launcher.games.uno.flip import UNO_FLIP_GAME
from launcher.games.uno.game import CLASSIC_UNO, Game, UnoOptions
from launcher.games.uno.splash import UNO_SPLASH
from launcher.games.uno.summary import UnoSummary
from launcher.games.uno.table import UnoTable

if TYPE_CHECKING:
    from launcher.core.config import Settings


class UnoSpec:
    """One game of the UNO family, the launcher dealing one card a press."""

    bots = UNO_BOTS
    target = "target_score"
    luck = False
    variants: Mapping[str, Mapping[str, Any]] = {}
    launcher_deal = None
    default_players = 4
    summary = UnoSummary

    def __init__(self, game: Game, help: str) -> None:
        self.game = game
        self.name = game.name
        self.title = game.title
        self.help = help
        self.profile = game.profile
        self.sides = game.sides if len(game.sides) == 2 else game.sides * 2

    def options(self, changes: Mapping[str, Any], variant: str | None = None) -> UnoOptions:
        if variant:
            raise OptionError("variant", variant, f"{self.name} has no variants")
        return self.game.options(**changes)

    def idle(self, options: Any, name: str, seats: Seats) -> str | None:
        return options.idle(name, seats)

    def refuse_seats(self, options: Any, players: int) -> str | None:
        return self.game.rules(options).cannot_deal(players)

    def heading(self, run: Run) -> str:
        where = ("through the firmware (simulated launcher)" if run.firmware else
                 "direct dealer")
        return f"{self.title}, {run.players} players, {where}, seed {run.seed}"

    def table(self, run: Run, rng: random.Random,
              observers: Sequence[Callable[[tuple[Any, ...]], None]] = ()) -> UnoTable:
        """``run.firmware``: the draw pile is the firmware on the simulated launcher, switched
        to the game's profile (``dealer``, ``uno-flip``, and ``deal N`` for the deal)."""
        game = self.game
        sides = game.sides if len(game.sides) == 2 else game.sides * 2
        launcher = launcher_for(run, rng, lambda: DirectDealer(game.profile, sides),
                                sides=sides)
        seats = [UNO_BOTS.make(name, random.Random(rng.getrandbits(64))) for name in run.bots]
        try:
            assert isinstance(run.options, UnoOptions)
            return UnoTable(game.rules(run.options), launcher, seats,
                            random.Random(rng.getrandbits(64)), check=run.check,
                            observers=observers, deal_with_launcher=run.deal_with_launcher)
        except BaseException:
            if run.firmware is not None:
                launcher.close()  # type: ignore[attr-defined]
            raise

    def player(self, bot: str, rng: random.Random, settings: Settings) -> UnoPlayer:
        return UnoPlayer(UNO_BOTS.make(bot, random.Random(rng.getrandbits(64))))

    def new_game(self, players: int | None = None, seed: int = 0,
                 options: Options | None = None, settings: Settings | None = None
                 ) -> UnoGameState:
        if options is None:
            options = self.game.options()
        assert isinstance(options, UnoOptions)
        return UnoGameState(self.game.rules(options), players or self.default_players, seed)

    def play(self, run: Run, start: int, stop: int) -> UnoSummary:
        """Through the contract (``runs.play_games``); with ``run.deal_with_launcher``, at
        the table, whose launcher deals the hands (the contract deals them itself)."""
        game = self.game
        summary = UnoSummary(list(run.bots), game=game.name, two_sided=len(game.sides) == 2)
        assert isinstance(run.options, UnoOptions)
        rules = game.rules(run.options)
        if run.deal_with_launcher:
            return self._at_tables(run, start, stop, summary)

        def record(state: UnoGameState) -> None:
            summary.add(GameResult(state.scores, state.winner, state.finished))

        return play_games(self, run, start, stop, summary,
                          lambda rng: DirectDealer(game.profile, self.sides),
                          lambda seed, g: UnoGameState(rules, run.players, seed), record)

    def _at_tables(self, run: Run, start: int, stop: int, summary: UnoSummary) -> UnoSummary:
        for g in range(start, stop):
            table = self.table(run, random.Random(game_seed(run.seed, g)))
            try:
                summary.add(table.play_game())  # the players draw for the first dealer
            finally:
                finish(run, summary, table.launcher)
        return summary


UNO_SPEC = UnoSpec(CLASSIC_UNO, "classic UNO, the launcher dealing one card a press")
UNO_SPLASH_SPEC = UnoSpec(UNO_SPLASH, "UNO Splash")
UNO_FLIP_SPEC = UnoSpec(UNO_FLIP_GAME, "UNO Flip, one card a press and a lid cycle per Flip")
