"""Whole games of a run (``base.Run``) through the game-state contract: what every game's
``GameSpec.play`` does, so ``launcher simulate`` and ``launcher tune`` play every game the
same way, through ``GameState`` alone.

Each game gets its launcher (the game's direct one, or the firmware on the simulated
launcher that ``run.firmware`` makes) as its chance player (``launchers.LauncherChance``),
its bots at the seats (``GameSpec.player``), and a state seeded from its own ``game_seed``;
``base.play_out`` plays it to the end, with the card check after every step when
``run.check`` asks for it.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import TypeVar

from launcher.games.base import (
    GameSpec,
    GameState,
    Run,
    Summary,
    finish,
    game_seed,
    launcher_for,
    play_out,
)
from launcher.games.launchers import Launcher, LauncherChance

StateT = TypeVar("StateT", bound=GameState)
SummaryT = TypeVar("SummaryT", bound=Summary)


def play_games(spec: GameSpec, run: Run, start: int, stop: int, summary: SummaryT,
               direct: Callable[[random.Random], Launcher],
               new_state: Callable[[int, int], StateT],
               record: Callable[[StateT], None]) -> SummaryT:
    """Games ``start`` to ``stop - 1`` of ``run`` into ``summary``. Each game's generator
    (from its ``game_seed``) seeds, in this order, its launcher (``direct(rng)``, or
    ``run.firmware``'s), its seats' bots, and its state: ``new_state(seed, index)``; at the
    end ``record(state)`` books it. The firmware's faults are counted and its rig closed
    however the game ends (``base.finish``)."""
    for g in range(start, stop):
        rng = random.Random(game_seed(run.seed, g))
        launcher = launcher_for(run, rng, functools.partial(direct, rng), sides=spec.sides)
        try:
            seats = [spec.player(bot, rng, run.settings) for bot in run.bots]
            state = new_state(rng.getrandbits(64), g)
            play_out(state, seats, LauncherChance(launcher, spec.profile, spec.sides),
                     run.check)
            record(state)
        finally:
            finish(run, summary, launcher)
    return summary
