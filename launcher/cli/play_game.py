"""``launcher play --game NAME``: a person's seat at any registered game, against the bots.

It knows nothing of any game's modules: it plays through the contract alone
(``games.base.GameState``): the seat's ``view``, its ``legal_actions`` numbered with
``action_to_string``, the others' moves and the launcher's shots as they come. The bots
answer through the contract too (``GameSpec.player``), and the chance player is the
firmware on the simulated launcher (``sim.games.FirmwareLauncher`` as a
``games.launchers.LauncherChance``), or with ``--direct`` the game's own luck model (its
``chance_outcomes``, sampled: ``games.base.Sampled``).

One line a decision: the number of an action, or ``q`` / ``quit``. The exit status follows
``launcher play``'s: 0 at the end of the game, at ``q`` or at the end of the input, 1 when a
line of a script (not a terminal) was not one of the numbers offered.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TextIO

from launcher.core.config import Settings
from launcher.games.base import Chance, GameSpec, GameState, Sampled
from launcher.games.launchers import LauncherChance
from launcher.games.registry import GAMES


class Seat:
    """The game, the bots, the launcher and the person at ``seat``, over lines of text."""

    def __init__(self, spec: GameSpec, state: GameState, seat: int, bots: Sequence[str],
                 settings: Settings, seed: int, direct: bool, out: TextIO) -> None:
        self.state = state
        self.seat = seat
        self.out = out
        rng = random.Random(seed)
        self.players = {q: spec.player(bots[q], rng, settings)
                        for q in range(state.num_players()) if q != seat}
        self.luck = random.Random(rng.getrandbits(64))  # --direct: the chance outcomes' draws
        self.launcher = None
        self.chance: Chance = Sampled(self.luck)
        if not direct:
            from launcher.sim.games import FirmwareLauncher

            self.launcher = FirmwareLauncher(settings=settings, seed=rng.getrandbits(32),
                                             sides=spec.sides)
            self.chance = LauncherChance(self.launcher, spec.profile, spec.sides)
        self.failed = 0

    def close(self) -> None:
        if self.launcher is not None:
            self.launcher.close()

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def play(self, lines: TextIO, scripted: bool) -> int:
        """Until the game is over, ``q``, or the end of ``lines``; the exit status."""
        state = self.state
        while not state.is_terminal():
            who = state.current_player()
            if state.is_chance_node():
                action = self.chance.answer(state)
                self.say(state.action_to_string(action))
            elif who != self.seat:
                action = self.players[who].act(state)
                self.say(f"seat {who}: {state.action_to_string(action)}")
            else:
                chosen = self.ask(lines, scripted)
                if chosen is None:
                    return 1 if self.failed and scripted else 0
                action = chosen
                self.say(f"you: {state.action_to_string(action)}")
            state.apply_action(action)
        self.say("game over: " + ", ".join(
            f"seat {q} {r:g}" for q, r in enumerate(state.returns())))
        return 1 if self.failed and scripted else 0

    def ask(self, lines: TextIO, scripted: bool) -> int | None:
        """The person's action (None: ``q`` or the end of the input)."""
        state = self.state
        legal = state.legal_actions()
        self.say(str(state.view(self.seat)))
        for i, a in enumerate(legal, 1):
            self.say(f"  {i} {state.action_to_string(a)}")
        while True:
            self.out.write(f"seat {self.seat}> ")
            self.out.flush()
            line = lines.readline()
            if not line:
                self.say("")
                return None
            text = line.strip()
            if text in ("q", "quit", "exit"):
                self.say("ok bye")
                return None
            if text.isdigit() and 1 <= int(text) <= len(legal):
                return legal[int(text) - 1]
            self.failed += 1
            self.say(f"error choose a number from 1 to {len(legal)}, or q")


def run_seat(name: str, players: int | None, seat: int, bots: str | None,
             rules: Sequence[str], seed: int, settings: Settings, direct: bool,
             lines: TextIO, out: TextIO, scripted: bool) -> int:
    """``launcher play --game NAME``: the game from its spec, a person at ``seat``."""
    from launcher.cli.simulate import parse_bots, parse_rules
    from launcher.core.errors import ConfigError

    spec = GAMES[name]
    n = players or spec.default_players
    if not 0 <= seat < n:
        raise ConfigError("--seat", seat, f"must be a seat from 0 to {n - 1}")
    options = parse_rules(spec, rules)
    why = spec.refuse_seats(options, n)
    if why:
        raise ConfigError("--players", n, why)
    default = "heuristic" if "heuristic" in spec.bots else next(iter(spec.bots))
    names = parse_bots(bots or default, n, spec.bots)
    state = spec.new_game(players=n, seed=seed, options=options, settings=settings)
    table = Seat(spec, state, seat, names, settings, seed, direct, out)
    others = ", ".join(f"seat {q} {names[q]}" for q in range(n) if q != seat)
    table.say(f"{spec.title}: you are seat {seat}, against {others}; seed {seed}, the "
              + ("luck model" if direct else "firmware on the simulated launcher")
              + " shooting")
    try:
        return table.play(lines, scripted)
    finally:
        table.close()
