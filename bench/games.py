"""Games per second and steps per second of every engine, the peers beside them, in one process.

Each engine is a runner that plays whole games for a time budget and returns (games,
steps, seconds). The runners take turns in short slices, so a busy machine slows them
alike. A step is a turn (a play or a draw) in our engines, and one ``game.step`` /
``apply_action`` call in the peers. The peers (RLCard, OpenSpiel) are optional: a runner
that cannot be built says why, and is skipped.

    python -m bench.games [--seconds 3] [--slices 3]
    python -m bench.games --peers 5 [--seconds 4]    # the peers only, medians of 5 rounds
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import Any

Runner = Callable[[float], tuple[int, int, float]]


def _timed(play: Callable[[], int]) -> Runner:
    """A runner from ``play()``, which plays one game and returns its steps."""

    def run(budget: float) -> tuple[int, int, float]:
        games = steps = 0
        start = time.perf_counter()
        while True:
            steps += play()
            games += 1
            if time.perf_counter() - start >= budget:
                return games, steps, time.perf_counter() - start

    return run


def flip_attack(through_firmware: bool, players: int = 4, seed: int = 1) -> Callable[[], int]:
    """One 4-player UNO Flip Attack game to 500 a call (heuristic and random bots), as
    ``launcher simulate`` plays it; steps are turns."""
    from launcher.core import config
    from launcher.games.cards import load_deck
    from launcher.games.flip_attack.bots import make_bot
    from launcher.games.flip_attack.rules import GameOptions, Table
    from launcher.games.launchers import DirectLauncher, FirmwareLauncher

    settings = config.load()
    launcher: Any = (FirmwareLauncher(settings, seed=seed) if through_firmware
                     else DirectLauncher(settings.luck, random.Random(seed)))
    names = ["heuristic", "random"] * players
    bots = [make_bot(names[i], random.Random(seed + i), settings.luck) for i in range(players)]
    table = Table(launcher, bots, random.Random(seed), GameOptions(), load_deck(), check=False)
    count = [0, 0]  # games, presses of the last game

    def play() -> int:
        result = table.play_game(first_dealer=count[0] % players)
        count[0] += 1
        count[1] = sum(h.state.presses for h in result.hands)
        return sum(h.state.turns for h in result.hands)

    play.presses = count  # type: ignore[attr-defined]
    return play


def table_game(module: str, name: str, seed: int = 1) -> Callable[[], int]:
    """One 4-player game to 500 of classic UNO, UNO Splash or UNO Flip a call."""
    import importlib

    from launcher.games.launchers import DirectDealer
    from launcher.games.uno.bots import make_uno_bot
    from launcher.games.uno.rules import UnoTable

    game = getattr(importlib.import_module(module), name)
    rules = game.rules(game.options())
    sides = game.sides if len(game.sides) == 2 else game.sides * 2
    seats = [make_uno_bot(b, random.Random(seed + i))
             for i, b in enumerate(["heuristic", "random"] * 2)]
    table = UnoTable(rules, DirectDealer(game.profile, sides), seats, random.Random(seed),
                     check=False)

    def play() -> int:
        return sum(h.turns for h in table.play_game().hands)

    return play


def gin_game(seed: int = 1) -> Callable[[], int]:
    """One gin game to 100 between two heuristic bots a call; steps are turns (discards)."""
    from launcher.games.gin.bots import make_bot
    from launcher.games.gin.rules import GinRules
    from launcher.games.gin.table import GinTable

    table = GinTable(GinRules(), [make_bot("heuristic", random.Random(seed + i))
                                  for i in range(2)], random.Random(seed))
    n = [0]

    def play() -> int:
        record = table.play_game(first_dealer=n[0] % 2)
        n[0] += 1
        return sum(r.turns for r in record.hands)

    return play


def our_engines(seed: int = 1) -> dict[str, Runner]:
    return {
        FLIP_ATTACK: _timed(flip_attack(False, seed=seed)),
        "UNO Flip Attack, through the firmware": _timed(flip_attack(True, seed=seed)),
        CLASSIC: _timed(table_game("launcher.games.uno.rules", "CLASSIC_UNO", seed)),
        "UNO Splash": _timed(table_game("launcher.games.uno.splash", "UNO_SPLASH", seed)),
        "UNO Flip": _timed(table_game("launcher.games.uno.flip", "UNO_FLIP_GAME", seed)),
        "Gin Rummy": _timed(gin_game(seed)),
    }


# What each peer leaves out or does differently, shown beside its figure (docs/games.md has
# the longer account, read from the peers' code).
PEER_NOTES = {
    "ours (random-play bots)": "our full rules: challenges, UNO calls and catches, reneging "
                               "allowed (the bot does not), first-card rules, scoring",
    "RLCard 1.2 UnoGame": "no Wild Draw Four challenge (legal only when nothing else plays); "
                          "a drawn playable card is played automatically and drawing is "
                          "legal only with nothing to play; no UNO call or penalty; no "
                          "scoring; a first Wild Draw Four is not returned; player 0 starts",
    "ours (random bots)": "our full hand: upcard phase, exact knock checks each turn, "
                          "layoffs, undercuts, a player view per decision, a card check",
    "OpenSpiel gin_rummy (C++)": "one hand, no game to 100 or its bonuses; knocking and laying "
                                 "each meld are separate actions; upcard draws limited to 50; "
                                 "C++ driven from Python, chance nodes sampled in Python",
    "RLCard GinRummyGame": "one hand; the non-dealer starts with 11 cards (no upcard phase); "
                           "gin forced when available; payoff not a score (no undercut or gin "
                           "bonus, layoffs do not count); stops at 200 moves",
}


def peer_pairs(seed: int = 1) -> list[tuple[str, str, dict[str, Runner | str]]]:
    """The comparisons of the games issues: (title, unit, {engine: runner or why skipped})."""
    from bench import bench_gin, bench_uno

    uno: dict[str, Runner | str] = {"ours (random-play bots)": bench_uno.ours("random-play",
                                                                              seed)}
    rl = bench_uno.rlcard_runner(seed)
    uno["RLCard 1.2 UnoGame"] = rl if rl is not None else "rlcard is not installed"
    gin: dict[str, Runner | str] = {}
    for label, made in (("ours (random bots)", bench_gin.ours(seed)),
                        ("OpenSpiel gin_rummy (C++)", bench_gin.openspiel(seed)),
                        ("RLCard GinRummyGame", bench_gin.rlcard(seed))):
        gin[label] = made if isinstance(made, str) else _timed(made)
    return [("2-player classic UNO, one round a game, random legal players", "games", uno),
            ("Gin Rummy, one hand a game, uniformly random legal players", "hands", gin)]


def alternate(runners: dict[str, Runner], seconds: float, slices: int) -> dict[str, dict]:
    """Each runner ``seconds`` in all, in ``slices`` turns: games/s and steps/s."""
    totals = {k: [0, 0, 0.0] for k in runners}
    for _ in range(slices):
        for name, run in runners.items():
            g, s, e = run(seconds / slices)
            totals[name][0] += g
            totals[name][1] += s
            totals[name][2] += e
    return {k: {"games": g, "steps": s, "seconds": e, "games_per_s": g / e,
                "steps_per_s": s / e} for k, (g, s, e) in totals.items()}


FLIP_ATTACK = "UNO Flip Attack, direct luck model"
CLASSIC = "classic UNO"


def flip_attack_vs_uno(results: dict[str, dict]) -> float:
    """How many classic UNO turns (4 players) take the time of one Flip Attack turn, from
    one ``alternate`` run: both engines played the same slices of the same process."""
    return results[CLASSIC]["steps_per_s"] / results[FLIP_ATTACK]["steps_per_s"]


def scale(players: list[int], direct_games: int, firmware_games: int,
          seed: int = 1) -> dict[int, dict[str, float]]:
    """Cost of a game, a turn and a press against the number of players (Flip Attack)."""
    out = {}
    for p in players:
        row: dict[str, float] = {}
        for kind, n in (("direct", direct_games), ("firmware", firmware_games)):
            play = flip_attack(kind == "firmware", players=p, seed=seed)
            turns = presses = 0
            start = time.perf_counter()
            for _ in range(n):
                turns += play()
                presses += play.presses[1]  # type: ignore[attr-defined]
            elapsed = time.perf_counter() - start
            row[f"{kind}_ms_per_game"] = 1e3 * elapsed / n
            row[f"{kind}_us_per_turn"] = 1e6 * elapsed / turns
            row[f"{kind}_us_per_press"] = 1e6 * elapsed / presses
            row[f"{kind}_turns_per_game"] = turns / n
        out[p] = row
    return out


def jobs_speedup(games: int, jobs: list[int], seed: int = 1) -> dict[int, dict[str, float]]:
    """``launcher simulate`` (Flip Attack, direct) on 1, 2 ... processes: wall time, and how
    busy the whole machine was meanwhile (what other jobs left to the workers shows there)."""
    import logging

    from launcher.cli.simulate import simulate
    from launcher.core import config
    from launcher.games.flip_attack.rules import GameOptions

    logging.getLogger("launcher").setLevel(logging.WARNING)
    settings = config.load()
    bots = ["heuristic", "random"] * 2
    out = {}
    first = None
    for j in jobs:
        busy0 = machine_jiffies()
        start = time.perf_counter()
        summary = simulate(games, 4, seed, bots, settings, GameOptions(), jobs=j)
        elapsed = time.perf_counter() - start
        busy1 = machine_jiffies()
        first = first or summary
        out[j] = {"seconds": elapsed, "games_per_s": games / elapsed,
                  "same_summary": summary == first,
                  "machine_busy_percent": 100 * (busy1[0] - busy0[0]) / max(1, busy1[1]
                                                                           - busy0[1])}
    base = out[jobs[0]]["seconds"]
    for j in jobs:
        out[j]["speedup"] = base / out[j]["seconds"]
    return out


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) CPU time of the whole machine, every core, from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return 0, 0
    idle = values[3] + values[4]  # idle + iowait
    return sum(values) - idle, sum(values)


def default_jobs() -> list[int]:
    from launcher.cli.simulate import default_jobs as cores

    return sorted({1, 2, cores()})


def peer_medians(rounds: int, seconds: float, slices: int = 2, seed: int = 1) -> None:
    """Each comparison ``rounds`` times (each round: every engine ``seconds`` in ``slices``
    alternating slices); prints the median games (hands) per second of each engine, the
    range, and ours against it, with what each peer simplifies."""
    import statistics

    pairs = peer_pairs(seed)
    for title, unit, runners in pairs:
        print(f"{title}: median of {rounds} rounds (min-max), {unit}/s")
        ready = {k: v for k, v in runners.items() if not isinstance(v, str)}
        for k, v in runners.items():
            if isinstance(v, str):
                print(f"  {k:<30} skipped: {v}")
        runs = [alternate(ready, seconds, slices) for _ in range(rounds)]
        mine = next(iter(ready), None)
        for name in ready:
            rates = [r[name]["games_per_s"] for r in runs]
            ratio = statistics.median(r[mine]["games_per_s"] / r[name]["games_per_s"]
                                      for r in runs)
            vs = "" if name == mine else f", ours {ratio:.2f}x this"
            print(f"  {name:<30} {statistics.median(rates):>9,.0f} ({min(rates):,.0f}-"
                  f"{max(rates):,.0f}){vs}\n      plays: {PEER_NOTES.get(name, '')}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0, help="per engine")
    p.add_argument("--slices", type=int, default=3)
    p.add_argument("--peers", type=int, metavar="ROUNDS", default=0,
                   help="only the peer comparisons, medians over ROUNDS rounds (5 or more)")
    a = p.parse_args(argv)
    if a.peers:
        peer_medians(a.peers, a.seconds, a.slices)
        return 0
    ours = alternate(our_engines(), a.seconds, a.slices)
    for name, r in ours.items():
        print(f"{name:<40} {r['games_per_s']:>9.1f} games/s {r['steps_per_s']:>10,.0f} steps/s")
    print(f"per turn, UNO Flip Attack takes {flip_attack_vs_uno(ours):.2f}x a 4-player classic "
          "UNO turn (same run)")
    for title, unit, runners in peer_pairs():
        print(title)
        ready = {k: v for k, v in runners.items() if not isinstance(v, str)}
        for k, v in runners.items():
            if isinstance(v, str):
                print(f"  {k:<38} skipped: {v}")
        for name, r in alternate(ready, a.seconds, a.slices).items():
            print(f"  {name:<38} {r['games_per_s']:>9.1f} {unit}/s "
                  f"{r['steps_per_s']:>10,.0f} steps/s  ({PEER_NOTES.get(name, '')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

