"""Throughput of whole Flip Attack games with each launcher: turns/s, presses/s, games/s.

    python bench/bench_games.py [--direct-games N] [--firmware-games N] [--players P]

Games are 4 bots (heuristic, random, heuristic, random) playing to 500 points, as
``launcher simulate`` plays them: without the conservation check after every step, unless
``--check`` (which ``simulate --check`` turns on too). The launcher
alone (no rules) is timed too: presses/s of a refilled cartridge.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from launcher.core import config
from launcher.games.bots import make_bot
from launcher.games.cards import load_deck
from launcher.games.flip_attack import GameOptions, Table
from launcher.games.launchers import DirectLauncher, FirmwareLauncher


def games(kind: str, n: int, players: int, seed: int, check: bool = False) -> dict[str, float]:
    settings = config.load()
    rng = random.Random(seed)
    launcher = (FirmwareLauncher(settings, seed=seed) if kind == "firmware"
                else DirectLauncher(settings.luck, random.Random(seed)))
    names = ["heuristic", "random"] * players
    bots = [make_bot(names[i], random.Random(seed + i), settings.luck) for i in range(players)]
    table = Table(launcher, bots, rng, GameOptions(), load_deck(), check=check)
    turns = presses = hands = 0
    start = time.perf_counter()
    for g in range(n):
        result = table.play_game(first_dealer=g % players)
        for hand in result.hands:
            hands += 1
            turns += hand.state.turns
            presses += hand.state.presses
    elapsed = time.perf_counter() - start
    if isinstance(launcher, FirmwareLauncher):
        launcher.close()
    return {"games": n, "hands": hands, "turns": turns, "presses": presses,
            "seconds": elapsed, "checks": table.checks}


def presses_alone(kind: str, n: int, seed: int) -> float:
    settings = config.load()
    launcher = (FirmwareLauncher(settings, seed=seed) if kind == "firmware"
                else DirectLauncher(settings.luck, random.Random(seed)))
    deck = load_deck()
    start = time.perf_counter()
    for _ in range(n):
        if launcher.cards_left < 20:
            launcher.load(deck)
        launcher.press()
    elapsed = time.perf_counter() - start
    if isinstance(launcher, FirmwareLauncher):
        launcher.close()
    return n / elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--direct-games", type=int, default=1000)
    p.add_argument("--firmware-games", type=int, default=200)
    p.add_argument("--players", type=int, default=4)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--check", action="store_true", help="check conservation after every step")
    args = p.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{args.players} players, games to 500 points")
    print(f"{'launcher':<10} {'games':>6} {'hands':>6} {'turns':>8} {'presses':>8} "
          f"{'seconds':>8} {'games/s':>8} {'turns/s':>9} {'presses/s':>10}")
    for kind, n in (("direct", args.direct_games), ("firmware", args.firmware_games)):
        r = games(kind, n, args.players, args.seed, args.check)
        s = r["seconds"]
        print(f"{kind:<10} {r['games']:>6.0f} {r['hands']:>6.0f} {r['turns']:>8.0f} "
              f"{r['presses']:>8.0f} {s:>8.2f} {r['games'] / s:>8.1f} {r['turns'] / s:>9.0f} "
              f"{r['presses'] / s:>10.0f}")
    for kind, n in (("direct", 200_000), ("firmware", 20_000)):
        print(f"{kind} launcher alone: {presses_alone(kind, n, args.seed):,.0f} presses/s "
              f"({n} presses)")


if __name__ == "__main__":
    main()
