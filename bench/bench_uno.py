"""Games per second of 2-player classic UNO with random bots, next to RLCard's UNO engine.

    python bench/bench_uno.py [--seconds S] [--rounds R] [--seed N]
    python bench/bench_uno.py --flip-attack [--compare-root DIR]

Both engines play whole single-round games (RLCard's game is one round) with random legal
actions, in alternating time slices of the same run, so that a busy machine slows both
alike. RLCard is stepped through ``game.step`` with a random legal action, as its own
random agent does; it is optional (``pip install 'uno-launcher[bench]'``) and skipped
cleanly when missing. Ours is measured with two random bots:

- ``random-play``: a random playable card, drawing only when nothing plays, which is the
  random player RLCard's rules make (there, drawing is legal only with nothing to play);
- ``random``: uniform over every legal action, drawing (reneging) included. Classic UNO
  allows a draw at any time, so this bot draws often and its games last far longer.

``--flip-attack`` times UNO Flip Attack turns per second with 4 random bots (direct luck
model, games to 500), with and without the conservation check; ``--compare-root DIR`` runs
the same measurement on another checkout (e.g. the commit before the speed-up, unpacked
with ``git archive``) in alternating subprocesses.
"""

from __future__ import annotations

import argparse
import inspect
import os
import platform
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ours(bot: str, seed: int):
    """A runner: play games for ``budget`` seconds; (games, decisions, seconds)."""
    sys.path.insert(0, str(ROOT))
    from launcher.games.launchers import DirectDealer
    from launcher.games.uno.bots import make_uno_bot
    from launcher.games.uno.rules import CLASSIC_UNO, UnoTable

    rules = CLASSIC_UNO.rules(CLASSIC_UNO.options(single_round=True))
    table = UnoTable(rules, DirectDealer(), [make_uno_bot(bot, random.Random(seed + i))
                                             for i in range(2)], random.Random(seed))
    state = {"g": 0}

    def run(budget: float) -> tuple[int, int, float]:
        games = steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < budget:
            result = table.play_game(first_dealer=state["g"] % 2)
            state["g"] += 1
            games += 1
            steps += result.hands[0].turns
        return games, steps, time.perf_counter() - start

    return run


def rlcard_runner(seed: int):
    try:
        from rlcard.games.uno.game import UnoGame
    except ImportError:
        return None
    game = UnoGame(num_players=2)
    game.np_random.seed(seed)
    rng = random.Random(seed)

    def run(budget: float) -> tuple[int, int, float]:
        games = steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < budget:
            state, _ = game.init_game()
            while not game.round.is_over:
                state, _ = game.step(rng.choice(state["legal_actions"]))
                steps += 1
            games += 1
        return games, steps, time.perf_counter() - start

    return run


def uno_bench(args: argparse.Namespace) -> None:
    runners = {"ours, random-play": ours("random-play", args.seed),
               "ours, random": ours("random", args.seed)}
    rl = rlcard_runner(args.seed)
    if rl is None:
        print("rlcard is not installed: comparison skipped (pip install 'uno-launcher[bench]')")
    else:
        runners["rlcard 1.2 UnoGame"] = rl
    totals = {k: [0, 0, 0.0] for k in runners}
    for _ in range(args.rounds):
        for name, run in runners.items():
            g, s, e = run(args.seconds / args.rounds)
            totals[name][0] += g
            totals[name][1] += s
            totals[name][2] += e
    print(f"python {platform.python_version()} on {platform.machine()}, 2-player classic UNO, "
          f"one round a game, {args.rounds} alternating slices of "
          f"{args.seconds / args.rounds:.2f} s each")
    print(f"{'engine':<22} {'games':>7} {'games/s':>9} {'steps/game':>11} {'steps/s':>9}")
    for name, (g, s, e) in totals.items():
        print(f"{name:<22} {g:>7} {g / e:>9,.0f} {s / max(g, 1):>11.1f} {s / e:>9,.0f}")
    if rl is not None:
        base = totals["rlcard 1.2 UnoGame"]
        mine = totals["ours, random-play"]
        ratio = (mine[0] / mine[2]) / (base[0] / base[2])
        print(f"games/s, ours (random-play) / rlcard: {ratio:.2f}x (target: 2x)")
    print("steps: ours counts turns (plays and draws); RLCard counts every game.step call")


def flip_attack_once(games: int, check: bool) -> tuple[int, float]:
    """Turns and seconds of ``games`` 4-player Flip Attack games with random bots."""
    from launcher.core import config
    from launcher.games.cards import load_deck
    from launcher.games.launchers import DirectLauncher

    try:
        from launcher.games.flip_attack.bots import make_bot
        from launcher.games.flip_attack.rules import GameOptions, Table
    except ImportError:  # a checkout from before games/ had a package per game
        from launcher.games.bots import make_bot  # type: ignore[no-redef]

        from launcher.games.flip_attack import GameOptions, Table  # type: ignore[no-redef]

    settings = config.load()
    kw = {"check": check} if "check" in inspect.signature(Table).parameters else {}
    table = Table(DirectLauncher(settings.luck, random.Random(1)),
                  [make_bot("random", random.Random(1 + i), settings.luck) for i in range(4)],
                  random.Random(1), GameOptions(), load_deck(), **kw)
    turns = 0
    start = time.perf_counter()
    for g in range(games):
        for hand in table.play_game(first_dealer=g % 4).hands:
            turns += hand.state.turns
    return turns, time.perf_counter() - start


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
                print(f"  {label:<14} {mode} {int(turns):>8} turns {float(seconds):7.2f} s "
                      f"{int(turns) / float(seconds):>9,.0f} turns/s")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--flip-attack-child":
        sys.path.insert(0, os.environ["PYTHONPATH"])
        from launcher.games.flip_attack import Table

        has = "check" in inspect.signature(Table).parameters
        turns, seconds = flip_attack_once(int(sys.argv[2]), sys.argv[3] == "check")
        print(turns, seconds, "yes" if has else "no")
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=12.0, help="time per engine (default 12)")
    p.add_argument("--rounds", type=int, default=6, help="alternating slices (default 6)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--flip-attack", action="store_true",
                   help="time Flip Attack turns/s instead (with and without the check)")
    p.add_argument("--games", type=int, default=100, help="Flip Attack games per run")
    p.add_argument("--compare-root", metavar="DIR",
                   help="another checkout to time the same way (Flip Attack only)")
    args = p.parse_args()
    if args.flip_attack:
        flip_attack_bench(args)
    else:
        uno_bench(args)


if __name__ == "__main__":
    main()
