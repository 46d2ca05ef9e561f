"""Gin Rummy speed: random-bot hands per second here, next to OpenSpiel and RLCard, in one run.

    python bench/bench_gin.py [--seconds S] [--seed N]

Each engine plays whole hands between two uniformly random players for about S seconds:

- ours: ``GinTable`` with two ``RandomBot``s and the direct stock dealer, as ``launcher
  simulate --game gin`` runs it (legal actions with exact knock checks every turn, a player
  view per decision, card conservation checked at the end of every hand);
- OpenSpiel's ``gin_rummy`` (the C++ engine through pyspiel; chance nodes sampled and
  actions picked in Python, as any Python caller plays it);
- RLCard's ``GinRummyGame`` (pure Python), through its judge's legal actions.

A peer that is not installed is skipped with a line saying so (``pip install
'uno-launcher[bench]'`` brings both; open-spiel may need ``--no-deps`` plus numpy). The
rules differ: see docs/games.md, "Gin Rummy: the peers". Also timed: the solver alone.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from launcher.games.gin.bots import HeuristicBot, RandomBot
from launcher.games.gin.melds import STANDARD
from launcher.games.gin.rules import GinRules
from launcher.games.gin.table import GinTable


def timed(play_hand: Callable[[], int], seconds: float) -> tuple[int, int, float]:
    """Play hands until ``seconds`` pass: (hands, decisions, elapsed)."""
    hands = steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        steps += play_hand()
        hands += 1
        if hands % 8 == 0 and time.perf_counter() >= deadline:
            break
    return hands, steps, time.perf_counter() - start


def ours(seed: int, bots: str = "random") -> Callable[[], int]:
    make = RandomBot if bots == "random" else HeuristicBot
    table = GinTable(GinRules(), [make(random.Random(seed)), make(random.Random(seed + 1))],
                     random.Random(seed + 2))
    steps = [0]

    def count(_hand: object, _player: int, _action: int) -> None:
        steps[0] += 1

    table.observers.append(count)
    n = [0]

    def play() -> int:
        steps[0] = 0
        table.play_hand(n[0] % 2)
        n[0] += 1
        return steps[0]

    return play


def openspiel(seed: int) -> Callable[[], int] | str:
    try:
        import pyspiel
    except ImportError as exc:
        return f"open-spiel not importable ({exc})"
    game = pyspiel.load_game("gin_rummy")
    rng = random.Random(seed)

    def play() -> int:
        state = game.new_initial_state()
        steps = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.random() * len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.random() * len(legal))])
                steps += 1
        return steps

    return play


def rlcard(seed: int) -> Callable[[], int] | str:
    try:
        from rlcard.games.gin_rummy.game import GinRummyGame
    except ImportError as exc:
        return f"rlcard not importable ({exc})"
    import numpy as np

    game = GinRummyGame()
    game.np_random = np.random.RandomState(seed)
    rng = random.Random(seed)

    def play() -> int:
        game.init_game()
        steps = 0
        while not game.is_over():
            legal = game.judge.get_legal_actions()
            game.step(legal[int(rng.random() * len(legal))])
            steps += 1
        return steps

    return play


def solver_rates(seed: int) -> list[tuple[str, float]]:
    rng = random.Random(seed)
    out = []
    for label, n, fn in (("deadwood, 10 cards", 10, STANDARD.deadwood),
                         ("deadwood, 13 cards", 13, STANDARD.deadwood),
                         ("best discard, 11 cards", 11, STANDARD.best_discard)):
        hands = [sum(1 << c for c in rng.sample(range(52), n)) for _ in range(20000)]
        fresh = type(STANDARD)()  # no memo carried over from other runs
        call = getattr(fresh, fn.__name__)
        start = time.perf_counter()
        for h in hands:
            call(h)
        out.append((label, len(hands) / (time.perf_counter() - start)))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=10.0, help="per engine (default 10)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{args.seconds:g} s per engine, random legal players, one hand each")
    print(f"{'engine':<34} {'hands':>7} {'decisions/hand':>15} {'hands/s':>9}")
    engines: list[tuple[str, Callable[[], int] | str]] = [
        ("ours (python, random bots)", ours(args.seed)),
        ("OpenSpiel gin_rummy (C++)", openspiel(args.seed)),
        ("RLCard gin-rummy (python)", rlcard(args.seed)),
        ("ours, heuristic bots", ours(args.seed, "heuristic")),
    ]
    for label, play in engines:
        if isinstance(play, str):
            print(f"{label:<34} skipped: {play}")
            continue
        hands, steps, elapsed = timed(play, args.seconds)
        print(f"{label:<34} {hands:>7} {steps / hands:>15.1f} {hands / elapsed:>9.0f}")
    for label, rate in solver_rates(args.seed):
        print(f"solver: {label:<26} {rate:>12,.0f} hands/s (random hands, fresh memo)")


if __name__ == "__main__":
    main()
