"""UNO Flip Attack as ``launcher simulate`` plays it: its ``GameSpec`` (``FLIP_ATTACK_SPEC``)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from launcher.games.base import (
    GameResult,
    OptionError,
    Options,
    RuleViolation,
    Run,
    Seats,
    launcher_for,
)
from launcher.games.cards import MILD, WILD, Card, load_deck
from launcher.games.flip_attack.bots import BOTS
from launcher.games.flip_attack.contract import FlipAttackGameState, FlipAttackPlayer
from launcher.games.flip_attack.rules import cannot_deal
from launcher.games.flip_attack.state import Effect, GameOptions
from launcher.games.flip_attack.summary import FlipAttackSummary, Recorder
from launcher.games.flip_attack.table import FlipAttackTable
from launcher.games.launchers import FLIP_ATTACK, DirectLauncher
from launcher.games.runs import play_games

if TYPE_CHECKING:
    from launcher.core.config import Settings


class FlipAttackSpec:
    """UNO Flip Attack against the launcher's luck: the direct luck model, or the firmware."""

    name = "flip-attack"
    title = "UNO Flip Attack"
    help = "UNO Flip Attack against the launcher's luck (default)"
    bots = BOTS
    target = "target_score"
    luck = True
    variants: Mapping[str, Mapping[str, Any]] = {}
    launcher_deal = "the hands are dealt before the launcher is loaded"
    default_players = 4
    summary = FlipAttackSummary

    def options(self, changes: Mapping[str, Any], variant: str | None = None) -> GameOptions:
        if variant:
            raise OptionError("variant", variant, f"{self.name} has no variants")
        return GameOptions().changed(self.name, changes)

    def idle(self, options: Any, name: str, seats: Seats) -> str | None:
        return options.idle(name, seats)

    def refuse_seats(self, options: Any, players: int) -> str | None:
        return cannot_deal(len(self.deck), players, options)

    def heading(self, run: Run) -> str:
        where = ("through the firmware (simulated launcher)" if run.firmware else
                 "direct luck model")
        return f"{self.title}, {where}, seed {run.seed}"

    @cached_property
    def deck(self) -> tuple[Card, ...]:
        """The shipped deck, read once: the table compiles a deck once per tuple."""
        return load_deck()

    def table(self, run: Run, rng: random.Random,
              observers: Sequence[Callable[[Effect], None]] = ()) -> FlipAttackTable:
        launcher = launcher_for(run, rng, lambda: DirectLauncher(
            run.settings.luck, random.Random(rng.getrandbits(64))))
        players = [BOTS.make(name, random.Random(rng.getrandbits(64)), run.settings.luck)
                   for name in run.bots]
        assert isinstance(run.options, GameOptions)
        return FlipAttackTable(launcher, players, random.Random(rng.getrandbits(64)), run.options,
                     self.deck, observers=observers, check=run.check)

    profile = FLIP_ATTACK
    sides = (MILD, WILD)

    def player(self, bot: str, rng: random.Random, settings: Settings) -> FlipAttackPlayer:
        return FlipAttackPlayer(BOTS.make(bot, random.Random(rng.getrandbits(64)),
                                          settings.luck))

    def new_game(self, players: int | None = None, seed: int = 0,
                 options: Options | None = None, settings: Settings | None = None
                 ) -> FlipAttackGameState:
        opts = options if options is not None else GameOptions()
        assert isinstance(opts, GameOptions)
        n = players or self.default_players
        why = cannot_deal(len(self.deck), n, opts)
        if why:
            raise RuleViolation(why)
        return FlipAttackGameState(opts, n, seed, self.deck,
                                   None if settings is None else settings.luck)

    def play(self, run: Run, start: int, stop: int) -> FlipAttackSummary:
        """Through the contract (``runs.play_games``); a ``Recorder`` hears every effect."""
        summary = FlipAttackSummary(bots=list(run.bots))
        assert isinstance(run.options, GameOptions)
        options = run.options
        recorders: list[Recorder] = []

        def new_state(seed: int, g: int) -> FlipAttackGameState:
            n = run.players
            state = FlipAttackGameState(options, n, seed, self.deck, run.settings.luck,
                                        first_dealer=g % n)
            recorders[:] = [Recorder(summary, run.settings.luck)]
            state.listen(recorders[0].observe)
            return state

        def record(state: FlipAttackGameState) -> None:
            recorders[0].game(GameResult(state.scores, state.winner, state.finished))

        return play_games(self, run, start, stop, summary,
                          lambda rng: DirectLauncher(run.settings.luck,
                                                     random.Random(rng.getrandbits(64))),
                          new_state, record)


FLIP_ATTACK_SPEC = FlipAttackSpec()
