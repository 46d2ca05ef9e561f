"""UNO Flip Attack turns per second: this checkout, and another one, in alternating processes.

    python bench/bench_uno.py --flip-attack [--games 100] [--rounds 6] [--compare-root DIR]

4 random bots, direct luck model, games to 500, seeds fixed, with and without the
conservation check; ``--compare-root DIR`` runs the same measurement on another checkout
(e.g. the commit before a speed-up, unpacked with ``git archive``) in alternating
subprocesses, so both see the same machine. The UNO and Gin comparisons with the peers
(RLCard, OpenSpiel) are in ``python -m bench.games --peers 5``.
"""

from __future__ import annotations

import argparse
import inspect
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _flip_attack() -> tuple[Any, Any, Any]:
    """(make_bot, GameOptions, Table) of the checkout on the path, whichever layout it has."""
    try:
        from launcher.games.flip_attack.bots import make_bot
        from launcher.games.flip_attack.state import GameOptions
        try:
            from launcher.games.flip_attack.table import FlipAttackTable as Table
        except ImportError:  # a checkout from before the table's name was its own
            from launcher.games.flip_attack.table import Table  # type: ignore[no-redef]
    except ImportError:
        try:  # a checkout from before flip_attack/ had table.py and state.py
            from launcher.games.flip_attack.rules import GameOptions, Table  # type: ignore
        except ImportError:  # from before games/ had a package per game
            from launcher.games.bots import make_bot  # type: ignore[no-redef]

            from launcher.games.flip_attack import GameOptions, Table  # type: ignore
    return make_bot, GameOptions, Table


def flip_attack_once(games: int, check: bool) -> tuple[int, float]:
    """Turns and CPU seconds of ``games`` 4-player Flip Attack games with random bots."""
    from launcher.core import config
    from launcher.games.cards import load_deck
    from launcher.games.launchers import DirectLauncher

    make_bot, GameOptions, Table = _flip_attack()

    settings = config.load()
    kw = {"check": check} if "check" in inspect.signature(Table).parameters else {}
    table = Table(DirectLauncher(settings.luck, random.Random(1)),
                  [make_bot("random", random.Random(1 + i), settings.luck) for i in range(4)],
                  random.Random(1), GameOptions(), load_deck(), **kw)
    turns = 0
    start = time.process_time()
    for g in range(games):
        for hand in table.play_game(first_dealer=g % 4).hands:
            turns += hand.state.turns
    return turns, time.process_time() - start


def flip_attack_bench(args: argparse.Namespace) -> None:
    roots = [("this checkout", ROOT)]
    if args.compare_root:
        roots.insert(0, ("compared", Path(args.compare_root).resolve()))
    print(f"UNO Flip Attack, 4 random bots, direct luck model, {args.games} games to 500, "
          f"seeds fixed; {args.rounds} alternating runs")
    for _ in range(args.rounds):
        for label, root in roots:
            for check in (True, False):
                env = {**os.environ, "PYTHONPATH": str(root)}
                out = subprocess.run(
                    [sys.executable, __file__, "--flip-attack-child", str(args.games),
                     "check" if check else "nocheck"],
                    env=env, cwd=root, capture_output=True, text=True, check=True).stdout
                turns, seconds, has_check = out.split()
                if has_check == "no" and not check:
                    continue  # an old engine always checks
                mode = "check on " if check else "check off"
                print(f"  {label:<14} {mode} {int(turns):>8} turns {float(seconds):7.2f} CPU s "
                      f"{int(turns) / float(seconds):>9,.0f} turns/s")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--flip-attack-child":
        sys.path.insert(0, os.environ["PYTHONPATH"])
        Table = _flip_attack()[2]

        has = "check" in inspect.signature(Table).parameters
        turns, seconds = flip_attack_once(int(sys.argv[2]), sys.argv[3] == "check")
        print(turns, seconds, "yes" if has else "no")
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=6, help="alternating runs (default 6)")
    p.add_argument("--flip-attack", action="store_true",
                   help="accepted for old command lines: Flip Attack is all this times")
    p.add_argument("--games", type=int, default=100, help="Flip Attack games per run")
    p.add_argument("--compare-root", metavar="DIR",
                   help="another checkout to time the same way (Flip Attack only)")
    flip_attack_bench(p.parse_args())


if __name__ == "__main__":
    main()
