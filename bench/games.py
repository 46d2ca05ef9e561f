"""Games per second and steps per second of every engine, the peers beside them, in one process.

Each engine is a runner that plays whole games for a budget of CPU time
(``time.process_time``: the shared machine's load does not count against it) and returns
(games, steps, CPU seconds). The runners take turns in short slices, so whatever the
machine does slows them alike. A step is a turn (a play or a draw) in our UNO engines, a
decision in Gin, and one ``game.step`` / ``apply_action`` call in the peers. The peers
(RLCard, OpenSpiel: the ``bench`` extra) are optional: a runner that cannot be built says
why, and is skipped.

    python -m bench.games [--seconds 3] [--slices 3]
    python -m bench.games --peers 5 [--seconds 4] [--slices 4] [--out docs/results/peers.json]

``--peers ROUNDS`` runs only the peer comparisons (2-player classic UNO against RLCard; Gin
Rummy against OpenSpiel and RLCard), ROUNDS times, and prints min / median / max of each
rate and of ours against it, each peer's simplifications beside its figure, a Flip Attack
turn against a 4-player classic UNO turn at their tables and through the contract (ROUNDS
more rounds each), and the Gin solver alone;
``--out FILE`` keeps the figures, from which ``docs/blocks.py --print peers`` renders that
table into docs/games.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from math import floor
from pathlib import Path
from typing import Any

from bench.keep import keep

Runner = Callable[[float], tuple[int, int, float]]


def _timed(play: Callable[[], int]) -> Runner:
    """A runner from ``play()``, which plays one game and returns its steps."""

    clock = time.process_time

    def run(budget: float) -> tuple[int, int, float]:
        games = steps = 0
        start = clock()
        while True:
            steps += play()
            games += 1
            spent = clock() - start
            if spent >= budget:
                return games, steps, spent

    return run


def _table(game: str, bots: list[str], seed: int, **rules: Any) -> Any:
    """A table of ``game`` (``GameSpec.table``: the direct launcher), with no card check and
    no observer, for many games in a row, every random choice from ``seed``: the tables'
    own loops, which the peer comparisons time beside the contract."""
    from launcher.core import config
    from launcher.games.base import Run
    from launcher.games.registry import GAMES

    spec = GAMES[game]
    run = Run(spec.options(rules), tuple(bots), seed, config.load())
    return spec.table(run, random.Random(seed))


def simulated(game: str, bots: list[str], seed: int, through_firmware: bool = False
              ) -> Callable[[], int]:
    """One whole game of ``game`` a call as ``launcher simulate`` plays it: ``GameSpec.play``,
    through the game-state contract (``games.runs.play_games``: a fresh launcher, the
    direct one or the firmware on the simulated launcher, as the chance player, each game
    from its own seed); steps are turns. ``play.presses[1]``: the last game's presses (Flip
    Attack's)."""
    from launcher.core import config
    from launcher.games.base import Run
    from launcher.games.registry import GAMES

    spec = GAMES[game]
    firmware = None
    if through_firmware:
        from launcher.sim.games import FirmwareLauncher as firmware
    run = Run(spec.options({}), tuple(bots), seed, config.load(), firmware=firmware)
    count = [0, 0]  # games, presses of the last game

    def play() -> int:
        summary = spec.play(run, count[0], count[0] + 1)
        count[0] += 1
        count[1] = sum(getattr(summary, "presses", ()))
        return sum(summary.turns)

    play.presses = count  # type: ignore[attr-defined]
    return play


def flip_attack(through_firmware: bool, players: int = 4, seed: int = 1) -> Callable[[], int]:
    """One 4-player UNO Flip Attack game to 500 a call (heuristic and random bots), as
    ``launcher simulate`` plays it; steps are turns."""
    return simulated("flip-attack", (["heuristic", "random"] * players)[:players], seed,
                     through_firmware)


def table_game(game: str, seed: int = 1) -> Callable[[], int]:
    """One 4-player game to 500 of a table game (``uno``, ``uno-splash``, ``uno-flip``) a
    call, heuristic and random bots, as ``launcher simulate`` plays it; steps are turns."""
    return simulated(game, ["heuristic", "random"] * 2, seed)


def gin_game(seed: int = 1) -> Callable[[], int]:
    """One gin game to 100 between two heuristic bots a call, as ``launcher simulate`` plays
    it; steps are turns (discards)."""
    return simulated("gin", ["heuristic", "heuristic"], seed)


def at_table(game: str, seed: int = 1) -> Callable[[], int]:
    """One 4-player game to 500 a call at the game's table (``GameSpec.table``: its own loop,
    this package's bots trusted, no observer, one table for every game), heuristic and
    random bots; steps are turns. What the issues' per-turn goal compares (the tables keep
    their figures), beside the contract's ``simulated``."""
    table = _table(game, ["heuristic", "random"] * 2, seed)
    n = [0]

    def play() -> int:
        if game == "flip-attack":
            result = table.play_game(first_dealer=n[0] % 4)
            n[0] += 1
            return sum(h.state.turns for h in result.hands)
        return sum(h.turns for h in table.play_game().hands)

    return play


def our_engines(seed: int = 1) -> dict[str, Runner]:
    return {
        FLIP_ATTACK: _timed(flip_attack(False, seed=seed)),
        "UNO Flip Attack, through the firmware": _timed(flip_attack(True, seed=seed)),
        CLASSIC: _timed(table_game("uno", seed)),
        "UNO Splash": _timed(table_game("uno-splash", seed)),
        "UNO Flip": _timed(table_game("uno-flip", seed)),
        "Gin Rummy": _timed(gin_game(seed)),
    }


# --- the peers -------------------------------------------------------------------------


def uno_round(bot: str = "random-play", seed: int = 1) -> Callable[[], int]:
    """One 2-player classic UNO round (``single_round``, RLCard's game is one round) a call
    between two ``bot``s; steps are turns. ``random-play`` is the random player RLCard's
    rules make: a random playable card, drawing only when nothing plays."""
    table = _table("uno", [bot, bot], seed, single_round=True)
    n = [0]

    def play() -> int:
        result = table.play_game(first_dealer=n[0] % 2)
        n[0] += 1
        return result.hands[0].turns

    return play


def rlcard_uno(seed: int = 1) -> Callable[[], int] | str:
    """RLCard's ``UnoGame`` (2 players), stepped with a random legal action as its random
    agent does; steps are ``game.step`` calls."""
    try:
        from rlcard.games.uno.game import UnoGame
    except ImportError as exc:
        return f"rlcard not importable ({exc})"
    game = UnoGame(num_players=2)
    game.np_random.seed(seed)
    rng = random.Random(seed)

    def play() -> int:
        state, _ = game.init_game()
        steps = 0
        while not game.round.is_over:
            legal = state["legal_actions"]
            state, _ = game.step(legal[floor(rng.random() * len(legal))])
            steps += 1
        return steps

    return play


def gin_hand(seed: int = 1, bots: str = "random") -> Callable[[], int]:
    """One Gin Rummy hand a call between two ``bots`` bots, as ``launcher simulate --game
    gin`` plays it (the direct stock dealer, the card check at the end of the hand); steps
    are decisions."""
    table = _table("gin", [bots, bots], seed)
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


def openspiel_gin(seed: int = 1) -> Callable[[], int] | str:
    """OpenSpiel's ``gin_rummy`` (C++ through pyspiel), chance nodes sampled and actions
    picked in Python, as any Python caller plays it; steps are decisions."""
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
                state.apply_action(outcomes[floor(rng.random() * len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[floor(rng.random() * len(legal))])
                steps += 1
        return steps

    return play


def rlcard_gin(seed: int = 1) -> Callable[[], int] | str:
    """RLCard's ``GinRummyGame`` (pure Python) through its judge's legal actions."""
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
            game.step(legal[floor(rng.random() * len(legal))])
            steps += 1
        return steps

    return play


def _on_contract(game: str, bot: str, seed: int, hands: bool = False, **rules: Any
                 ) -> Runner:
    """Whole games of ``game`` through the game-state contract alone (``GAMES[game].new_game``
    and ``apply_action``), two ``bot``s seated by ``GameSpec.player``, the launcher's shots
    drawn from ``chance_outcomes``; a step is an ``apply_action`` call (a chance outcome
    too, as in the peers). ``hands``: count hands (Gin: ``results``), not games."""
    from launcher.core import config
    from launcher.games.base import sample_chance
    from launcher.games.registry import GAMES

    spec = GAMES[game]
    options = spec.options(rules)
    rng = random.Random(seed)
    seats = [spec.player(bot, rng, config.load()) for _ in range(2)]
    clock = time.process_time

    def run(budget: float) -> tuple[int, int, float]:
        games = steps = 0
        start = clock()
        while True:
            state = spec.new_game(players=2, seed=rng.getrandbits(64), options=options)
            apply, terminal, chance = state.apply_action, state.is_terminal, state.is_chance_node
            who = state.current_player
            while not terminal():
                apply(sample_chance(state, rng) if chance() else seats[who()].act(state))
                steps += 1
            games += len(state.results) if hands else 1  # type: ignore[attr-defined]
            spent = clock() - start
            if spent >= budget:
                return games, steps, spent

    return run


OURS_UNO = "ours (random-play bots)"
OURS_UNO_CONTRACT = "ours through GameState (random-play bots)"
OURS_GIN_CONTRACT = "ours through GameState (random bots)"
RLCARD_UNO = "RLCard UnoGame"
OURS_GIN = "ours (random bots)"
OPENSPIEL_GIN = "OpenSpiel gin_rummy (C++)"
RLCARD_GIN = "RLCard GinRummyGame"

# What each engine plays, and what each peer leaves out or does differently, shown beside
# its figure (read from the peers' code: rlcard/games/uno/round.py, rlcard/games/gin_rummy/,
# open_spiel/games/gin_rummy/gin_rummy.cc).
PEER_NOTES = {
    OURS_UNO: "our full rules: challenges, UNO calls and catches, reneging allowed (the bot "
              "does not), first-card rules, scoring",
    RLCARD_UNO: "no Wild Draw Four challenge (legal only when nothing else plays); a drawn "
                "playable card is played automatically and drawing is legal only with "
                "nothing to play; no UNO call or penalty; no scoring (+1/-1); a first Wild "
                "Draw Four is not returned; the reshuffle takes the top card too; player 0 "
                "starts",
    OURS_UNO_CONTRACT: "the same game and bots, stepped through the contract alone "
                       "(`legal_actions` checked at every `apply_action`; the launcher's "
                       "draws are chance nodes)",
    OURS_GIN_CONTRACT: "the same hands and bots, stepped through the contract alone (whole "
                       "games to 100, hands counted; each stock draw a chance node)",
    OURS_GIN: "our full hand: upcard phase, exact knock checks each turn, layoffs, "
              "undercuts, a player view per decision, the card check at the end",
    OPENSPIEL_GIN: "one hand, no game to 100 or its bonuses; knocking and laying each meld "
                   "are separate actions; upcard draws limited to 50; C++ driven from "
                   "Python, chance nodes sampled in Python",
    RLCARD_GIN: "one hand; the non-dealer starts with 11 cards (no upcard phase); gin forced "
                "when available; payoff not a score (no undercut or gin bonus, layoffs do "
                "not count); stops at 200 moves",
}

# Games issue 42: a Flip Attack turn at most this many times a 4-player classic UNO turn.
FLIP_ATTACK_PER_TURN = 1.5
# The goals of games issue 22: ours at least this many times the peer's games per second.
PEER_TARGETS = {RLCARD_UNO: 3.0, OPENSPIEL_GIN: 5.0}
# And of games issue 42: ours through the contract against the peer, in the same rounds.
CONTRACT_TARGETS = {OURS_UNO_CONTRACT: (RLCARD_UNO, 2.0), OURS_GIN_CONTRACT: (OPENSPIEL_GIN, 4.0)}


def peer_pairs(seed: int = 1) -> list[tuple[str, str, dict[str, Runner | str]]]:
    """The comparisons of the games issues: (title, unit, {engine: runner or why skipped}),
    ours first."""
    out: list[tuple[str, str, dict[str, Runner | str]]] = []
    for title, unit, made in (
            ("2-player classic UNO, one round a game, random legal players", "games",
             {OURS_UNO: uno_round("random-play", seed), RLCARD_UNO: rlcard_uno(seed),
              OURS_UNO_CONTRACT: _on_contract("uno", "random-play", seed,
                                              single_round=True)}),
            ("Gin Rummy, one hand a game, uniformly random legal players", "hands",
             {OURS_GIN: gin_hand(seed), OPENSPIEL_GIN: openspiel_gin(seed),
              RLCARD_GIN: rlcard_gin(seed),
              OURS_GIN_CONTRACT: _on_contract("gin", "random", seed, hands=True)})):
        # (the contract's runners are runners already)
        out.append((title, unit, {k: v if isinstance(v, str) or k in CONTRACT_TARGETS else
                                  _timed(v) for k, v in made.items()}))
    return out


def alternate(runners: dict[str, Runner], seconds: float, slices: int) -> dict[str, dict]:
    """Each runner ``seconds`` of CPU time in all, in ``slices`` turns: games and steps per
    CPU second."""
    totals = {k: [0, 0, 0.0] for k in runners}
    names = list(runners)
    for i in range(slices):
        for name in names[i % len(names):] + names[:i % len(names)]:  # each leads in turn
            g, s, e = runners[name](seconds / slices)
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
    from launcher.games.base import Run
    from launcher.games.registry import GAMES

    logging.getLogger("launcher").setLevel(logging.WARNING)
    run = Run(GAMES["flip-attack"].options({}), ("heuristic", "random") * 2, seed,
              config.load())
    out = {}
    first = None
    for j in jobs:
        busy0 = machine_jiffies()
        start = time.perf_counter()
        summary = simulate("flip-attack", run, games, jobs=j)
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


def solver_rates(seed: int = 1, hands: int = 20000) -> list[tuple[str, float]]:
    """Gin's deadwood solver alone: random hands a CPU second, each solver with a fresh memo."""
    from launcher.games.gin.melds import Solver

    rng = random.Random(seed)
    out = []
    for label, n, method in (("deadwood, 10 cards", 10, "deadwood"),
                             ("deadwood, 13 cards", 13, "deadwood"),
                             ("best discard, 11 cards", 11, "best_discard")):
        masks = [sum(1 << c for c in rng.sample(range(52), n)) for _ in range(hands)]
        call = getattr(Solver(), method)
        start = time.process_time()
        for m in masks:
            call(m)
        out.append((label, len(masks) / (time.process_time() - start)))
    return out


def _spread(values: list[float], fmt: str) -> str:
    return (f"{fmt.format(min(values))} / {fmt.format(statistics.median(values))} / "
            f"{fmt.format(max(values))}")


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def peer_results(rounds: int, seconds: float, slices: int, seed: int = 1,
                 command: str = "") -> dict[str, Any]:
    """Each comparison ``rounds`` times (a round: every engine ``seconds`` of CPU time in
    ``slices`` alternating slices): each engine's games and steps per CPU second, round by
    round, and the machine it ran on. ``peer_markdown`` renders it."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    out: dict[str, Any] = {
        "command": command, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(), "machine": platform.machine(),
        "cores": os.cpu_count(), "load_1min": round(load, 1),
        "versions": {"RLCard": _version("rlcard"), "open-spiel": _version("open_spiel")},
        "rounds": rounds, "seconds": seconds, "slices": slices, "comparisons": []}
    for title, unit, runners in peer_pairs(seed):
        ready: dict[str, Runner] = {k: v for k, v in runners.items() if not isinstance(v, str)}
        for run in ready.values():
            run(0.0)  # one game each before the clock counts (first calls, caches)
        runs = [alternate(ready, seconds, slices) for _ in range(rounds)]
        engines = [{"name": name, "games_per_s": [r[name]["games_per_s"] for r in runs],
                    "steps_per_s": [r[name]["steps_per_s"] for r in runs]} for name in ready]
        engines += [{"name": name, "skipped": why} for name, why in runners.items()
                    if isinstance(why, str)]
        out["comparisons"].append({"title": title, "unit": unit, "engines": engines})
    for key, flip, uno in (
            ("flip_attack_per_turn", at_table("flip-attack", seed), at_table("uno", seed)),
            ("flip_attack_per_turn_contract", flip_attack(False, seed=seed),
             table_game("uno", seed))):
        pair = {FLIP_ATTACK: _timed(flip), CLASSIC: _timed(uno)}
        for run in pair.values():
            run(0.0)
        out[key] = [flip_attack_vs_uno(alternate(pair, seconds, slices)) for _ in range(rounds)]
    out["solver"] = [[label, rate] for label, rate in solver_rates(seed)]
    return out


def peer_markdown(r: dict[str, Any]) -> str:
    """What ``peer_results`` measured, as markdown: min / median / max of each engine's
    rate, of its steps, and of ours against it (the ratio of each round), what each plays,
    and whether the issue's goal is met by the median."""
    lines = [f"`{r['command']}` on {r['date']}: Python {r['python']} on {r['machine']}, "
             f"{r['cores']} cores, load average {r['load_1min']:.1f} at the start; "
             + ", ".join(f"{k} {v}" for k, v in r["versions"].items()) + ". "
             f"{r['rounds']} rounds; in each, every engine plays whole games for "
             f"{r['seconds']:g} s of CPU time (`time.process_time`) in {r['slices']} "
             "alternating slices, all in one process. Figures are min / median / max over "
             "the rounds; \"ours ÷ this\" is taken in each round, then summarised. A step is "
             "a turn (UNO) or a decision (Gin) in ours, one `step` / `apply_action` call in "
             "the peers.", ""]
    for c in r["comparisons"]:
        unit = c["unit"]
        lines += [f"{c['title']}, {unit} per CPU second:", "",
                  f"| engine | {unit}/s | steps/s | ours ÷ this | goal | what it plays |",
                  "|---|---|---|---|---|---|"]
        ran = [e for e in c["engines"] if "skipped" not in e]
        mine = ran[0]["games_per_s"]
        for e in ran:
            name, rate = e["name"], e["games_per_s"]
            ratio = [a / b for a, b in zip(mine, rate, strict=True)]
            goal = PEER_TARGETS.get(name)
            verdict = ("" if goal is None else
                       f"≥ {goal:g}x: {'met' if statistics.median(ratio) >= goal else 'NOT met'}")
            lines.append(f"| {name} | {_spread(rate, '{:,.0f}')} | "
                         f"{_spread(e['steps_per_s'], '{:,.0f}')} | "
                         f"{'' if e is ran[0] else _spread(ratio, '{:.2f}')} | {verdict} | "
                         f"{PEER_NOTES[name]} |")
        for e in c["engines"]:
            if "skipped" in e:
                lines.append(f"| {e['name']} | skipped: {e['skipped']} | | | | "
                             f"{PEER_NOTES[e['name']]} |")
        lines.append("")
        rates = {e["name"]: e["games_per_s"] for e in ran}
        steps = {e["name"]: [s / g for s, g in zip(e["steps_per_s"], e["games_per_s"],
                                                    strict=True)] for e in ran}
        for name, (peer, goal) in CONTRACT_TARGETS.items():
            if name in rates and peer in rates:
                ratio = [a / b for a, b in zip(rates[name], rates[peer], strict=True)]
                met = "met" if statistics.median(ratio) >= goal else "NOT met"
                lines += [f"{name} ÷ {peer}, in each round: {_spread(ratio, '{:.2f}')} "
                          f"(goal ≥ {goal:g}x: {met}); steps a {unit[:-1]} (median): "
                          f"{statistics.median(steps[name]):.0f} through GameState, "
                          f"{statistics.median(steps[peer]):.0f} in the peer", ""]
    if "flip_attack_per_turn" in r:
        ratio = r["flip_attack_per_turn"]
        met = "met" if statistics.median(ratio) <= FLIP_ATTACK_PER_TURN else "NOT met"
        lines += [f"Per turn, {FLIP_ATTACK} (4 players) takes {_spread(ratio, '{:.2f}')}x a "
                  f"4-player {CLASSIC} turn, both at their tables (heuristic and random "
                  f"bots), in {r['rounds']} more rounds of the same run (goal ≤ "
                  f"{FLIP_ATTACK_PER_TURN:g}x: {met})", ""]
    if "flip_attack_per_turn_contract" in r:
        ratio = r["flip_attack_per_turn_contract"]
        lines += [f"Through the contract, as `launcher simulate` plays them (the launcher "
                  f"as the chance player, Flip Attack's summary listening to every effect), "
                  f"the same turn takes {_spread(ratio, '{:.2f}')}x, in {r['rounds']} more "
                  "rounds", ""]
    lines += ["Gin's deadwood solver alone (random hands, a fresh memo each):", ""]
    lines += [f"- {label}: {rate:,.0f} hands per CPU second" for label, rate in r["solver"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per engine a round")
    p.add_argument("--slices", type=int, default=3)
    p.add_argument("--peers", type=int, metavar="ROUNDS", default=0,
                   help="only the peer comparisons, over ROUNDS rounds (5 or more)")
    p.add_argument("--out", type=Path, metavar="FILE",
                   help="with --peers: keep the figures in FILE (docs/results/peers.json, "
                        "from which docs/blocks.py renders docs/games.md's table)")
    a = p.parse_args(argv)
    if a.out and not a.peers:
        p.error("--out goes with --peers")
    if a.peers:
        command = " ".join(["python -m bench.games", *(argv if argv is not None
                                                        else sys.argv[1:])])
        r = peer_results(a.peers, a.seconds, a.slices, command=command)
        print(peer_markdown(r))
        if a.out:
            keep(a.out, r)
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

