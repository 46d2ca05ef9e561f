"""``launcher simulate``: whole games with bots, and their statistics (``launcher tune``,
in ``tune``, plays through ``simulate`` here).

``simulate --game NAME`` finds the game in ``launcher.games.registry.GAMES``: its options,
bots, summary and the way it plays (``launcher.games.base.GameSpec``), the same for every
game. A new game adds its spec there, nothing here.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import math
import os
import signal
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from launcher.cli.options import verb, whole_number
from launcher.cli.progress import Progress, RichBar, progress_bar
from launcher.core import config
from launcher.core.errors import ConfigError, LauncherError
from launcher.games.base import GameSpec, OptionError, Options, Run, Seats
from launcher.games.registry import GAMES
from launcher.games.roster import Roster


def parse_bots(text: str, players: int, known: Roster[Any] | Sequence[str] = tuple(
        GAMES["flip-attack"].bots)) -> list[str]:
    """``heuristic,random`` -> one bot name per seat, repeating the list to fill the table."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ConfigError("--bots", text, "name at least one bot")
    for n in names:
        if n not in known:
            raise ConfigError("--bots", n, "must be one of " + ", ".join(known))
    return [names[i % len(names)] for i in range(players)]


def parse_rules(spec: GameSpec, pairs: Sequence[str], target: int | None = None,
                variant: str | None = None, seats: Seats | None = None) -> Options:
    """``NAME=VALUE`` house rules (``--rule``, values in TOML syntax) and ``--target`` over the
    game's defaults (or ``variant``'s), each checked by the game's options: a bad one is a
    ``ConfigError`` naming ``--rule NAME`` (or ``--target``), the value and what the rule
    takes. With ``seats``, a rule that does nothing at that table (its bots too) is refused."""
    values: dict[str, Any] = {}
    keys: dict[str, str] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ConfigError("--rule", pair, "must be NAME=VALUE")
        values[name] = config.parse_value(raw.strip())
        keys[name] = f"--rule {name}"
    if target is not None:
        values[spec.target] = target
        keys[spec.target] = "--target"
    try:
        options = spec.options(values, variant)
    except OptionError as exc:
        raise ConfigError(keys.get(exc.key, f"--rule {exc.key}"), exc.value,
                          exc.reason) from None
    for name, value in values.items():
        why = spec.idle(options, name, seats) if seats is not None else None
        if why:
            raise ConfigError(keys[name], value,
                              f"does nothing in {variant or spec.name}: {why}")
    return options


# --- games on every core: one seed per game, chunks of games merged in order -------------


def default_jobs() -> int:
    """Every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def chunks_of(games: int, jobs: int) -> list[tuple[int, int]]:
    # Several chunks a worker, so that a slow chunk does not leave a core idle at the end.
    size = max(1, min(50, math.ceil(games / (jobs * 8))))
    return [(start, min(games, start + size)) for start in range(0, games, size)]


def _quiet_worker() -> None:
    # Ctrl-C is the parent's to answer (launcher.cli.worker), and the workers log what goes
    # wrong only: the firmware logs every event at INFO.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.getLogger("launcher").setLevel(logging.WARNING)


@contextlib.contextmanager
def _safe_path() -> Iterator[None]:
    """Start worker processes with no current folder on their ``sys.path``.

    A worker (and the forkserver every worker is forked from) is a fresh interpreter run
    with ``-c``, which puts the current folder first on its path: a folder named ``launcher``
    or ``hal`` there (an empty one will do, or ``/opt/launcher`` seen from ``/opt``) would be
    imported in place of the installed package. ``PYTHONSAFEPATH`` (Python 3.11+) tells the
    interpreter not to; it is set only while the processes start.
    """
    before = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["PYTHONSAFEPATH"]
        else:
            os.environ["PYTHONSAFEPATH"] = before


def play_games(play: Callable[[int, int], Any], games: int, jobs: int = 1,
               progress: Callable[[int], object] | None = None) -> Any:
    """``play(start, stop)`` plays games ``start`` to ``stop - 1`` and returns their summary;
    chunks of games run on ``jobs`` processes (``concurrent.futures``) and their summaries
    are merged in game order. ``play`` must be picklable (a module-level function or a
    ``functools.partial`` of one). A worker process that dies stops the run with a
    ``LauncherError`` (one line), never a pool that starts another forever."""
    chunks = chunks_of(games, jobs)
    pool: ProcessPoolExecutor | None = None
    if jobs <= 1 or len(chunks) == 1:
        results: Iterator[Any] = (play(*c) for c in chunks)
    else:
        import multiprocessing

        # forkserver: no fork of a process whose threads (a progress bar's) hold locks.
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods
                                              else "spawn")
        if context.get_start_method() == "forkserver":
            # The server imports the games once; each worker is forked from it, ready.
            context.set_forkserver_preload(["launcher.cli.worker", play_games.__module__,
                                            getattr(play, "func", play).__module__])
        pool = ProcessPoolExecutor(min(jobs, len(chunks)), mp_context=context,
                                   initializer=_quiet_worker)
    summary = None
    try:
        if pool is not None:
            # (``map`` submits every chunk at once: a worker that dies at its start breaks
            # the pool while later chunks are still being submitted.)
            with _safe_path():  # every process starts inside this call
                results = pool.map(play, *zip(*chunks, strict=True))
        for (start, stop), part in zip(chunks, results, strict=True):
            summary = part if summary is None else summary.merge(part)
            if progress is not None:
                progress(stop - start)
    except BrokenProcessPool as exc:
        raise LauncherError(f"a worker process died ({exc}); "
                            "--jobs 1 plays every game in this process") from None
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return summary


def play_chunk(game: str, run: Run, start: int, stop: int) -> Any:
    """Games ``start`` to ``stop - 1`` of ``run`` of the game named ``game`` (a worker's task:
    it finds the game in the registry, so only names and options cross to it)."""
    return GAMES[game].play(run, start, stop)


def simulate(game: str, run: Run, games: int, jobs: int = 1,
             progress: Callable[[int], object] | None = None) -> Any:
    """Play ``games`` whole games of ``game`` on ``jobs`` processes; every random choice
    follows from ``run.seed`` and the game's index (``game_seed``), so ``jobs`` never changes
    the summary."""
    return play_games(functools.partial(play_chunk, game, run), games, jobs, progress)


def progress_for(args: argparse.Namespace, total: int, label: str) -> RichBar | Progress | None:
    return progress_bar(total, label, forced=args.progress, disabled=args.no_progress,
                        terminal=sys.stderr.isatty())


def game_spec(name: str) -> GameSpec:
    spec = GAMES.get(name)
    if spec is None:
        raise ConfigError("--game", name, "must be one of " + ", ".join(GAMES))
    return spec


def listed(names: Sequence[str]) -> str:
    """``a, b and c``."""
    return " and ".join([", ".join(names[:-1]), names[-1]]) if len(names) > 1 else names[0]


def cmd_simulate(args: argparse.Namespace) -> int:
    spec = game_spec(args.game)
    if args.variant and not spec.variants:
        raise ConfigError("--variant", args.variant, "is for --game " + listed(
            [n for n, g in GAMES.items() if g.variants]))
    if args.deal_with_launcher and spec.launcher_deal:
        dealt = listed([n for n, g in GAMES.items() if g.launcher_deal is None])
        raise ConfigError("--game", args.game, f"--deal-with-launcher is for {dealt} "
                                               f"({args.game}: {spec.launcher_deal})")
    if args.config and not spec.luck:
        raise ConfigError("--config", args.config, f"{spec.title} has no luck to configure")
    players = spec.default_players if args.players is None else args.players
    settings = config.load(args.config)
    bots = tuple(parse_bots(args.bots, players, spec.bots))
    variant = args.variant or next(iter(spec.variants), None)
    options = parse_rules(spec, args.rule, args.target, variant, Seats(players, bots))
    why = spec.refuse_seats(options, players)
    if why:
        raise ConfigError("--players", players, why)
    firmware = None
    if args.through_firmware:
        from launcher.sim.games import FirmwareLauncher

        firmware = FirmwareLauncher
    run = Run(options, bots, args.seed, settings, args.check, args.deal_with_launcher,
              firmware, variant or "")
    bar = progress_for(args, args.games, "simulate")
    log = logging.getLogger("launcher")
    level = log.level
    if not getattr(args, "verbose", False):
        # The firmware logs every event at INFO; thousands of games would drown the summary.
        log.setLevel(logging.WARNING)
    try:
        summary = simulate(spec.name, run, args.games, args.jobs, bar.update if bar else None)
    finally:
        log.setLevel(level)
        if bar:
            bar.close()
    print(summary.format(spec.heading(run)))
    return _firmware_faults(summary.faults) if args.through_firmware else 0


def _firmware_faults(faults: Counter[str]) -> int:
    """Print the ``firmware faults`` line of a ``--through-firmware`` run: 1 if any."""
    total = sum(faults.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(faults.items()))
    print(f"firmware faults: {total}" + (f" ({detail})" if detail else ""))
    return 1 if total else 0


# --- registration ---------------------------------------------------------------------------


def common_options(p: argparse.ArgumentParser, games: int, table_games: bool) -> None:
    """The options ``simulate`` and ``tune`` share; ``table_games``: the UNO games and gin
    too (simulate), not only UNO Flip Attack (tune)."""
    p.add_argument("--players", type=whole_number(2), default=None if table_games else 4,
                   help="players at the table (default 4" + ("; gin 2)" if table_games else ")"))
    p.add_argument("--games", type=whole_number(1), default=games,
                   help=f"whole games, each to the target score (default {games})")
    p.add_argument("--seed", type=whole_number(), default=1,
                   help="seed of every random choice (default 1)")
    p.add_argument("--bots", default="heuristic,random",
                   help="bots by seat, repeated to fill the table: "
                        f"{', '.join(GAMES['flip-attack'].bots)}"
                        + ("; the UNO games also random-play" if table_games else "")
                        + " (default heuristic,random)")
    p.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE",
                   help="a house rule (see docs/games.md: GameOptions for flip-attack"
                        + (", UnoOptions for the UNO games, GinRules for gin"
                           if table_games else "")
                        + "); repeatable")
    p.add_argument("--progress", action="store_true",
                   help="show the progress bar even when stderr is not a terminal")
    p.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    p.add_argument("--jobs", type=whole_number(1), default=default_jobs(), metavar="N",
                   help="processes playing games at once (default: every core, here "
                        f"{default_jobs()}); the results are the same for any N")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``simulate`` to the ``launcher`` command."""
    sim = verb(
        subparsers, "simulate", help="play whole games (UNO Flip Attack, UNO, UNO Splash, UNO "
                                     "Flip, Gin Rummy) with bots and print statistics",
        description="Play whole games with bot players, the launcher drawing the cards (its "
        "luck model, or with --through-firmware the firmware on the simulated launcher), and "
        "print statistics: turns, presses, shots, flips and reloads per hand, wins by bot. "
        "Every random choice follows from --seed and the game's number, so a run gives the "
        "same summary for any --jobs. Rules, bots and figures: docs/games.md.",
        examples=["launcher simulate --players 4 --games 1000",
                  "launcher simulate --through-firmware --games 20   # through the pins",
                  "launcher simulate --game uno --rule hand_size=5",
                  "launcher simulate --game gin --variant oklahoma --games 200"],
        exit_status="0 done, 1 a firmware fault in a --through-firmware game (or a worker "
        "process died), 2 a bad option, rule or config value (one line naming it), 130 "
        "Ctrl-C.")
    common_options(sim, 100, table_games=True)
    sim.add_argument("--game", default="flip-attack", choices=list(GAMES),
                     help="; ".join(f"{k}: {v.help}" for k, v in GAMES.items()))
    variants = [(g.name, v) for g in GAMES.values() for v in g.variants]
    sim.add_argument("--variant", choices=[v for _, v in variants], default=None,
                     help="the variant of " + listed(sorted({g for g, _ in variants}))
                          + f" (default {variants[0][1]}); see docs/games.md")
    sim.add_argument("--check", action="store_true",
                     help="check card conservation after every step (slower; for debugging)")
    sim.add_argument("--deal-with-launcher", action="store_true",
                     help="table games: deal the hands with the launcher's 'deal N' profile")
    sim.add_argument("--config", metavar="FILE", help="TOML config whose luck to use")
    sim.add_argument("--target", type=whole_number(1),
                     help="points that win a game (default 500)")
    sim.add_argument("--through-firmware", action="store_true",
                     help="draw through the firmware on the simulated launcher (pins and "
                          "manual reactor) instead of the direct luck model; exit 1 on a fault")
    sim.set_defaults(func=cmd_simulate)

